#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perf-events.sh DIR OUTDIR [PREFIX]: in the guest (busybox sh), run every
# binary of upstream's perf_events selftests in DIR, unchanged, as
# kselftests.sh does (KTAP to OUTDIR/PREFIX<name>.tap), with two things the
# emulated machine needs:
#   - a per-test timeout of PERF_EVENTS_TEST_TIMEOUT seconds (default 600)
#     instead of the harness's 30: sigtrap_threads' signal_stress_with_disable
#     takes longer under TCG with the debug kernel
#     (tools/testing/itrace/perf_events/ksft-timeout.c);
#   - remove_on_exec counts hardware instructions: when the guest CPU
#     cannot open that event (hw-counter-probe says why), its result is a
#     SKIP with that reason instead of a run that fails in its fixture.

if [ $# -lt 2 ]; then
	echo "usage: $0 DIR OUTDIR [PREFIX]" >&2
	exit 2
fi
. /etc/itrace.env
helpers=$ITRACE_BUILD/tools/perf_events
mkdir -p "$2" || exit 1
for t in "$1"/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	b=$(basename "$t")
	n=${3:-}$b
	if [ "$b" = remove_on_exec ] &&
	   ! why=$("$helpers/hw-counter-probe"); then
		echo "guest: kselftest $n: skipped, $why"
		printf 'TAP version 13\n1..1\nok 1 %s # SKIP %s\n' "$b" "$why" \
			> "$2/$n.tap"
		continue
	fi
	echo "guest: kselftest $n"
	LD_PRELOAD=$helpers/ksft-timeout.so \
	KSFT_TIMEOUT=${PERF_EVENTS_TEST_TIMEOUT:-600} \
		timeout 900 "$t" > "$2/$n.tap" 2>&1
	echo "# exit status $?" >> "$2/$n.tap"
done
exit 0
