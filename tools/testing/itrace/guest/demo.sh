# Guest half of `make run` (busybox sh): trace the demo program through the
# trace fd, user mode only, and hand the recording back.
set -u
. /etc/itrace.env
echo "itrace record -o $OUT/demo.itrace -- $ITRACE_BUILD/progs/demo"
"$ITRACE_BUILD/tools/itrace/itrace" record -o "$OUT/demo.itrace" -- "$ITRACE_BUILD/progs/demo"
