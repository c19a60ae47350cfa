"""The GPU check's one summary (scripts/gpu-check.sh): every step's status and time, the timings
side by side, and each of the GPU issues' targets with what this run measured and whether it met it.

usage: gpu_check_summary.py OUT TORCH_VERSION TORCH_CUDA GPU SECONDS

Reads what the steps left in OUT (steps.tsv, the benches' JSON, the fuzz shards' logs) and writes
OUT/summary.json and OUT/summary.txt, then prints the text. Standard library only: it runs with the
GPU machine's Python and with Debian's in the tests.
"""
import glob
import json
import os
import re
import sys

# The targets the GPU issues set (docs/gpu.md, docs/cuda_backend.md). Each is checked only from what
# this run measured; a figure a step did not leave is "not measured", never met.
# Each benched model: its name in torch_timings.json (gpu_check_models.py), as the targets name it,
# and the speedup over eager LibTorch the cuda backend is to reach (same process, CUDA events).
MODELS = {
    "gpt": ("gpt_gpu", "GPT 8x256", 1.25),  # the sample scaled up as on the H200: 6 blocks, d 512
    "gpt_sample": ("gpt", "the GPT sample 8x256", 1.25),
    "resnet18": ("resnet18", "ResNet18 b32", 1.45),
}
COLD_COMPILE_S = 3.0
WARM_BEYOND_EAGER_S = 0.3
RECORDING_COST_PERCENT = {"summary": 3.0, "full": 10.0}  # over --profile off, the call's device time
FUSED_ADAM_MS = 0.3  # the GPT's 27M parameters, tcprof's CUDA kernel alone
FUZZ_CASES = 2000


def load(out, name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_steps(out):
    steps = []
    with open(os.path.join(out, "steps.tsv")) as f:
        for line in f:
            name, status, secs = line.rstrip("\n").split("\t")
            steps.append({"step": name, "status": status, "seconds": int(secs)})
    return steps


def model_timings(out, model, torch_side):
    row = dict((torch_side.get("models") or {}).get(MODELS[model][0], {}))
    cuda = load(out, f"bench_{model}_cuda.json")
    if cuda:  # eager LibTorch, TorchScript optimised and the cuda backend: medians of one process
        row["libtorch_eager_ms"] = cuda.get("eager_ms")
        row["torchscript_optimized_ms"] = (cuda.get("baselines") or {}).get("torchscript_optimized")
        row["tcprof_cuda_ms"] = cuda.get("compiled_ms")
        row["tcprof_cuda_speedup"] = cuda.get("speedup")
        row["tcprof_cuda_compile_s"] = cuda.get("compile_s")
        row["tcprof_cuda_warm_beyond_eager_s"] = cuda.get("warm_beyond_eager_s")
        if row.get("torch_compile_ms") and cuda.get("compiled_ms"):
            row["tcprof_cuda_vs_torch_compile"] = row["torch_compile_ms"] / cuda["compiled_ms"]
    for path in sorted(glob.glob(os.path.join(out, f"bench_{model}_cuda_launch_*.json"))):
        swept = load(out, os.path.basename(path))  # TCPROF_CUDA_LAUNCH: the same run at other launch sizes
        if swept:
            row[os.path.basename(path)[len(f"bench_{model}_cuda_"):-5] + "_ms"] = swept.get("compiled_ms")
    # The same bench with one part changed: vectors and row registers off (TCPROF_CUDA_OFF), every
    # kernel at the default launch sizes, ReLUs and residual adds inside cuDNN's convolutions.
    for variant in ("features_off", "untuned", "conv_epilogues"):
        other = load(out, f"bench_{model}_cuda_{variant}.json")
        if other:
            row[f"tcprof_cuda_{variant}_ms"] = other.get("compiled_ms")
            row[f"tcprof_cuda_{variant}_speedup"] = other.get("speedup")
    # What recording costs over --profile off (one process, CUDA events).
    # The mean carries the calls a sampling summary records; the median is a typical call.
    for suffix in ("", "_every_call"):
        cost = load(out, f"recording_cost_{model}{suffix}.json")
        for m in (cost or {}).get("recording_cost", []):
            key = m["profile"].split(",")[0] + ("_host_only" if "host" in m["profile"] else "") + suffix
            row[f"profile_{key}_ms"] = m["ms_per_call"]
            if not key.startswith("off"):
                row[f"recording_cost_{key}_percent"] = m["percent_over_off"]
                row[f"recording_cost_{key}_mean_percent"] = m.get("mean_percent_over_off")
            row[f"rows_per_call_{key}"] = m["rows_per_call"]
            if "gpu_timed_calls_recorded" in m:
                row[f"gpu_timed_calls_recorded_{key}"] = m["gpu_timed_calls_recorded"]
    return row


def read_timings(out):
    torch_side = load(out, "models/torch_timings.json") or {}
    timings = {}
    for model in MODELS:
        row = model_timings(out, model, torch_side)
        if row:
            timings[model] = row
    vision = {}
    for path in sorted(glob.glob(os.path.join(out, "vision", "*.json"))):
        v = load(out, os.path.join("vision", os.path.basename(path)))
        if v:
            vision[os.path.basename(path)[:-5]] = {"eager_ms": v.get("eager_ms"), "tcprof_cuda_ms": v.get("compiled_ms"),
                                                   "speedup": v.get("speedup")}
    if vision:
        timings["vision"] = vision
    train = load(out, "bench_train_gpt.json")
    if train:
        opt = train.get("optimizer") or {}
        step = {"eager_step_ms": train.get("eager_ms"), "tcprof_step_ms": train.get("compiled_ms"),
                "torch_optim_adam_ms": opt.get("eager_ms"), "fused_adam_ms": opt.get("compiled_ms"),
                "fused_optimizer": opt.get("compiled")}
        # Each optimizer kernel alone on the same parameters (tcprof's CUDA kernel, LibTorch's, torch::optim).
        for k in opt.get("kernels") or []:
            step[k["name"] + " alone ms"] = k["ms"]
        timings["gpt_train_step"] = step
    # The same step with the training graphs compiled by the cuda backend (forward and backward kernels).
    train_cuda = load(out, "bench_train_gpt_cuda.json")
    if train_cuda:
        fb = train_cuda.get("forward_backward") or {}
        timings["gpt_train_step_cuda_backend"] = {
            "eager_step_ms": train_cuda.get("eager_ms"), "tcprof_step_ms": train_cuda.get("compiled_ms"),
            "speedup": train_cuda.get("speedup"), "eager_forward_backward_ms": fb.get("eager_ms"),
            "tcprof_forward_backward_ms": fb.get("compiled_ms"), "cold_compile_s": train_cuda.get("compile_s"),
            "warm_start_s": train_cuda.get("warm_compile_s")}
    return timings


def read_ctest(out):
    log = os.path.join(out, "logs", "ctest.log")
    if not os.path.exists(log):
        return ""
    lines = [l.strip() for l in open(log, errors="replace") if "% tests passed" in l]
    return lines[-1] if lines else ""


def read_fuzz(out, folder="fuzz"):
    """fuzz_graphs --device cuda: the shards' summary lines added up (folder fuzz_backward: --backward)."""
    shards = sorted(glob.glob(os.path.join(out, folder, "shard-*.log")))
    if not shards:
        return None
    fuzz = {"shards": len(shards), "shards_finished": 0, "cases": 0, "mismatches": 0, "errors": 0, "invalid": 0}
    for path in shards:
        for line in open(path, errors="replace"):
            m = re.match(r"fuzz_graphs: (\d+) cases.*?: (\d+) mismatches, (\d+) errors, (\d+) invalid", line)
            if m:
                fuzz["shards_finished"] += 1
                for key, value in zip(("cases", "mismatches", "errors", "invalid"), m.groups()):
                    fuzz[key] += int(value)
                # --backward: how many cases ran a compiled backward (the rest fell back to LibTorch's).
                g = re.search(r"gradients: (\d+) cases through a compiled backward", line)
                if g:
                    fuzz["compiled_backward_cases"] = fuzz.get("compiled_backward_cases", 0) + int(g.group(1))
    seed_file = os.path.join(out, folder, "seed")
    if os.path.exists(seed_file):
        fuzz["seed"] = open(seed_file).read().strip()
    return fuzz


def vision_samples(out):
    return [os.path.basename(p)[:-3] for p in glob.glob(os.path.join(out, "models", "vision", "*.pt"))]


def verdict(issue, target, measured, met):
    """One target: `measured` is the figure as text (None: nothing measured it), `met` whether it meets it."""
    if measured is None:
        return {"issue": issue, "target": target, "measured": None, "verdict": "not measured"}
    return {"issue": issue, "target": target, "measured": measured, "verdict": "met" if met else "not met"}


def number(row, key):
    value = (row or {}).get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def check_targets(timings, fuzz, vision_samples=()):
    """`vision_samples`: the torchvision samples the models step saved (models/vision/*.pt)."""
    out = []
    for model, (_, name, target) in MODELS.items():
        row = timings.get(model) or {}
        speedup = number(row, "tcprof_cuda_speedup")
        out.append(verdict(33, f"{name}: the cuda backend >= {target:.2f}x eager LibTorch",
                           None if speedup is None else f"{speedup:.2f}x", speedup is not None and speedup >= target))
        vs = number(row, "tcprof_cuda_vs_torch_compile")
        out.append(verdict(33, f"{name}: faster than torch.compile",
                           None if vs is None else f"{vs:.2f}x torch.compile's speed", vs is not None and vs > 1.0))
        cold = number(row, "tcprof_cuda_compile_s")
        out.append(verdict(33, f"{name}: cold compile <= {COLD_COMPILE_S:g} s",
                           None if cold is None else f"{cold:.2f} s", cold is not None and cold <= COLD_COMPILE_S))
        warm = number(row, "tcprof_cuda_warm_beyond_eager_s")
        out.append(verdict(33, f"{name}: warm start <= {WARM_BEYOND_EAGER_S:g} s beyond the eager forward",
                           None if warm is None else f"{warm:.3f} s", warm is not None and warm <= WARM_BEYOND_EAGER_S))
    # Every sample the models step saved must have been timed: one that failed is not "never slower".
    vision = timings.get("vision") or {}
    timed = {n: v["speedup"] for n, v in vision.items() if number(v, "speedup") is not None}
    expected = set(vision_samples) | set(vision)
    missing = sorted(expected - set(timed))
    slower = sorted((n, s) for n, s in timed.items() if s < 1.0)
    said = [f"{len(timed)} of {len(expected)} timed"]
    if slower:
        said.append("slower: " + ", ".join(f"{n} {s:.2f}x" for n, s in slower))
    if missing:
        said.append("not timed: " + ", ".join(missing))
    out.append(verdict(33, "every torchvision sample, f32 and bf16: never slower than eager",
                       "; ".join(said) if expected else None, bool(expected) and not slower and not missing))
    if fuzz is None or fuzz["shards_finished"] == 0:
        out.append(verdict(33, f"fuzz_graphs --backend cuda on the GPU: {FUZZ_CASES} cases, 0 mismatches", None, False))
    else:
        wrong = fuzz["mismatches"] + fuzz["errors"]
        out.append(verdict(33, f"fuzz_graphs --backend cuda on the GPU: {FUZZ_CASES} cases, 0 mismatches",
                           f"{fuzz['cases']} cases, {fuzz['mismatches']} mismatches, {fuzz['errors']} errors",
                           fuzz["cases"] >= FUZZ_CASES and wrong == 0))
    for model in ("gpt", "resnet18"):  # the models gpu-check.sh runs bench --recording-cost on
        row = timings.get(model) or {}
        name = MODELS[model][1]
        for profile, limit in RECORDING_COST_PERCENT.items():
            # The mean, where the bench gives one: a sampling summary pays its cost on some calls only.
            cost = number(row, f"recording_cost_{profile}_mean_percent")
            if cost is None:
                cost = number(row, f"recording_cost_{profile}_percent")
            out.append(verdict(32, f"{name}: --profile {profile} costs <= {limit:g}% over off",
                               None if cost is None else f"{cost:+.1f}%", cost is not None and cost <= limit))
    step = timings.get("gpt_train_step") or {}
    adam = number(step, "fused adam (tcprof CUDA) alone ms")
    out.append(verdict(32, f"GPT training step: the fused Adam <= {FUSED_ADAM_MS:g} ms",
                       None if adam is None else f"{adam:.3f} ms (tcprof's CUDA kernel alone)",
                       adam is not None and adam <= FUSED_ADAM_MS))
    return out


def write_text(f, summary):
    f.write("gpu-check: torch {torch} (CUDA {cuda}), GPU {gpu}, {seconds} s\n".format(**summary))
    if summary["ctest"]:
        f.write(f"ctest: {summary['ctest']}\n")
    for s in summary["steps"]:
        f.write(f"  {s['step']:<36} {s['status']:<44} {s['seconds']:>4} s\n")
    for key, flags in (("fuzz_gpu", ""), ("fuzz_gpu_backward", " --backward")):
        fuzz = summary.get(key)
        if fuzz:
            through = f", {fuzz['compiled_backward_cases']} through a compiled backward" if "compiled_backward_cases" in fuzz else ""
            f.write("fuzz_graphs --device cuda{flags} (seed {seed}): {cases} cases in {shards_finished} of {shards} shards, "
                    "{mismatches} mismatches, {errors} errors, {invalid} invalid".format(**{"seed": "?", "flags": flags, **fuzz}) +
                    through + "\n")
    for model, row in summary["timings"].items():
        if model == "vision":
            for name, v in row.items():
                if v.get("speedup"):
                    f.write(f"vision {name}: eager {v['eager_ms']:.3f} ms, tcprof cuda {v['tcprof_cuda_ms']:.3f} ms, {v['speedup']:.2f}x\n")
            continue
        f.write(f"{model}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()
                                         if isinstance(v, (int, float)) and not isinstance(v, bool)) + "\n")
    targets = summary["targets"]
    counts = {v: sum(t["verdict"] == v for t in targets) for v in ("met", "not met", "not measured")}
    f.write("targets: {met} met, {not met} not met, {not measured} not measured\n".format(**counts))
    for t in targets:
        measured = f": {t['measured']}" if t["measured"] else ""
        f.write(f"  [{t['verdict']}] issue {t['issue']}: {t['target']}{measured}\n")


def main(argv):
    if len(argv) != 6:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    out, torch_version, torch_cuda, gpu, seconds = argv[1:6]
    timings = read_timings(out)
    fuzz = read_fuzz(out)
    summary = {"torch": torch_version, "cuda": torch_cuda, "gpu": gpu, "seconds": int(seconds),
               "ctest": read_ctest(out), "steps": read_steps(out), "timings": timings, "fuzz_gpu": fuzz,
               "fuzz_gpu_backward": read_fuzz(out, "fuzz_backward"),
               "targets": check_targets(timings, fuzz, vision_samples(out))}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        write_text(f, summary)
    with open(os.path.join(out, "summary.txt")) as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
