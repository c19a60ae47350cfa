"""torch.compile (Inductor's C++/OpenMP backend) on the Python modules tcprof's samples are scripted
from, timed the way `tcprof bench` times tcprof: the same inputs and seeds, the same threads,
calls round-robin (eager, then each mode, again and again) so a slow spell of the machine slows
all alike, medians, each mode as a ratio to PyTorch eager measured in this same process. Also the
cold compile of each mode (the first call of a new process, with an empty Inductor cache) and its
warm start (the first call of another new process reading that cache, as a user's second run).

Run it with the Python whose LibTorch tcprof was built against (scripts/bench-table.sh does), so
both sides run the same ATen:

  inductor_bench.py MODEL --threads N [--iters N] [--modes default,max-autotune,...] [--train] [--json]

MODEL is gpt (samples/models/gpt.py) or a torchvision classifier (samples/models/vision.py). The
modes: default, max-autotune, and either with +freezing (Inductor's freezing: weights become
constants, prepacked for oneDNN/MKL, as tcprof does with a module's weights; what Intel's CPU
guides tell users to turn on for inference). --train times the
training step `tcprof bench --train` times: forward, cross-entropy, backward and Adam or SGD (lr 0.01),
with the model compiled and the optimizer step compiled (PyTorch's compiled-optimizer recipe).
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "models"))

# Inductor reads its cache folder from the environment when it first needs it: each mode gets a
# fresh one (set before torch is imported for the first, changed per mode below).
_CACHE_ROOT = tempfile.mkdtemp(prefix="tcprof-inductor-bench-")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(_CACHE_ROOT, "machinery"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# The inputs `tcprof bench` is given for each model in scripts/bench-table.sh.
GPT_BATCH, GPT_SEQ, GPT_VOCAB = 4, 128, 512


def usage_error(message):
    """Bad input: one message naming the problem and the fix, exit 2."""
    print(f"inductor_bench: {message}", file=sys.stderr)
    sys.exit(2)


def build_model(name):
    torch.manual_seed(0)
    if name == "gpt":
        import gpt
        return gpt.GPT().eval()
    import torchvision
    builder = getattr(torchvision.models, name, None)
    if not callable(builder) or name.startswith("_"):
        usage_error(f"no model '{name}': use gpt or a torchvision classifier (resnet18, vit_b_16, ...)")
    return builder().eval()


def make_inputs(name, train):
    gen = torch.Generator().manual_seed(0)
    if name == "gpt":
        idx = torch.randint(0, GPT_VOCAB, (GPT_BATCH, GPT_SEQ), generator=gen)
        target = torch.randint(0, GPT_VOCAB, (GPT_BATCH, GPT_SEQ), generator=gen)
        return (idx,), target
    x = torch.randn(1, 3, 224, 224, generator=gen)
    return (x,), torch.randint(0, 1000, (1,), generator=gen)


def compile_options(mode):
    """torch.compile's `options` for one mode (the mode's own, list_mode_options), with Inductor's
    global freezing switch set for it. Freezing takes effect only as the global (given in `options`
    alone, resnet18 ran 43 ms instead of 25): it is set here, just before the compile the first
    call makes, and is also put in `options` so that each mode's backend compares unequal to the
    others'. Dynamo reuses a compiled frame for a backend whose options compare equal, so a frozen
    mode compiled after its unfrozen twin in one process silently ran the twin's code."""
    import torch._inductor
    import torch._inductor.config as inductor_config
    freezing = mode.endswith("+freezing")
    inductor_config.freezing = freezing
    options = dict(torch._inductor.list_mode_options(mode.split("+")[0]))
    options["freezing"] = freezing
    return options


def use_cache_dir(path):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path


def warm_machinery():
    """Compile and run a tiny function first: the first torch.compile of a process imports Dynamo
    and Inductor (seconds), which is not the model's compile; tcprof's libraries are loaded before
    its bench starts timing too."""
    use_cache_dir(os.path.join(_CACHE_ROOT, "machinery"))
    f = torch.compile(lambda a: (a * 2).relu().sum())
    f(torch.randn(8))


def max_relative_error(got, want):
    got, want = got.detach().float(), want.detach().float()
    return ((got - want).abs().max() / want.abs().max().clamp_min(1e-12)).item()


def first_tensor(out):
    return out if torch.is_tensor(out) else out[0]


# ------------------------------------------------------------------ inference

def compile_inference(model, mode, cache_dir, inputs):
    """torch.compile + the first call under no_grad, with `cache_dir` as Inductor's cache; returns
    the compiled module, its first output and the seconds it took."""
    use_cache_dir(cache_dir)
    start = time.perf_counter()
    compiled = torch.compile(model, options=compile_options(mode))
    with torch.no_grad():
        out = compiled(*inputs)
    return compiled, out, time.perf_counter() - start


def first_call_in_a_new_process(args, mode, cache_dir):
    """The seconds the first call of a new process takes to compile and run `mode` with `cache_dir`
    as Inductor's cache: cold when the folder is empty, a warm start (its FX-graph and AOTAutograd
    caches, as a user's second run) once it is not. A process of its own for each: within one
    process Inductor also keeps what it compiled in memory, which would make a later mode's cold
    compile look cheaper than it is."""
    cmd = [sys.executable, os.path.abspath(__file__), args.model, "--threads", str(args.threads),
           "--first-call", mode, "--cache-dir", cache_dir]
    if args.train:
        cmd += ["--train", "--optimizer", args.optimizer]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(args.threads)))
    if done.returncode != 0:
        raise SystemExit(f"inductor_bench: the first call of {args.model} under {mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["first_call_s"]


def cold_and_warm(args, mode, cache_dir):
    cold = first_call_in_a_new_process(args, mode, cache_dir)
    return {"cold_compile_s": cold, "warm_start_s": first_call_in_a_new_process(args, mode, cache_dir)}


def time_round_robin(executors, iters, warmup):
    samples = [[] for _ in executors]
    for _ in range(warmup):
        for run in executors:
            run()
    for _ in range(iters):
        for i, run in enumerate(executors):
            start = time.perf_counter_ns()
            run()
            samples[i].append(time.perf_counter_ns() - start)
    return [statistics.median(s) / 1e6 for s in samples]


def bench_inference(args, modes):
    model = build_model(args.model)
    inputs, _ = make_inputs(args.model, False)
    with torch.no_grad():
        reference = first_tensor(model(*inputs))
    result = {"model": args.model, "threads": args.threads, "iters": args.iters, "train": False,
              "torch": torch.__version__, "modes": {}}
    compiled = {}
    for mode in modes:
        cache_dir = os.path.join(_CACHE_ROOT, mode.replace("+", "-"))
        result["modes"][mode] = cold_and_warm(args, mode, cache_dir)
        # The timed module compiles from that cache; each mode on its own copy (freezing turns the
        # copy's weights into constants).
        fn, out, _ = compile_inference(copy.deepcopy(model), mode, cache_dir, inputs)
        result["modes"][mode]["max_relative_error"] = max_relative_error(first_tensor(out), reference)
        compiled[mode] = fn

    def eager():
        with torch.no_grad():
            model(*inputs)

    def runner(fn):
        def run():
            with torch.no_grad():
                fn(*inputs)
        return run

    times = time_round_robin([eager] + [runner(compiled[m]) for m in modes], args.iters, args.warmup)
    result["eager_ms"] = times[0]
    for mode, ms in zip(modes, times[1:]):
        result["modes"][mode].update({"ms": ms, "speedup": times[0] / ms})
    return result


# ------------------------------------------------------------------ training

class TrainStep:
    """One training step as `tcprof bench --train` takes it: zero the gradients, forward,
    cross-entropy, backward, Adam or SGD (lr 0.01, PyTorch's defaults otherwise, as tcprof's)."""

    def __init__(self, model, optimizer, mode=None):
        self.model = model
        for p in model.parameters():
            p.requires_grad_(True)
        make = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
        self.optimizer = make(model.parameters(), lr=0.01)
        options = None if mode is None else compile_options(mode)
        self.forward = model if mode is None else torch.compile(model, options=options)
        opt_step = self.optimizer.step
        self.optimizer_step = opt_step if mode is None else torch.compile(opt_step, options=options)

    def __call__(self, inputs, target):
        self.optimizer.zero_grad(set_to_none=True)
        logits = self.forward(*inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1))
        loss.backward()
        self.optimizer_step()
        return loss.item()


def compile_training(model, optimizer, mode, cache_dir, inputs, target):
    use_cache_dir(cache_dir)
    start = time.perf_counter()
    step = TrainStep(model, optimizer, mode)
    loss = step(inputs, target)
    return step, loss, time.perf_counter() - start


def bench_training(args, modes):
    if any(m.endswith("+freezing") for m in modes):
        usage_error("freezing is for inference (it makes the weights constants); --train takes default and max-autotune")
    model = build_model(args.model)
    inputs, target = make_inputs(args.model, True)
    eager = TrainStep(copy.deepcopy(model), args.optimizer)
    result = {"model": args.model, "threads": args.threads, "iters": args.iters, "train": True, "optimizer": args.optimizer,
              "torch": torch.__version__, "modes": {}}
    steps = {}
    first_eager = eager(inputs, target)
    for mode in modes:
        cache_dir = os.path.join(_CACHE_ROOT, "train-" + mode)
        result["modes"][mode] = cold_and_warm(args, mode, cache_dir)
        step, loss, _ = compile_training(copy.deepcopy(model), args.optimizer, mode, cache_dir, inputs, target)
        steps[mode] = step
        result["modes"][mode]["first_loss_relative_error"] = abs(loss - first_eager) / max(1.0, abs(first_eager))
    times = time_round_robin([lambda: eager(inputs, target)] + [(lambda s: lambda: s(inputs, target))(steps[m])
                                                               for m in modes], args.iters, args.warmup)
    result["eager_ms"] = times[0]
    for mode, ms in zip(modes, times[1:]):
        result["modes"][mode].update({"ms": ms, "speedup": times[0] / ms})
    return result


# ------------------------------------------------------------------ the first-call child

def first_call_child(args):
    warm_machinery()
    model = build_model(args.model)
    inputs, target = make_inputs(args.model, args.train)
    if args.train:
        _, _, seconds = compile_training(model, args.optimizer, args.first_call, args.cache_dir, inputs, target)
    else:
        _, _, seconds = compile_inference(model, args.first_call, args.cache_dir, inputs)
    print(json.dumps({"first_call_s": seconds}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--modes", default="default,max-autotune")
    p.add_argument("--train", action="store_true")
    p.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    p.add_argument("--json", action="store_true")
    p.add_argument("--first-call", help=argparse.SUPPRESS)
    p.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.threads < 1 or args.iters < 1:
        usage_error("--threads and --iters must be at least 1")
    modes = [m for m in args.modes.split(",") if m]
    known = {"default", "max-autotune", "default+freezing", "max-autotune+freezing"}
    if not modes or set(modes) - known:
        usage_error(f"--modes takes some of {', '.join(sorted(known))}")
    if not hasattr(torch, "compile"):
        usage_error(f"torch {torch.__version__} has no torch.compile; run it with the Python of a PyTorch 2 wheel "
                    "(TORCH_PYTHON)")
    torch.set_num_threads(args.threads)
    torch._dynamo.config.cache_size_limit = 64  # several modes of one module in one process
    if args.first_call:
        first_call_child(args)
        return
    warm_machinery()
    load_before = os.getloadavg()[0]
    result = bench_training(args, modes) if args.train else bench_inference(args, modes)
    result.update({"load_average_before": load_before, "load_average_after": os.getloadavg()[0]})
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"torch.compile {args.model} ({'training step' if args.train else 'inference'}, {args.threads} thread(s), "
          f"median of {args.iters}, torch {torch.__version__})")
    print(f"  {'executor':<32} {'ms/call':>10} {'vs eager':>9} {'cold s':>8} {'warm s':>8}")
    print(f"  {'PyTorch eager':<32} {result['eager_ms']:>10.3f} {1.0:>8.2f}x")
    for mode, m in result["modes"].items():
        print(f"  {'Inductor ' + mode:<32} {m['ms']:>10.3f} {m['speedup']:>8.2f}x {m['cold_compile_s']:>8.2f} "
              f"{m['warm_start_s']:>8.2f}")


if __name__ == "__main__":
    try:
        main()
    finally:
        import shutil
        shutil.rmtree(_CACHE_ROOT, ignore_errors=True)
