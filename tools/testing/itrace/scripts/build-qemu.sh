#!/bin/bash
# Configure (once) and build QEMU's x86_64-softmmu target from build/qemu
# into build/qemu-obj with Debian's meson.  Only what the tests need is on.
# `build-qemu.sh SRC OBJ` builds another tree with the same flags (make bench
# builds the pristine base into build/qemu-stock-obj that way).
set -euo pipefail
: "${BUILD:?}"
src=${1:-$BUILD/qemu} obj=${2:-$BUILD/qemu-obj}
log=$BUILD/$(basename "$obj")
log=${log%-obj}
flags=(--target-list=x86_64-softmmu --without-default-features
       --enable-tcg --enable-plugins --disable-docs --disable-werror
       --meson=/usr/bin/meson)
export PATH=/usr/lib/ccache:$PATH
want="${flags[*]}"
if [ ! -f "$obj/build.ninja" ] || [ "$(cat "$obj/.itrace-flags" 2>/dev/null)" != "$want" ]; then
	rm -rf "$obj"
	mkdir -p "$obj"
	(cd "$obj" && "$src/configure" "${flags[@]}") > "$log-configure.log" 2>&1 || {
		tail -30 "$log-configure.log" >&2
		exit 1
	}
	echo "$want" > "$obj/.itrace-flags"
fi
ninja -C "$obj" -j"$(nproc)" qemu-system-x86_64 > "$log-build.log" 2>&1 || { tail -40 "$log-build.log" >&2; exit 1; }
test -x "$obj/qemu-system-x86_64"
