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
#   GPU_CHECK_CTEST_REGEX=Cuda          only the tests whose names match (ctest -R)
#   GPU_CHECK_TARGETS="tcprof fuzz_graphs compiler_tests"
#                                       build only these (with a matching GPU_CHECK_CTEST_REGEX)
#   GPU_CHECK_FUZZ=2000                 fuzz_graphs cases on the device (GPU_CHECK_FUZZ_SEED: the seed)
#   GPU_CHECK_FUZZ_BACKWARD=200         fuzz_graphs --backward cases on the device (the training graphs' gradients)
#   GPU_CHECK_VISION=1                  also bench the torchvision samples (f32 and bf16) through the cuda backend
#   GPU_CHECK_TIME_SCALE=8              multiply every step's time limit (a 2-core machine)
#   GPU_CHECK_BUDGET_S=540              the whole check's time (times the scale): a step that would
#                                       run past it is cut to fit, one that cannot start is skipped,
#                                       so the summary is always written (the device tool stops a
#                                       call at 600 s, and brings back only what is written by then)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$src/build/gpu-check}")
py=${TORCH_PYTHON:-python3}
build=${GPU_CHECK_BUILD:-/tmp/tcprof-gpu-check}
jobs=$(nproc)
# A reused OUT keeps nothing of an earlier check: a step skipped now must not leave its old figures
# for the summary to judge.
rm -rf "$out/logs" "$out/models" "$out/vision" "$out/fuzz" "$out/fuzz_backward" "$out"/bench_*.json "$out"/recording_cost_*.json \
  "$out"/run_*.json "$out"/train_gpt*.json "$out"/report*.txt "$out/report.json" "$out"/explain_*.txt "$out"/summary.*
mkdir -p "$out/logs"
: > "$out/steps.tsv"
started=$SECONDS

# step NAME LIMIT_S COMMAND...: runs COMMAND with a time limit, its output in logs/NAME.log.
budget=$(( ${GPU_CHECK_BUDGET_S:-540} * ${GPU_CHECK_TIME_SCALE:-1} ))
step() {
  local name=$1 limit=$(( $2 * ${GPU_CHECK_TIME_SCALE:-1} ))
  shift 2
  local t0=$SECONDS status left=$(( budget - (SECONDS - started) ))
  if (( left < 10 )); then
    skip "$name" "out of time: the check's budget is ${budget}s (GPU_CHECK_BUDGET_S)"
    return 1
  fi
  (( limit > left )) && limit=$left
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
  step build 300 "$cmake" --build "$build" -j "$jobs" ${GPU_CHECK_TARGETS:+--target $GPU_CHECK_TARGETS}
built=$?
tcprof=$build/cli/tcprof
# --- the GPU samples, tcprof beside torch.compile ---
models=$out/models
step models 300 "$py" "$src/scripts/gpu_check_models.py" "$models" --iters 30 ${GPU_CHECK_VISION:+--vision}
gpt_in='i64[8,256](0,8192)'
resnet_in='f32[32,3,224,224]'
db=$out/gpu-check.db
rm -f "$db"
gpu_steps=(bench_gpt_cuda bench_gpt_cuda_features_off bench_gpt_cuda_untuned bench_gpt_cuda_launch_sweep bench_gpt_sample_cuda bench_resnet18_cuda bench_resnet18_cuda_conv_epilogues recording_cost_gpt recording_cost_gpt_every_call recording_cost_resnet18 verify_gpt_cuda
  verify_resnet18_cuda verify_resnet18_cuda_conv_epilogues verify_gpt_cuda_no_graphs run_gpt_full run_resnet18_summary train_gpt train_gpt_cuda bench_train_gpt bench_train_gpt_cuda explain_gpt_cuda
  bench_vision report fuzz_gpu fuzz_gpu_backward)
if [[ $built -ne 0 ]]; then
  for s in "${gpu_steps[@]}"; do skip "$s" "no build (see the configure and build steps)"; done
elif [[ $has_gpu != 1 ]]; then
  for s in "${gpu_steps[@]}"; do skip "$s" "$no_gpu_reason"; done
else
  # Timings first, on an idle machine. The cuda backend (generated kernels through NVRTC, SDPA,
  # CUDA graph replay) beside eager LibTorch and TorchScript's optimised executor, same process.
  step bench_gpt_cuda 120 bash -c "'$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 50 --db none --json > '$out/bench_gpt_cuda.json'"
  # The same with the vectors and the row registers off (TCPROF_CUDA_OFF, cuda_features.h): what
  # they are worth on this GPU, measured in this session.
  step bench_gpt_cuda_features_off 120 bash -c "TCPROF_CUDA_OFF=vectors,row-registers '$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 50 --db none --json > '$out/bench_gpt_cuda_features_off.json'"
  # The same with every kernel at the default launch sizes (TCPROF_CUDA_OFF=launch-tuning): what the
  # block sizes raced at each kernel's first launch (launch_tuning.h) are worth.
  step bench_gpt_cuda_untuned 120 bash -c "TCPROF_CUDA_OFF=launch-tuning '$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 30 --no-torchscript --db none --json > '$out/bench_gpt_cuda_untuned.json'"
  # Launch sizes other than the defaults (256 threads a pointwise block, 8 warp rows a block):
  # whether the launch shape is worth tuning per kernel on this GPU (TCPROF_CUDA_LAUNCH).
  step bench_gpt_cuda_launch_sweep 120 bash -c "rc=0; for shape in pointwise-block=128,warp-row-block=128 pointwise-block=512,warp-row-block=512; do \
    TCPROF_CUDA_LAUNCH=\$shape '$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 30 --no-torchscript --db none --json \
      > '$out'/bench_gpt_cuda_launch_\${shape//[=,]/_}.json || rc=1; done; exit \$rc"
  step bench_gpt_sample_cuda 120 bash -c "'$tcprof' bench '$models/gpt.pt' --input 'i64[8,256](0,512)' --device cuda --backend cuda --iters 50 --db none --json > '$out/bench_gpt_sample_cuda.json'"
  step bench_resnet18_cuda 120 bash -c "'$tcprof' bench '$models/resnet18.pt' --input '$resnet_in' --device cuda --backend cuda --iters 50 --db none --json > '$out/bench_resnet18_cuda.json'"
  # The same with convolutions' ReLUs and residual adds inside cuDNN's call (conv_epilogue.h, off by
  # default until this measures it).
  step bench_resnet18_cuda_conv_epilogues 120 bash -c "TCPROF_CUDA_CONV_EPILOGUES=1 '$tcprof' bench '$models/resnet18.pt' --input '$resnet_in' --device cuda --backend cuda --iters 50 --no-torchscript --db none --json > '$out/bench_resnet18_cuda_conv_epilogues.json'"
  # What recording costs (docs/gpu.md, "What recording costs"): off, summary, full and summary
  # without CUPTI, in one process, CUDA events, blocks taking turns. Summary records GPU work on one
  # call in 20 after the first 10 (gpu_call_sampling.h): the mean carries those calls.
  step recording_cost_gpt 90 bash -c "'$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --recording-cost --iters 100 --db none --json > '$out/recording_cost_gpt.json'"
  # The same with summary recording every call's GPU work, as before the sampling: what it saves.
  step recording_cost_gpt_every_call 90 bash -c "TCPROF_SUMMARY_GPU_EVERY=1 '$tcprof' bench '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --recording-cost --iters 60 --db none --json > '$out/recording_cost_gpt_every_call.json'"
  step recording_cost_resnet18 90 bash -c "'$tcprof' bench '$models/resnet18.pt' --input '$resnet_in' --device cuda --recording-cost --iters 60 --db none --json > '$out/recording_cost_resnet18.json'"
  # Correctness of the cuda backend on the device: every call's outputs against eager there.
  # Its log lists each kernel's launch decision and the times raced (TCPROF_LOGS=autotune).
  step verify_gpt_cuda 60 env TCPROF_LOGS=autotune "$tcprof" run "$models/gpt_gpu.pt" --input "$gpt_in" --device cuda --backend cuda --verify --iters 5 --db none
  step verify_resnet18_cuda 60 "$tcprof" run "$models/resnet18.pt" --input "$resnet_in" --device cuda --backend cuda --verify --iters 5 --db none
  step verify_resnet18_cuda_conv_epilogues 60 env TCPROF_CUDA_CONV_EPILOGUES=1 "$tcprof" run "$models/resnet18.pt" --input "$resnet_in" --device cuda --backend cuda --verify --iters 5 --db none
  step verify_gpt_cuda_no_graphs 60 "$tcprof" run "$models/gpt_gpu.pt" --input "$gpt_in" --device cuda --backend cuda --cuda-graphs off --verify --iters 3 --db none
  # Recorded runs for the report: the GPT in full, ResNet18 in summary (the default).
  step run_gpt_full 60 bash -c "'$tcprof' run '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 30 --profile full --db '$db' --json > '$out/run_gpt_full.json'"
  step run_resnet18_summary 60 bash -c "'$tcprof' run '$models/resnet18.pt' --input '$resnet_in' --device cuda --backend cuda --iters 20 --db '$db' --json > '$out/run_resnet18_summary.json'"
  step train_gpt 90 bash -c "'$tcprof' train '$models/gpt_gpu_loss.pt' --input '$gpt_in' --input '$gpt_in' --loss model \
    --optimizer adam --lr 1e-3 --steps 20 --device cuda --amp bf16 --db '$db' --json > '$out/train_gpt.json'"
  # Recorded f32 training through the cuda backend: its compiled backward runs on autograd's device
  # thread and records through the call's profiler.
  step train_gpt_cuda 90 bash -c "'$tcprof' train '$models/gpt_gpu_loss.pt' --input '$gpt_in' --input '$gpt_in' --loss model \
    --optimizer adam --lr 1e-3 --steps 10 --device cuda --backend cuda --profile full --db '$db' --json > '$out/train_gpt_cuda.json'"
  # The optimizer step: torch::optim's Adam op by op against the fused step (LibTorch _fused_adam_).
  step bench_train_gpt 120 bash -c "'$tcprof' bench '$models/gpt_gpu_loss.pt' --train --loss model --optimizer adam --input '$gpt_in' --input '$gpt_in' --device cuda --iters 20 --db none --json > '$out/bench_train_gpt.json'"
  # The same step with the cuda backend's compiled forward and backward graphs (f32).
  step bench_train_gpt_cuda 120 bash -c "'$tcprof' bench '$models/gpt_gpu_loss.pt' --train --backend cuda --loss model --optimizer adam --input '$gpt_in' --input '$gpt_in' --device cuda --iters 20 --db none --json > '$out/bench_train_gpt_cuda.json'"
  step explain_gpt_cuda 60 bash -c "'$tcprof' explain '$models/gpt_gpu.pt' --input '$gpt_in' --device cuda --backend cuda --iters 3 --db none > '$out/explain_gpt_cuda.txt'"
  # The torchvision samples at batch 32, f32 and bf16 weights, through the cuda backend beside eager
  # (GPU_CHECK_VISION=1; the cuda backend's "never slower than eager").
  if [[ -n ${GPU_CHECK_VISION:-} ]]; then
    vision_bench() {
      local file=$1 name dtype
      name=$(basename "$file" .pt); dtype=${name##*_}
      "$tcprof" bench "$file" --input "$dtype[32,3,224,224]" --device cuda --backend cuda --iters 20 --no-torchscript --db none --json \
        > "$out/vision/$name.json" 2> "$out/vision/$name.err"
    }
    export -f vision_bench
    export tcprof out
    mkdir -p "$out/vision"
    step bench_vision 240 bash -c "rc=0; for f in '$models'/vision/*.pt; do vision_bench \"\$f\" || rc=1; done; exit \$rc"
  else
    skip bench_vision "GPU_CHECK_VISION is not set"
  fi
  # The kernel tables too: each generated kernel's average beside the last GPU run's (docs/cuda_backend.md).
  step report 30 bash -c "'$tcprof' report --db '$db' > '$out/report.txt' && '$tcprof' report --db '$db' --json > '$out/report.json' \
    && '$tcprof' report --db '$db' --kernels --top 40 > '$out/report_kernels.txt'"
  # The randomized differential test on the device: the cuda backend's kernels against eager on the
  # GPU, GPU_CHECK_FUZZ cases from a seed of the day in shards of 50 (one process each: CUDA cannot
  # fork), several at once; a shard cut short by the limit reports nothing and is counted as unrun.
  fuzz_cases=${GPU_CHECK_FUZZ:-2000}
  fuzz_seed=${GPU_CHECK_FUZZ_SEED:-$(date +%Y%m%d)00}
  mkdir -p "$out/fuzz"
  echo "$fuzz_seed" > "$out/fuzz/seed"
  fuzz_shard() {
    "$build/bench/fuzz_graphs" --device cuda --backend cuda --seed "$fuzz_seed" --first "$1" --n 50 > "$out/fuzz/shard-$1.log" 2>&1
  }
  export -f fuzz_shard
  export build out fuzz_seed
  step fuzz_gpu 150 bash -c "seq 0 50 $((fuzz_cases - 1)) | xargs -P $(( jobs > 4 ? jobs * 3 / 4 : 1 )) -I{} bash -c 'fuzz_shard {}'"
  # The gradients of the cuda backend's training graphs on the device (--backward), in shards of 25.
  fuzz_backward_cases=${GPU_CHECK_FUZZ_BACKWARD:-200}
  mkdir -p "$out/fuzz_backward"
  echo "$fuzz_seed" > "$out/fuzz_backward/seed"
  fuzz_backward_shard() {
    "$build/bench/fuzz_graphs" --device cuda --backend cuda --backward --seed "$fuzz_seed" --first "$1" --n 25 > "$out/fuzz_backward/shard-$1.log" 2>&1
  }
  export -f fuzz_backward_shard
  step fuzz_gpu_backward 120 bash -c "seq 0 25 $((fuzz_backward_cases - 1)) | xargs -P $(( jobs > 4 ? jobs * 3 / 4 : 1 )) -I{} bash -c 'fuzz_backward_shard {}'"
fi

# --- ctest last: the GPU steps above are what only this machine can run, and ctest takes what
# time is left. One OpenMP thread per test: 16 tests at once, each with 16 threads, ran the CPU
# compiler tests 10x slower than on 2 cores. ---
if [[ $built -ne 0 ]]; then
  skip ctest "no build (see the configure and build steps)"
elif [[ ${GPU_CHECK_CTEST:-1} == 0 ]]; then
  skip ctest "GPU_CHECK_CTEST=0"
else
  ctest=$py_dir/ctest
  [[ -f $ctest && -x $ctest && $cmake != cmake ]] || ctest=ctest
  ctest_filter=()
  [[ -n ${GPU_CHECK_CTEST_REGEX:-} ]] && ctest_filter=(-R "$GPU_CHECK_CTEST_REGEX")
  step ctest 270 env OMP_NUM_THREADS=1 "$ctest" --test-dir "$build" -j "$jobs" --timeout 150 --output-on-failure "${ctest_filter[@]}"
fi

# --- one summary ---
"$py" "$src/scripts/gpu_check_summary.py" "$out" "$torch_version" "$torch_cuda" "${gpu_name:-none}" "$((SECONDS - started))"
# Exit 1 when a step failed, timed out or found no time left; other skipped steps are not failures.
! cut -f2 "$out/steps.tsv" | grep -qE '^(failed|timed out|skipped: out of time)'
