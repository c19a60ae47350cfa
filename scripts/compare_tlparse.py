#!/usr/bin/env python3
"""tcprof import beside tlparse on the same TORCH_TRACE logs (`make compare-tlparse`).

    python3 scripts/compare_tlparse.py --tcprof BUILD/cli/tcprof --tlparse TLPARSE [--markdown] LOG...

For every log (plain or .gz; a folder means each log in it) both tools run: tlparse writes its
report folder, whose compile_directory.json lists each compile id and its artifacts; tcprof imports
the log into a database, which is read with sqlite3. The counts both report are compared:

  compiles        distinct frame/compile ids (tlparse: [F/C] and [F/C_A] keys; tcprof: compiles)
  restarts        compile ids Dynamo restarted after a graph break ([F/C_A], A > 0; attempt > 0)
  graph_breaks    dynamo_graph_break_reason artifacts / graph_breaks rows
  recompiles      compile ids F/C with C > 0 / recompiles rows
  guard_failures  reasons in the recompile_reasons artifacts / guard_failures rows
  graphs          dynamo_output_graph artifacts / graphs of kind dynamo

A difference is either explained (EXPLAINED below, documented in docs/import.md) or fails the run
(exit 1). tlparse reads plain text only, so a .gz log is unpacked for it first.
"""
import argparse, gzip, json, os, re, shutil, sqlite3, subprocess, sys, tempfile

COUNTS = ["compiles", "restarts", "graph_breaks", "recompiles", "guard_failures", "graphs"]

# (log name pattern, count) -> why the two differ. Each is argued in docs/import.md.
SESSIONS = ("tlparse files the compile ids that start again after torch._dynamo.reset() under the first "
            "session's (one [0/0] holding both); tcprof makes each session a run of its own")
EXPLAINED = {
    (r"reset", "compiles"): SESSIONS,
    (r"regional", "compiles"): SESSIONS,  # the regional fixture resets between its two halves
}

COMPILE_KEY = re.compile(r"^\[(?:\d+/)?(\d+)/(\d+)(?:_(\d+))?\]$")


def logs_of(path):
    """A log, or every log under a folder (recursively: the fixtures keep one folder per mode)."""
    if not os.path.isdir(path):
        return [path]
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith((".log", ".log.gz"))]
    return found


def tlparse_counts(tlparse, log, work):
    plain = log
    if log.endswith(".gz"):
        plain = os.path.join(work, os.path.basename(log)[:-3])
        with gzip.open(log, "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
    out = os.path.join(work, "tl_" + os.path.basename(plain))
    run = subprocess.run([tlparse, plain, "-o", out, "--no-browser", "--overwrite"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"tlparse failed on {log}: {run.stderr.strip().splitlines()[-1:]}")
    with open(os.path.join(out, "compile_directory.json")) as f:
        directory = json.load(f)
    ids, restarted = set(), set()
    c = dict.fromkeys(COUNTS, 0)
    for key, entry in directory.items():
        m = COMPILE_KEY.match(key)
        if not m:
            continue
        fc = (int(m.group(1)), int(m.group(2)))
        ids.add(fc)
        if m.group(3) and int(m.group(3)) > 0:
            restarted.add(fc)
        for a in entry.get("artifacts", []):
            name = a["name"]
            if name.startswith("dynamo_graph_break_reason"):
                c["graph_breaks"] += 1
            elif name.startswith("dynamo_output_graph"):
                c["graphs"] += 1
            elif name.startswith("recompile_reasons"):
                with open(os.path.join(out, a["url"]), errors="replace") as f:
                    text = f.read()
                try:
                    reasons = json.loads(text)
                except ValueError:
                    reasons = text  # 2.15 writes the reason lines themselves
                if isinstance(reasons, str):
                    reasons = [l for l in re.split(r"\n(?=\d+/\d+: )", reasons.strip()) if l]
                c["guard_failures"] += len(reasons)
    c["compiles"] = len(ids)
    c["restarts"] = len(restarted)
    c["recompiles"] = sum(1 for f, cc in ids if cc > 0)
    return c


def tcprof_counts(tcprof, log, work):
    db = os.path.join(work, os.path.basename(log) + ".db")
    if os.path.exists(db):
        os.remove(db)
    run = subprocess.run([tcprof, "import", log, "--db", db, "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"tcprof import failed on {log}: {run.stderr.strip()}")
    con = sqlite3.connect(db)
    one = lambda sql: con.execute(sql).fetchone()[0]
    c = {
        "compiles": one("SELECT COUNT(*) FROM compiles"),
        "restarts": one("SELECT COUNT(*) FROM compiles WHERE attempt > 0"),
        "graph_breaks": one("SELECT COUNT(*) FROM graph_breaks"),
        "recompiles": one("SELECT COUNT(*) FROM recompiles"),
        "guard_failures": one("SELECT COUNT(*) FROM guard_failures"),
        "graphs": one("SELECT COUNT(*) FROM graphs WHERE kind = 'dynamo'"),
    }
    c["runs"] = one("SELECT COUNT(*) FROM runs")
    con.close()
    return c


def explanation(log, count):
    for (pattern, what), why in EXPLAINED.items():
        if what == count and re.search(pattern, log):
            return why
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcprof", required=True)
    ap.add_argument("--tlparse", default=shutil.which("tlparse") or "tlparse")
    ap.add_argument("--markdown", action="store_true", help="print the table for docs/import.md")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    rows, unexplained = [], 0
    with tempfile.TemporaryDirectory(prefix="tcprof-tlparse-") as work:
        for path in args.paths:
            for log in logs_of(path):
                tl = tlparse_counts(args.tlparse, log, work)
                tc = tcprof_counts(args.tcprof, log, work)
                diffs = []
                for k in COUNTS:
                    if tl[k] != tc[k]:
                        why = explanation(log, k)
                        if why is None:
                            unexplained += 1
                            why = "NOT EXPLAINED"
                        diffs.append(f"{k}: {why}")
                rows.append((log, tl, tc, diffs))
    name = lambda log: os.path.basename(os.path.dirname(log)) + "/" + os.path.basename(log) \
        if os.path.basename(log).startswith("dedicated_log") else os.path.basename(log)
    if args.markdown:
        print("| log | " + " | ".join(COUNTS) + " | differences |")
        print("| --- |" + " --- |" * (len(COUNTS) + 1))
        for log, tl, tc, diffs in rows:
            cells = [str(tc[k]) if tl[k] == tc[k] else f"**{tl[k]} / {tc[k]}**" for k in COUNTS]
            print(f"| `{name(log)}` | " + " | ".join(cells) + " | " + ("; ".join(diffs) or "none") + " |")
    else:
        for log, tl, tc, diffs in rows:
            print(f"{name(log)}: " + ", ".join(f"{k} {tl[k]}" + ("" if tl[k] == tc[k] else f"/{tc[k]}") for k in COUNTS)
                  + f" (tlparse/tcprof; tcprof runs {tc['runs']})")
            for d in diffs:
                print("    differs in " + d)
    print(f"{len(rows)} logs, {sum(len(r[3]) for r in rows)} differences, {unexplained} not explained",
          file=sys.stderr)
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
