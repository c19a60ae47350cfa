#!/usr/bin/env bash
# Installs the .deb that `make package` built into a fresh Debian 12 (a debootstrap chroot), as a
# user would with apt, and uses it there: tcprof --version, tcprof report on the sample run it ships,
# a verified run of the GPT sample it ships (the cpp backend compiles with the g++ it depends on),
# and the find_package(tcprof) example built against the installed tree, recording a run.
#
#   scripts/check-package.sh [BUILD_DIR]   the .deb from BUILD_DIR (default build); the chroot is
#                                          made once in BUILD_DIR/package-check/base and copied fresh
#                                          for each check (~1 GB of packages the first time)
set -euo pipefail
build=$(realpath "${1:-build}")
deb=$(ls -t "$build"/tcprof_*_amd64.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { echo "check-package: no tcprof_*.deb in $build: run make package first" >&2; exit 2; }
dir=$build/package-check
base=$dir/base
root=$dir/root
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
command -v debootstrap >/dev/null || { "${sudo_cmd[@]}" apt-get update -q && "${sudo_cmd[@]}" apt-get install -y -q debootstrap; }
if [[ ! -f $base/.tcprof-bootstrapped ]]; then
  "${sudo_cmd[@]}" rm -rf "$base"
  mkdir -p "$base"
  "${sudo_cmd[@]}" debootstrap --variant=minbase bookworm "$base"
  "${sudo_cmd[@]}" touch "$base/.tcprof-bootstrapped"
fi
"${sudo_cmd[@]}" rm -rf "$root"
"${sudo_cmd[@]}" cp -a "$base" "$root"
source "$(dirname "$0")/chroot_mounts.sh"
mount_chroot_binds "$root"
"${sudo_cmd[@]}" cp "$deb" "$root/tmp/"
in_root() { "${sudo_cmd[@]}" chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -euo pipefail -c "$1"; }
install="DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"

echo "== apt install $(basename "$deb") into a fresh Debian 12"
in_root "apt-get update -q && $install /tmp/$(basename "$deb") >/tmp/apt.log && dpkg -s tcprof | sed -n 's/^Depends: /Depends: /p'"
echo "== tcprof --version"
in_root "tcprof --version"
echo "== tcprof report /usr/share/tcprof/samples/sample-run.db"
in_root "tcprof report /usr/share/tcprof/samples/sample-run.db | head -20"
echo "== tcprof run gpt_tiny.pt --verify"
in_root "cd /tmp && tcprof run /usr/share/tcprof/samples/gpt_tiny.pt --input 'i64[2,16](0,512)' --vary 0:1=8..32 --iters 6 --verify --db /tmp/run.db"
echo "== the find_package(tcprof) example, built against the installed tree"
in_root "$install cmake ninja-build libtorch-dev >/tmp/apt-dev.log && \
  cmake -S /usr/share/doc/tcprof/examples/cpp_api -B /tmp/example -G Ninja >/dev/null && \
  cmake --build /tmp/example >/dev/null && \
  /tmp/example/record_calls /usr/share/tcprof/samples/gpt_tiny.pt /tmp/example.db && \
  tcprof report /tmp/example.db | head -8"
echo "check-package: $(basename "$deb") installs and runs in a fresh Debian 12"
