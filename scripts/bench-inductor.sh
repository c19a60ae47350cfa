#!/usr/bin/env bash
# tcprof beside torch.compile (Inductor's C++/OpenMP backend) on the CPU: builds tcprof against a
# PyPI torch wheel's LibTorch (so both sides run the same ATen) and writes docs/backend.md's
# Inductor tables with it: inference at 1 and 2 threads (scripts/bench-table.sh) and the training
# step (scripts/bench-train-table.sh). Run it on a quiet machine; it takes about an hour per table
# on 2 cores (Inductor's max-autotune compiles are most of it).
#
#   scripts/bench-inductor.sh [ROOT]     ROOT default build/torch-wheel; the venv and the build
#                                        are check-torch-wheel's (ROOT/VERSION/{venv,build}, the
#                                        same configuration), made when missing
#   TORCH_VERSION=2.15.0                 the torch release (default: the newest on PyPI)
#   TORCH_PYTHON=/path/python            a Python with torch 2 already, instead of the venv
#   BENCH_INDUCTOR_TABLES="1 2 train"    which tables to write
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=$(realpath -m "${1:-$src/build/torch-wheel}")
source "$src/scripts/torch-wheel-venv.sh"
python=${TORCH_PYTHON:-}
if [[ -z $python ]]; then
  version=${TORCH_VERSION:-$(torch_wheel_newest torch)}
  [[ -n $version ]] || { echo "bench-inductor: PyPI lists no torch release (is PyPI reachable?), or set TORCH_PYTHON" >&2; exit 2; }
  torch_wheel_venv "$version" "$root/$version/venv"
  python=$root/$version/venv/bin/python
fi
version=$("$python" -c 'import torch; print(torch.__version__.split("+")[0])') \
  || { echo "bench-inductor: $python cannot import torch (pip install torch there)" >&2; exit 2; }
"$python" -c 'import torch, sys; sys.exit(not hasattr(torch, "compile"))' \
  || { echo "bench-inductor: torch $version has no torch.compile: use a PyTorch 2 wheel" >&2; exit 2; }
build=$root/$version/build
cmake=$(dirname "$python")/cmake
[[ -x $cmake ]] || cmake=cmake
# Release, as the wheel's own LibTorch and Inductor's kernels are; the benchmarks need neither the
# GUI nor the C++ micro-benchmarks.
make -C "$src" build BUILD_DIR="$build" TORCH_PYTHON="$python" CMAKE="$cmake" BUILD_TYPE=Release \
  CMAKE_ARGS="-DTCPROF_BUILD_GUI=OFF -DTCPROF_BUILD_BENCHMARKS=OFF"
for table in ${BENCH_INDUCTOR_TABLES:-1 2 train}; do
  case $table in
    train) bash "$src/scripts/bench-train-table.sh" "$build" ;;
    *) THREADS=$table bash "$src/scripts/bench-table.sh" "$build" ;;
  esac
done
