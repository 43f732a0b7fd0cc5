# Guest half of `make check` (busybox sh).  Runs every in-guest layer and
# leaves its results in $OUT for the host to judge:
#   $OUT/kselftest/<name>.tap   KTAP of each kselftest binary
#                               (perf_events-<name>.tap: upstream perf_events)
#   $OUT/e2e/                   recordings of the end-to-end programs
#   $OUT/record/                itrace record's own tests (record.sh)
#   $OUT/samples/               itrace record -e: samples with trace (samples.sh)
#   $OUT/pt-sysfs.txt           the intel_pt PMU as the guest sees it
set -u
. /etc/itrace.env

pt=/sys/bus/event_source/devices/intel_pt
{
	echo "type $(cat $pt/type 2>/dev/null || echo missing)"
	for c in $pt/caps/*; do
		[ -f "$c" ] && echo "cap $(basename "$c") $(cat "$c")"
	done
	grep -m1 'model name' /proc/cpuinfo
	grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -x intel_pt
} > "$OUT/pt-sysfs.txt" 2>&1

# First thing after boot, before any process ever set RLIMIT_ITRACE: a
# launcher that is not dumpable sets it and executes a dumpable program,
# which must be traced (kernel hooks once enabled only on the dumpable path).
mkdir -p "$OUT/kselftest"
"$ITRACE_BUILD/selftests/itrace/rlimit_itrace" -t launcher_nondumpable_exec \
	> "$OUT/kselftest/rlimit_itrace-firstboot.tap" 2>&1

ks=$ITRACE_SRC/tools/testing/itrace/guest/kselftests.sh
sh "$ks" "$ITRACE_BUILD/selftests/itrace" "$OUT/kselftest"
# Old binaries still work: upstream's perf_events selftests, unchanged and
# built against the C library's uAPI headers (the Makefile says which),
# with the series' aux_fixes (built against the kernel's).
sh "$ITRACE_SRC/tools/testing/itrace/guest/perf-events.sh" \
	"$ITRACE_BUILD/selftests/perf_events" "$OUT/kselftest" perf_events-

mkdir -p "$OUT/e2e"
echo "guest: end-to-end recordings"
sh "$ITRACE_SRC/tools/testing/itrace/guest/e2e-record.sh" "$OUT/e2e"

echo "guest: itrace record: threads, children, attach, CPU-wide, filter, snapshots, signals"
sh "$ITRACE_SRC/tools/testing/itrace/guest/record.sh" "$OUT/record"

echo "guest: itrace record -e: samples with trace (PERF_SAMPLE_ITRACE)"
sh "$ITRACE_SRC/tools/testing/itrace/guest/samples.sh" "$OUT/samples"

echo "guest: core dumps with RLIMIT_ITRACE"
sh "$ITRACE_SRC/tools/testing/itrace/guest/coredump.sh" "$OUT/coredump"
exit 0
