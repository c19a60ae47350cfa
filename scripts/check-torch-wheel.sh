#!/usr/bin/env bash
# Builds tcprof against the official LibTorch inside PyPI's torch wheels and runs its tests, the way
# a user who has pip's PyTorch builds it: `make test TORCH_PYTHON=<their python>`, with CMake 4
# from PyPI (the GPU machines build with CMake 4). The default versions are 2.11.0 (the GPU
# machines' PyTorch) and the newest release on PyPI.
#
#   scripts/check-torch-wheel.sh [ROOT]     ROOT default build/torch-wheel; per version
#                                           ROOT/VERSION/{venv,build,ctest.log}
#   TORCH_WHEEL_VERSIONS="2.11.0 newest"    the versions to check
#   TORCH_WHEEL_GUI=ON                      build the GUI too (off: Qt does not touch LibTorch,
#                                           and the Debian build tests it)
#   TORCH_WHEEL_CLEAN=1                     remove each version's venv and build once its tests
#                                           ran, keeping ctest.log (CI: one wheel build holds
#                                           ~11 GB, and the CI disk once ran out mid-install)
# Release builds without debug info and without the benchmarks: a wheel's LibTorch headers take
# about twice as long to compile as Debian's, and CI builds two of them.
#
# Each wheel is a CUDA build (~4.7 GB with NVIDIA's runtime wheels, ~1.5 min to install here); its
# LibTorch runs without a GPU. Tests that need a GPU skip themselves. The sample models are scripted
# by the wheel's own Python; where torchvision has no release for that torch yet, the newest
# torchvision is installed without its dependencies (its models are plain Python; only its C++
# ops, which the samples do not use, are built for another torch).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=$(realpath -m "${1:-$src/build/torch-wheel}")
versions=${TORCH_WHEEL_VERSIONS:-"2.11.0 newest"}
gui=${TORCH_WHEEL_GUI:-OFF}
python=${TORCH_WHEEL_BASE_PYTHON:-python3}
clean=${TORCH_WHEEL_CLEAN:-0}
# pip's cache would hold a second copy of the ~4.7 GB of wheels that the venv already holds.
export PIP_NO_CACHE_DIR=1
# A wheel's venv and build need about 11 GB: say so up front instead of pip's "No space left".
need_gb=12

free_gb() { df -Pk "$1" | awk 'NR==2 { print int($4 / 1048576) }'; }

source "$src/scripts/torch-wheel-venv.sh"

summary=()
status=0
for version in $versions; do
  [[ $version == newest ]] && version=$(torch_wheel_newest torch "$python")
  [[ -n $version ]] || { echo "check-torch-wheel: PyPI lists no torch release (is PyPI reachable?)" >&2; exit 2; }
  dir=$root/$version
  venv=$dir/venv
  echo "== torch $version in $dir"
  mkdir -p "$dir"
  if [[ ! -f $venv/.tcprof-ready || ! -d $dir/build ]] && (( $(free_gb "$dir") < need_gb )); then
    echo "check-torch-wheel: only $(free_gb "$dir") GB free under $dir; torch $version's venv and build need about $need_gb GB: free some disk (old build folders, ~/.cache/pip) or set TORCH_WHEEL_CLEAN=1" >&2
    exit 2
  fi
  torch_wheel_venv "$version" "$venv" "$python"
  "$venv/bin/python" -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "torchvision", torchvision.__version__)'
  # The README's command for a pip user, in a build folder of its own.
  set +e
  make -C "$src" test BUILD_DIR="$dir/build" TORCH_PYTHON="$venv/bin/python" CMAKE="$venv/bin/cmake" \
    BUILD_TYPE=Release CMAKE_ARGS="-DTCPROF_BUILD_GUI=$gui -DTCPROF_BUILD_BENCHMARKS=OFF" 2>&1 | tee "$dir/ctest.log"
  rc=${PIPESTATUS[0]}
  set -e
  result=$(grep -E '^[0-9]+% tests passed' "$dir/ctest.log" | tail -1)
  summary+=("torch $version: ${result:-no test result (exit $rc)}")
  [[ $rc -eq 0 ]] || status=1
  if [[ $clean == 1 ]]; then
    rm -rf "$dir/build" "$venv"
  fi
done
echo
echo "check-torch-wheel:"
printf '  %s\n' "${summary[@]}"
exit $status
