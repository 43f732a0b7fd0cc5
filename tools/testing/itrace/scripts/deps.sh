#!/bin/bash
# Install the Debian packages the build and the tests need (DESIGN.md
# section 2).  As root: apt-get; otherwise say which command to run.
set -euo pipefail
pkgs=(build-essential flex bison bc cpio kmod xz-utils libelf-dev libssl-dev
      ccache meson ninja-build pkg-config python3-venv libglib2.0-dev
      libpixman-1-dev libfdt-dev zlib1g-dev dpkg-dev
      qemu-system-data seabios busybox-static
      libipt-dev libdw-dev libelf-dev util-linux
      python3-ply python3-git gdb
      libjson-c-dev libcapstone-dev libiberty-dev scdoc
      clang libclang-rt-14-dev python3-jsonschema
      linux-perf strace)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "ERROR: missing Debian packages; run:" >&2
	echo "  sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "  APT     ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
	apt-get update -q >/dev/null
	apt-get install -y -q "${missing[@]}" >/dev/null
}
