# Sourced by the scripts that run in a debootstrap chroot (check-package.sh, check-libtorch2.sh):
# bind-mounts /proc and /dev into "$1" and unmounts them, innermost first, when the script exits.
# Needs sudo_cmd (empty as root, (sudo) otherwise).
mount_chroot_binds() {
  mounted=()
  trap 'for ((i=${#mounted[@]}-1; i>=0; i--)); do "${sudo_cmd[@]}" umount -l "${mounted[$i]}" || true; done' EXIT
  for m in proc dev; do
    "${sudo_cmd[@]}" mount --bind "/$m" "$1/$m"
    mounted+=("$1/$m")
  done
}
