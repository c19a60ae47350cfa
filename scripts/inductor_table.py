"""The rows of docs/backend.md's Inductor tables (scripts/bench-table.sh, bench-train-table.sh): one
`tcprof bench --json` and one bench/inductor_bench.py --json of the same model, side by side.

  inductor_table.py header MODES [--train]
  inductor_table.py row NAME TCPROF_JSON INDUCTOR_JSON LOADS_FILE

Each time is shown with its ratio to its own eager (LibTorch's for tcprof, PyTorch's for
Inductor), both measured round-robin in their own process; "vs fastest Inductor" is the fastest
Inductor mode's time over tcprof's (above 1x: tcprof is faster), the issue's target.
"""
import json
import sys

# Inductor's output may differ from eager by its own reassociation; beyond this it is flagged.
OUTPUT_TOLERANCE = 1e-3


def header(modes, train):
    unit = "ms/step" if train else "ms"
    cols = ["model"] + (["optimizer"] if train else []) + [f"eager LibTorch {unit}", f"tcprof {unit}",
                                                           f"eager PyTorch {unit}"]
    cols += [f"Inductor {m} {unit}" for m in modes]
    cols += ["vs fastest Inductor", "cold compile s: tcprof · " + " · ".join(modes),
             "warm start s: tcprof · " + " · ".join(modes)]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))


def row(name, tcprof_path, inductor_path, loads_path, optimizer=None):
    t = json.load(open(tcprof_path))
    i = json.load(open(inductor_path))
    modes = i["modes"]
    cells = [name] + ([optimizer] if optimizer else [])
    cells += [f"{t['eager_ms']:.2f}", f"{t['compiled_ms']:.2f} ({t['eager_ms'] / t['compiled_ms']:.2f}x)",
              f"{i['eager_ms']:.2f}"]
    for mode, m in modes.items():
        flag = ""
        error = m.get("max_relative_error", m.get("first_loss_relative_error", 0.0))
        if error > OUTPUT_TOLERANCE:
            flag = f" (output off by {error:.1e})"
            print(f"inductor_table: {name} under Inductor {mode} differs from eager by {error:.2e}", file=sys.stderr)
        cells.append(f"{m['ms']:.2f} ({m['speedup']:.2f}x){flag}")
    fastest_mode = min(modes, key=lambda k: modes[k]["ms"])
    ratio = modes[fastest_mode]["ms"] / t["compiled_ms"]
    verdict = "faster" if ratio >= 1 else "**slower**"
    cells.append(f"{ratio:.2f}x ({verdict} than {fastest_mode})")
    cells.append(" · ".join([f"{t['compile_s']:.2f}"] + [f"{m['cold_compile_s']:.1f}" for m in modes.values()]))
    cells.append(" · ".join([f"{t['warm_compile_s']:.2f}"] + [f"{m['warm_start_s']:.2f}" for m in modes.values()]))
    print("| " + " | ".join(cells) + " |")
    with open(loads_path, "a") as f:
        print(f'{max(j.get(k, 0) for j in (t, i) for k in ("load_average_before", "load_average_after")):.2f}', file=f)


def main(argv):
    if len(argv) >= 2 and argv[0] == "header":
        header([m for m in argv[1].split(",") if m], "--train" in argv)
    elif len(argv) in (5, 6) and argv[0] == "row":
        row(argv[1], argv[2], argv[3], argv[4], argv[5] if len(argv) == 6 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
