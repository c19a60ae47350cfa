#!/usr/bin/env bash
# Builds tcprof and runs its tests against LibTorch 2.6 from Debian 13 (trixie), inside a chroot
# made with debootstrap and cached in DIR. Downloads ~2 GB the first time (~6 GB with --cuda), so
# it is not part of CI. It checks the committed HEAD (exported with git archive), so work in
# progress in the tree cannot disturb it.
#
#   scripts/check-libtorch2.sh [DIR]          CPU LibTorch (libtorch-dev), DIR default build/libtorch2
#   scripts/check-libtorch2.sh --cuda [DIR]   contrib's CUDA LibTorch (libtorch-cuda-dev, built with
#                                             CUDA 12.4) and non-free's nvidia-cuda-toolkit, default
#                                             build/libtorch2-cuda: builds the CUPTI collector with
#                                             CUDA 12's record layouts; the tests run without a GPU.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
flavor=cpu
if [[ "${1:-}" == "--cuda" ]]; then
  flavor=cuda
  shift
fi
default_dir="$src/build/libtorch2"
[[ $flavor == cuda ]] && default_dir="$src/build/libtorch2-cuda"
dir=$(realpath -m "${1:-$default_dir}")
root="$dir/trixie"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
in_root() { "${sudo_cmd[@]}" chroot "$root" bash -c "$1"; }

if ! command -v debootstrap >/dev/null; then
  "${sudo_cmd[@]}" apt-get update -q && "${sudo_cmd[@]}" apt-get install -y -q debootstrap
fi
if [[ ! -f "$root/.tcprof-bootstrapped" ]]; then
  mkdir -p "$root"
  components=main
  [[ $flavor == cuda ]] && components=main,contrib,non-free
  "${sudo_cmd[@]}" debootstrap --variant=minbase --components="$components" trixie "$root"
  touch "$root/.tcprof-bootstrapped"
fi

source "$(dirname "$0")/chroot_mounts.sh"
mount_chroot_binds "$root"
"${sudo_cmd[@]}" rm -rf "$root/src"
mkdir -p "$root/src"
git -C "$src" archive HEAD | tar -x -C "$root/src"

# The same list as install-deps.sh; trixie ships LibTorch/PyTorch 2.6.
common="build-essential cmake ninja-build pkg-config libopenblas0 qt6-base-dev qt6-charts-dev \
  libqt6opengl6-dev libgl-dev libsqlite3-dev sqlite3 libfmt-dev libcli11-dev nlohmann-json3-dev \
  libgtest-dev libgmock-dev libbenchmark-dev ccache xvfb xauth libdnnl-dev"
install="DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
if [[ ! -f "$root/.tcprof-ready" ]]; then
  if [[ $flavor == cpu ]]; then
    in_root "apt-get update -q && $install $common libtorch-dev python3-torch python3-torchvision"
  else
    # nvidia-cudnn is a script that downloads cuDNN from NVIDIA, which fails offline: an equivs
    # stub stands in for it, and the libcudnn.so.9 that libtorch_cuda.so needs comes from this
    # machine's toolkit (tcprof never calls cuDNN; the library only has to load).
    in_root "apt-get update -q && $install equivs && cd /tmp && \
      printf 'Package: nvidia-cudnn\nVersion: 9.0.0.312~cuda12\nArchitecture: amd64\n' > cudnn.ctl && \
      equivs-build cudnn.ctl >/dev/null && dpkg -i nvidia-cudnn_*.deb"
    "${sudo_cmd[@]}" cp -a /usr/local/cuda/lib64/libcudnn*.so.9* "$root/usr/lib/x86_64-linux-gnu/"
    in_root "$install $common libtorch-cuda-dev python3-torch-cuda python3-torchvision nvidia-cuda-toolkit libcupti-dev"
  fi
  touch "$root/.tcprof-ready"
fi
# Packages added to the list after a chroot was made (oneDNN's headers for the layout pass).
in_root "dpkg -s libdnnl-dev >/dev/null 2>&1 || (apt-get update -q && $install libdnnl-dev)"

# Build in the chroot's own folder so the host's build tree is untouched. With CUDA, the
# configure output must say the CUPTI collector is built (with CUDA 12's record layouts).
in_root "set -o pipefail; cd /src && cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo | tee /build-configure.log"
if [[ $flavor == cuda ]] && ! grep -q "CUPTI collector: built" "$root/build-configure.log"; then
  echo "check-libtorch2 --cuda: the CUPTI collector was not configured (see $root/build-configure.log)" >&2
  exit 1
fi
# $TCPROF_BUILD_LOCK (a file) serialises the build and tests with other builds on this machine.
lock=()
[[ -n "${TCPROF_BUILD_LOCK:-}" ]] && lock=(flock "$TCPROF_BUILD_LOCK")
"${lock[@]}" "${sudo_cmd[@]}" chroot "$root" bash -c "cmake --build /build -j $(nproc) -- -k 0 && \
  cd /build && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(nproc)"
