#!/usr/bin/env bash
# Installs everything tcprof needs from Debian packages. Idempotent and quick when all is present:
# apt is only touched when a package is missing.
#   scripts/install-deps.sh                  with Debian's LibTorch 1.13 (the default build)
#   scripts/install-deps.sh --without-torch  everything but LibTorch, for a build against the
#                                            LibTorch of a pip-installed PyTorch (TORCH_PYTHON=...)
#   scripts/install-deps.sh --fuzz           also clang 14 and its libFuzzer runtime (make fuzz)
set -euo pipefail

torch_packages=(libtorch-dev python3-torch python3-torchvision)
fuzz_packages=()
for arg in "$@"; do
  case "$arg" in
    --without-torch) torch_packages=() ;;
    --fuzz) fuzz_packages=(clang-14 libclang-rt-14-dev llvm-14) ;;
    *) echo "install-deps: unknown option $arg (use --without-torch or --fuzz)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git
  "${torch_packages[@]}" libopenblas0
  libdnnl-dev
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
  libsqlite3-dev sqlite3 libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  ccache xvfb xauth python3-venv
  "${fuzz_packages[@]}"
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
