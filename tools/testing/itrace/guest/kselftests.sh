#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kselftests.sh DIR OUTDIR [PREFIX]: in the guest (busybox sh), run every
# kselftest binary in DIR, each with a 300 s timeout, its KTAP output to
# OUTDIR/PREFIX<name>.tap followed by "# exit status N".  Used by the guest
# halves of `make check` (check.sh, smp.sh).

if [ $# -lt 2 ]; then
	echo "usage: $0 DIR OUTDIR [PREFIX]" >&2
	exit 2
fi
mkdir -p "$2" || exit 1
for t in "$1"/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	n=${3:-}$(basename "$t")
	echo "guest: kselftest $n"
	timeout 300 "$t" > "$2/$n.tap" 2>&1
	echo "# exit status $?" >> "$2/$n.tap"
done
exit 0
