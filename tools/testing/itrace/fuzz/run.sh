#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz`: boot the KASAN/lockdep/kmemleak test guest on two vCPUs and
# run itrace-fuzz in it (tools/testing/itrace/guest/fuzz.sh).
#
# usage: run.sh [RESULTDIR]
#   FUZZ_MINUTES   how long to fuzz (default 10); FUZZ_SECONDS overrides it
#   FUZZ_SEED      the run's seed (default: random), printed; the same seed
#                  runs the same worker lives with the same op sequences
#   FUZZ_WORKERS   worker processes, half root, half nobody (default 4)
# RESULTDIR (default build/fuzz/<date>-<seed>) keeps the run: console.log
# (the kernel's), fuzz/run.log (seed, lives, findings, summary), fuzz/log/
# (op logs of the lives that found something).  Exit status 0 only when
# the guest came back, the kernel log has no report (WARN, BUG, KASAN,
# lockdep, kmemleak, ...) and itrace-fuzz found nothing.
set -uo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
secs=${FUZZ_SECONDS:-$((${FUZZ_MINUTES:-10} * 60))}
seed=${FUZZ_SEED:-0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')}
workers=${FUZZ_WORKERS:-4}
res=${1:-$BUILD/fuzz/$(date +%Y%m%d-%H%M%S)-$seed}
case $secs in
'' | *[!0-9]*) echo "fuzz: FUZZ_SECONDS/FUZZ_MINUTES: not a number" >&2; exit 2 ;;
esac

mkdir -p "$BUILD"
tmp=$(mktemp -d "$BUILD/fuzz-env.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
env=$tmp/fuzz.env	# the guest reads /in/fuzz.env
printf 'FUZZ_SEED=%s\nFUZZ_SECONDS=%s\nFUZZ_WORKERS=%s\n' \
	"$seed" "$secs" "$workers" > "$env"
echo "fuzz: seed $seed, $secs s, $workers workers, results in $res"
echo "fuzz: replay with FUZZ_SEED=$seed make fuzz"

# Boot, the lives' last ops (up to 90 s), the kmemleak scan, a loaded host
"$t/scripts/run-vm.sh" -t $((secs + 480)) -c 2 -o "$res" \
	"$t/guest/fuzz.sh" "$env" "$here/known-findings"
vm=$?
cp "$env" "$res/fuzz.env" 2>/dev/null
rc=0
case $vm in
0) ;;
124) echo "fuzz: FAIL: the guest timed out (see $res/console.log)"; rc=1 ;;
125) ;;	# a kernel report: below
*) echo "fuzz: FAIL: guest exit $vm (see $res/cmd.log, $res/console.log)"; rc=1 ;;
esac
if ! "$t/scripts/kernel-health.sh" "$res/console.log" 2> "$res/health.txt"; then
	echo "fuzz: FAIL: kernel report:"
	sed 's/^/fuzz:   /' "$res/health.txt"
	rc=1
fi
log=$res/fuzz/run.log
if [ -f "$log" ]; then
	grep -E '^itrace-fuzz: (FINDING|kernel report|kept|note|known finding ")' "$log" |
		sed 's/^itrace-fuzz: /fuzz: /'
	grep -E '^itrace-fuzz: seed .*: [0-9]* ops ' "$log" | sed 's/^itrace-fuzz: /fuzz: /'
	frc=$(cat "$res/fuzz/rc" 2>/dev/null || echo missing)
	if [ "$frc" != 0 ]; then
		echo "fuzz: FAIL: itrace-fuzz exit status $frc (see $log)"
		rc=1
	fi
else
	echo "fuzz: FAIL: no run log came back (see $res/console.log)"
	rc=1
fi
[ "$rc" = 0 ] && echo "fuzz: ok" || echo "fuzz: FAILED; seed $seed, logs in $res"
exit "$rc"
