#!/usr/bin/env bash
# Builds tcprof and runs its tests against LibTorch 2.6 from Debian 13 (trixie), inside a chroot
# made with debootstrap and cached in DIR (default build/libtorch2). Downloads ~2 GB the first
# time, so it is not part of CI. It checks the committed HEAD (exported with git archive), so
# work in progress in the tree cannot disturb it. Usage: scripts/check-libtorch2.sh [DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${1:-$src/build/libtorch2}")
root="$dir/trixie"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)

if ! command -v debootstrap >/dev/null; then
  "${sudo_cmd[@]}" apt-get update -q && "${sudo_cmd[@]}" apt-get install -y -q debootstrap
fi
if [[ ! -f "$root/.tcprof-bootstrapped" ]]; then
  mkdir -p "$root"
  "${sudo_cmd[@]}" debootstrap --variant=minbase trixie "$root"
  touch "$root/.tcprof-bootstrapped"
fi

mounted=()
cleanup() {
  for ((i=${#mounted[@]}-1; i>=0; i--)); do "${sudo_cmd[@]}" umount -l "${mounted[$i]}" || true; done
}
trap cleanup EXIT
for m in proc dev; do
  "${sudo_cmd[@]}" mount --bind "/$m" "$root/$m"
  mounted+=("$root/$m")
done
"${sudo_cmd[@]}" rm -rf "$root/src"
mkdir -p "$root/src"
git -C "$src" archive HEAD | tar -x -C "$root/src"

if [[ ! -f "$root/.tcprof-ready" ]]; then
  # The same list as install-deps.sh; trixie ships LibTorch/PyTorch 2.6.
  "${sudo_cmd[@]}" chroot "$root" bash -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends build-essential cmake ninja-build pkg-config \
    libtorch-dev python3-torch python3-torchvision libopenblas0 qt6-base-dev qt6-charts-dev libqt6opengl6-dev \
    libgl-dev libsqlite3-dev sqlite3 libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev \
    libgmock-dev libbenchmark-dev ccache xvfb xauth"
  touch "$root/.tcprof-ready"
fi

# Build in the chroot's own folder so the host's build tree is untouched.
"${sudo_cmd[@]}" chroot "$root" bash -c "cd /src && \
  cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo && \
  cmake --build /build -j $(nproc) -- -k 0 && \
  cd /build && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(nproc)"
