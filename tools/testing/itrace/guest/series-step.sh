# SPDX-License-Identifier: GPL-2.0
#
# Guest half of series-check.sh --boot (busybox sh): runs each selftest
# program handed in (/in/<name>, built at one step of the kernel series)
# on that step's kernel, as kselftests.sh does: its KTAP output to
# $OUT/<name>.tap, followed by "# exit status N".  Exit 1 if one failed
# (kselftest status other than 0, pass, or 4, skip).
set -u
rc=0
for t in /in/*; do
	n=$(basename "$t")
	[ "$n" = cmd.sh ] && continue
	[ -x "$t" ] && [ -f "$t" ] || continue
	echo "guest: series step selftest $n"
	# each from a copy in a directory of its own, its working
	# directory, so that what one test leaves there meets no other
	mkdir -p "/tmp/step/$n" && cp "$t" "/tmp/step/$n/$n" || { rc=1; continue; }
	(cd "/tmp/step/$n" && timeout 900 "./$n") > "$OUT/$n.tap" 2>&1
	st=$?
	echo "# exit status $st" >> "$OUT/$n.tap"
	[ "$st" = 0 ] || [ "$st" = 4 ] || rc=1
done
exit $rc
