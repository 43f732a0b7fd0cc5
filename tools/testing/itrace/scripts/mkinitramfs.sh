#!/bin/bash
# Build the guest's initramfs: static busybox, the init script, and host
# files (the itrace tool, test programs, selftests, perf) with their shared
# library closure at the SAME absolute paths as on the host, so a decoder on
# the host finds the very ELF files the guest ran.
#
# usage: mkinitramfs.sh OUTPUT.cpio
set -euo pipefail
: "${BUILD:?}"
out=$1
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../../.." && pwd)
root=$BUILD/initramfs
rm -rf "$root"
# Merged /usr, as on the Debian 12 host: /lib/... and /usr/lib/... are the
# same files, whichever path a symlink or the dynamic loader names.
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,root,in,out}
for d in bin sbin lib lib64; do
	ln -s "usr/$d" "$root/$d"
done

install -m755 /bin/busybox "$root/bin/busybox"
install -m755 "$src/tools/testing/itrace/guest/init" "$root/init"
cat > "$root/etc/itrace.env" <<ENV
ITRACE_BUILD=$BUILD
ITRACE_SRC=$src
export ITRACE_BUILD ITRACE_SRC
ENV
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >> "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
echo "nogroup:x:65534:" >> "$root/etc/group"

copy() {	# copy a host path to the same path in the guest
	[ -e "$root$1" ] && return 0
	mkdir -p "$root$(dirname "$1")"
	cp -a "$1" "$root$1"
	if [ -L "$1" ]; then	# the link's literal target and its final one
		local to
		to=$(readlink "$1")
		case $to in /*) ;; *) to=$(dirname "$1")/$to ;; esac
		copy "$to"
		copy "$(readlink -f "$1")"
	fi
}
is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
add_elf() {	# an ELF file and its shared library closure
	copy "$1"
	local lib
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' || true); do
		copy "$lib"
	done
}

# The guest's payload: everything the build made that runs in the guest.
for d in "$BUILD/tools" "$BUILD/progs" "$BUILD/selftests"; do
	[ -d "$d" ] || continue
	while IFS= read -r -d '' f; do
		if is_elf "$f"; then add_elf "$f"; else copy "$f"; fi
	done < <(find "$d" -type f ! -name '*.o' ! -name '*.d' ! -name '*.a' \
		! -path '*/test-obj/*' -print0)
done
# Scripts the guest runs, at their repository paths.
copy "$src/tools/testing/itrace/guest"
# Debian's perf, for upstream-tool checks against the emulated hardware,
# only when asked for: it triples the initramfs, and every MiB costs boot time
# under TCG.
[ -n "${ITRACE_GUEST_PERF:-}" ] && add_elf /usr/bin/perf

# Uncompressed: inflating under TCG costs more than reading the bytes.
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
echo "  INITRD  $out ($(du -h "$out" | cut -f1))"
