#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU and a CUDA PyTorch (docs/gpu.md, "The GPU
# check"): builds tcprof against that PyTorch's LibTorch, runs ctest, runs the GPU samples (the
# H200's GPT, ResNet18 at batch 32, a bf16 training step), times them beside torch.compile on the
# same Python modules, and writes one summary (summary.txt and summary.json) in OUT. Each step has
# a time limit so that the whole check fits a short GPU lease (8 minutes on 16 cores). On a machine
# without a GPU every GPU step is reported as skipped and the rest runs.
#
#   scripts/gpu-check.sh [OUT]          OUT default build/gpu-check ($OUT on the device tool)
#   TORCH_PYTHON=python                 the Python whose torch to build against (default python3)
#   GPU_CHECK_KIT=.gpukit               Debian packages to unpack first (fmt, CLI11, nlohmann-json,
#                                       SQLite, GoogleTest: ../shared/gpu/prepare-kit.sh makes it)
#   GPU_CHECK_BUILD=/tmp/tcprof-gpu     the build folder (kept out of OUT: it is large)
#   GPU_CHECK_CTEST=0                   skip ctest (when it ran in an earlier call)
#   GPU_CHECK_TIME_SCALE=8              multiply every step's time limit (a 2-core machine)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$src/build/gpu-check}")
py=${TORCH_PYTHON:-python3}
build=${GPU_CHECK_BUILD:-/tmp/tcprof-gpu-check}
jobs=$(nproc)
mkdir -p "$out/logs"
: > "$out/steps.tsv"
started=$SECONDS

# step NAME LIMIT_S COMMAND...: runs COMMAND with a time limit, its output in logs/NAME.log.
step() {
  local name=$1 limit=$(( $2 * ${GPU_CHECK_TIME_SCALE:-1} ))
  shift 2
  local t0=$SECONDS status
  echo "== $name (limit ${limit}s)"
  timeout --kill-after=10 "$limit" "$@" > "$out/logs/$name.log" 2>&1
  case $? in
    0) status=passed ;;
    124|137) status="timed out after ${limit}s" ;;
    *) status=failed ;;
  esac
  printf '%s\t%s\t%s\n' "$name" "$status" "$((SECONDS - t0))" >> "$out/steps.tsv"
  echo "   $status in $((SECONDS - t0)) s"
  [[ $status == passed ]]
}
skip() {
  printf '%s\t%s\t0\n' "$1" "skipped: $2" >> "$out/steps.tsv"
  echo "== $1: skipped ($2)"
}

# --- the machine ---
torch_info=$("$py" -c 'import torch; print(torch.__version__, torch.version.cuda or "-", int(torch.cuda.is_available()))' 2>/dev/null)
if [[ -z $torch_info ]]; then
  echo "gpu-check: $py cannot import torch: name a Python with PyTorch in TORCH_PYTHON" >&2
  exit 2
fi
read -r torch_version torch_cuda has_gpu <<< "$torch_info"
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
no_gpu_reason="no CUDA device visible to PyTorch"
echo "gpu-check: torch $torch_version (CUDA $torch_cuda), GPU: ${gpu_name:-none}, $jobs cores"

# --- dependencies carried as .deb files (the GPU machine has no package registry) ---
prefix_path=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
if [[ -n ${GPU_CHECK_KIT:-} ]]; then
  deps=$build-deps
  mkdir -p "$deps"
  for deb in "$GPU_CHECK_KIT"/debs/*.deb; do dpkg -x "$deb" "$deps"; done
  prefix_path="$prefix_path;$deps/usr"
  export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
[[ -d /usr/local/cuda/lib64 ]] && export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# The CMake beside that Python (a venv's pip-installed one), else the PATH's. `py` may be a bare
# name: resolve it first, or its dirname is "." and ./cmake is the project's cmake/ folder.
py_dir=$(dirname "$(command -v "$py")")
cmake=$py_dir/cmake
[[ -f $cmake && -x $cmake ]] || cmake=cmake
cuda_args=()
[[ -d /usr/local/cuda ]] && cuda_args=(-DCUDAToolkit_ROOT=/usr/local/cuda)

# --- build and test ---
step configure 120 "$cmake" -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCPROF_BUILD_GUI=OFF \
  -DCMAKE_PREFIX_PATH="$prefix_path" -DTCPROF_TORCH_PYTHON="$py" "${cuda_args[@]}" &&
  step build 300 "$cmake" --build "$build" -j "$jobs"
built=$?
tcprof=$build/cli/tcprof
# --- the GPU samples, tcprof beside torch.compile ---
models=$out/models
step models 240 "$py" "$src/scripts/gpu_check_models.py" "$models" --iters 30
gpt_in='i64[8,256](0,8192)'
resnet_in='f32[32,3,224,224]'
db=$out/gpu-check.db
rm -f "$db"
gpu_steps=(run_gpt_off run_gpt_summary run_gpt_full run_resnet18_off run_resnet18_summary run_resnet18_full
  train_gpt bench_gpt bench_resnet18 bench_gpt_cuda bench_resnet18_cuda explain_gpt_cuda bench_train_gpt report)
if [[ $built -ne 0 ]]; then
  for s in "${gpu_steps[@]}"; do skip "$s" "the build failed"; done
elif [[ $has_gpu != 1 ]]; then
  for s in "${gpu_steps[@]}"; do skip "$s" "$no_gpu_reason"; done
else
  # Each sample in every profile mode: the steady medians are CUDA-event times of the same calls,
  # so summary/off and full/off are what recording costs (docs/gpu.md, "Per-call time").
  for mode in off summary full; do
    step "run_gpt_$mode" 60 bash -c "'$tcprof' run '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --iters 50 --profile $mode --db '$db' --json > '$out/run_gpt_$mode.json'"
    step "run_resnet18_$mode" 60 bash -c "'$tcprof' run '$models/resnet18.pt' --input '$resnet_in' --device cuda --iters 20 --profile $mode --db '$db' --json > '$out/run_resnet18_$mode.json'"
  done
  step train_gpt 90 bash -c "'$tcprof' train '$models/gpt_gpu_loss.pt' --input '$gpt_in' --input '$gpt_in' --loss model \
    --optimizer adam --steps 20 --device cuda --amp bf16 --db '$db' --json > '$out/train_gpt.json'"
  step bench_gpt 90 bash -c "'$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --iters 30 --db none --json > '$out/bench_gpt.json'"
  step bench_resnet18 90 bash -c "'$tcprof' bench '$models/resnet18.pt' --input '$resnet_in' --device cuda --iters 30 --db none --json > '$out/bench_resnet18.json'"
  # The cuda backend (generated kernels through NVRTC, SDPA, CUDA graph replay) beside eager.
  step bench_gpt_cuda 120 bash -c "'$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 30 --db none --json > '$out/bench_gpt_cuda.json'"
  step bench_resnet18_cuda 120 bash -c "'$tcprof' bench '$models/resnet18.pt' --input '$resnet_in' --device cuda --backend cuda --iters 30 --db none --json > '$out/bench_resnet18_cuda.json'"
  step explain_gpt_cuda 60 bash -c "'$tcprof' explain '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 3 --db none > '$out/explain_gpt_cuda.txt'"
  # The optimizer step: torch::optim's Adam op by op against the fused step (LibTorch _fused_adam_).
  step bench_train_gpt 120 bash -c "'$tcprof' bench '$models/gpt_gpu_loss.pt' --train --loss model --optimizer adam --input '$gpt_in' --input '$gpt_in' --device cuda --iters 20 --db none --json > '$out/bench_train_gpt.json'"
  step report 30 bash -c "'$tcprof' report --db '$db' > '$out/report.txt' && '$tcprof' report --db '$db' --json > '$out/report.json'"
fi
# fuzz_graphs --backend cuda runs its cases' kernels in emulation on the CPU; comparing them on
# the device needs fuzz_graphs --device cuda (the CUDA backend issue).
skip fuzz_gpu "fuzz_graphs has no --device yet (its --backend cuda runs in emulation)"

# --- ctest last: the GPU steps above are what only this machine can run, and ctest takes what
# time is left. One OpenMP thread per test: 16 tests at once, each with 16 threads, ran the CPU
# compiler tests 10x slower than on 2 cores. ---
if [[ $built -ne 0 ]]; then
  skip ctest "the build failed"
elif [[ ${GPU_CHECK_CTEST:-1} == 0 ]]; then
  skip ctest "GPU_CHECK_CTEST=0"
else
  ctest=$py_dir/ctest
  [[ -f $ctest && -x $ctest && $cmake != cmake ]] || ctest=ctest
  step ctest 270 env OMP_NUM_THREADS=1 "$ctest" --test-dir "$build" -j "$jobs" --timeout 150 --output-on-failure
fi

# --- one summary ---
"$py" - "$out" "$torch_version" "$torch_cuda" "${gpu_name:-none}" "$((SECONDS - started))" <<'PY'
import json, os, sys
out, torch_version, torch_cuda, gpu, seconds = sys.argv[1:6]
steps = []
with open(os.path.join(out, "steps.tsv")) as f:
    for line in f:
        name, status, secs = line.rstrip("\n").split("\t")
        steps.append({"step": name, "status": status, "seconds": int(secs)})
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
torch_side = load("models/torch_timings.json") or {}
timings = {}
for model in ("gpt", "resnet18"):
    bench = load(f"bench_{model}.json")
    row = dict((torch_side.get("models") or {}).get("gpt_gpu" if model == "gpt" else model, {}))
    if bench:  # eager LibTorch, TorchScript optimised and tcprof, medians of the same process
        row["libtorch_eager_ms"] = bench.get("eager_ms")
        row["torchscript_optimized_ms"] = (bench.get("baselines") or {}).get("torchscript_optimized")
        row["tcprof_ms"] = bench.get("compiled_ms")
        row["tcprof_timed_with"] = bench.get("timed_with")
    cuda = load(f"bench_{model}_cuda.json")
    if cuda:  # the cuda backend, with its own eager baseline from the same process
        row["tcprof_cuda_ms"] = cuda.get("compiled_ms")
        row["tcprof_cuda_eager_ms"] = cuda.get("eager_ms")
        if cuda.get("compiled_ms") and cuda.get("eager_ms"):
            row["tcprof_cuda_speedup"] = cuda["eager_ms"] / cuda["compiled_ms"]
    # Per-call time in each profile mode (CUDA events) and what recording costs against off.
    for mode in ("off", "summary", "full"):
        run = load(f"run_{model}_{mode}.json")
        if run and run.get("steady_median_ms_per_call") is not None:
            row[f"run_{mode}_ms"] = run["steady_median_ms_per_call"]
    if row.get("run_off_ms"):
        for mode in ("summary", "full"):
            if row.get(f"run_{mode}_ms") is not None:
                row[f"recording_cost_{mode}_percent"] = 100 * (row[f"run_{mode}_ms"] / row["run_off_ms"] - 1)
    if row:
        timings[model] = row
train = load("bench_train_gpt.json")
if train:
    opt = train.get("optimizer") or {}
    timings["gpt_train_step"] = {"eager_step_ms": train.get("eager_ms"), "tcprof_step_ms": train.get("compiled_ms"),
                                 "torch_optim_adam_ms": opt.get("eager_ms"), "fused_adam_ms": opt.get("compiled_ms")}
    timings["gpt_train_step"]["fused_optimizer"] = opt.get("compiled")
ctest = ""
log = os.path.join(out, "logs", "ctest.log")
if os.path.exists(log):
    lines = [l.strip() for l in open(log, errors="replace") if "% tests passed" in l]
    ctest = lines[-1] if lines else ""
summary = {"torch": torch_version, "cuda": torch_cuda, "gpu": gpu, "seconds": int(seconds),
           "ctest": ctest, "steps": steps, "timings": timings}
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump(summary, f, indent=2)
with open(os.path.join(out, "summary.txt"), "w") as f:
    f.write(f"gpu-check: torch {torch_version} (CUDA {torch_cuda}), GPU {gpu}, {seconds} s\n")
    if ctest:
        f.write(f"ctest: {ctest}\n")
    for s in steps:
        f.write(f"  {s['step']:<16} {s['status']:<40} {s['seconds']:>4} s\n")
    for model, row in timings.items():
        f.write(f"{model}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if isinstance(v, (int, float))) + "\n")
print(open(os.path.join(out, "summary.txt")).read(), end="")
PY
# Exit 1 when a step failed or timed out; skipped steps are not failures.
! cut -f2 "$out/steps.tsv" | grep -qE '^(failed|timed out)'
