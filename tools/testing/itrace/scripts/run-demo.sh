#!/bin/bash
# `make run`: boot the patched kernel under emulated Intel PT, trace the demo
# program through the itrace trace fd, and decode it on the host.
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
res=$BUILD/run
echo "== booting the itrace kernel in QEMU (emulated Intel PT) and tracing demo"
rc=0
"$here/run-vm.sh" -t 600 -o "$res" "$t/guest/demo.sh" || rc=$?
sed 's/^/   guest: /' "$res/cmd.log" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
	echo "run: the guest run failed (exit $rc); console: $res/console.log" >&2
	exit 1
fi
boot=$(sed -n 's/.*itrace-guest: booted in \([0-9.]*\) s.*/\1/p' "$res/console.log")
echo "   (guest booted in ${boot:-?} s; VM run $(cat "$res/vm-seconds") s;" \
	"trace file $(stat -c %s "$res/demo.itrace") bytes)"
echo
echo "== itrace decode --summary $res/demo.itrace"
"$BUILD/tools/itrace/itrace" decode --summary "$res/demo.itrace"

# The same recording against what the program is known to do.
exp=$(mktemp -d)
trap 'rm -rf "$exp"' EXIT
cp "$t/progs/demo.expect" "$exp/"
echo
if PROGS_SRC=$exp ITRACE=$BUILD/tools/itrace/itrace "$here/e2e-verify.sh" "$res" > "$exp/verify.tap" 2>&1; then
	echo "== the decoded trace matches tools/testing/itrace/progs/demo.expect" \
		"($(grep -cvE '^(#|$)' "$t/progs/demo.expect") expected counts: calls, branch outcomes, syscalls)"
else
	echo "== the decoded trace does NOT match tools/testing/itrace/progs/demo.expect:"
	grep -v '^1\.\.' "$exp/verify.tap"
	exit 1
fi
