# Sourced by check-torch-wheel.sh, bench-inductor.sh and the table scripts: a venv holding one PyPI
# torch wheel (and the torchvision of its release, CMake 4 and numpy), made once and marked ready.
#
#   torch_wheel_newest PACKAGE               the newest version PyPI lists
#   torch_wheel_venv VERSION VENV [PYTHON]   makes VENV unless it is already marked ready

torch_wheel_newest() {
  "${2:-python3}" -m pip index versions "$1" 2>/dev/null | sed -n 's/^[^ ]* (\(.*\))$/\1/p' | head -1
}

# torchvision X.Y pairs with torch 2.(Y-15): 0.26 with 2.11.
torch_wheel_torchvision_for() {
  local minor=${1#2.}; minor=${minor%%.*}
  echo "0.$((minor + 15))"
}

torch_wheel_venv() {
  local version=$1 venv=$2 python=${3:-python3} vision
  if [[ -f $venv/.tcprof-ready ]]; then
    torch_wheel_onednn "$venv"
    return 0
  fi
  rm -rf "$venv"
  # pip's cache would hold a second copy of the ~4.7 GB of wheels that the venv already holds.
  PIP_NO_CACHE_DIR=1 "$python" -m venv "$venv"
  PIP_NO_CACHE_DIR=1 "$venv/bin/pip" install -q "torch==$version" "cmake>=4,<5" numpy
  vision=$(torch_wheel_torchvision_for "$version")
  if ! PIP_NO_CACHE_DIR=1 "$venv/bin/pip" install -q "torchvision==$vision.*" "torch==$version" 2>/dev/null; then
    echo "torch-wheel-venv: no torchvision $vision for torch $version: the newest torchvision, without its dependencies"
    PIP_NO_CACHE_DIR=1 "$venv/bin/pip" install -q --no-deps torchvision pillow
  fi
  torch_wheel_onednn "$venv"
  touch "$venv/.tcprof-ready"
}

# oneDNN 3.2 with its headers, on GNU OpenMP as the wheel's LibTorch: tcprof's convolution chains
# and linears are built against it (cmake/TcprofOneDnn.cmake looks in the venv first). 3.2 has
# AVX2 brgemm convolutions that Debian's 2.6 lacks. Where PyPI lacks it, the build takes Debian's.
torch_wheel_onednn() {
  local venv=$1
  [[ -f $venv/.tcprof-onednn ]] && return 0
  if PIP_NO_CACHE_DIR=1 "$venv/bin/pip" install -q "onednn-cpu-gomp==2023.2.0" "onednn-devel-cpu-gomp==2023.2.0"; then
    touch "$venv/.tcprof-onednn"
  else
    echo "torch-wheel-venv: no oneDNN 3.2 from PyPI: tcprof builds against Debian's libdnnl-dev (2.6)" >&2
  fi
}

# The Python whose torch the build in $1 links (CMake's cache), when that torch has torch.compile:
# the table scripts then write their Inductor tables. Empty otherwise (Debian's torch 1.13).
torch_wheel_compile_python() {
  local python
  python=$(sed -n 's/^TCPROF_TORCH_PYTHON:[A-Z]*=//p' "$1/CMakeCache.txt" 2>/dev/null || true)
  [[ -n $python ]] && "$python" -c 'import torch, sys; sys.exit(not hasattr(torch, "compile"))' 2>/dev/null \
    && echo "$python"
  return 0
}

# " against torch X" for a table's header line.
torch_wheel_against() { echo " against $("$1" -c 'import torch; print("torch", torch.__version__)')"; }
