# SPDX-License-Identifier: GPL-2.0
#
# Guest half of the single-entry ToPA run of `make check` (busybox sh): the
# guest boots with `-cpu ...,intel-pt-topa-multi=off`, the first Intel PT
# generation's ToPA (CPUID.14H.0:ECX[1] = 0: one output entry per table,
# an early PMI). Leaves in $OUT:
#   pt-sysfs.txt          caps of the intel_pt PMU
#   kselftest/<name>.tap  the kselftests that hold for both ToPA kinds
#   e2e/                  recordings of the end-to-end programs
set -u
. /etc/itrace.env

pt=/sys/bus/event_source/devices/intel_pt
for c in $pt/caps/*; do
	[ -f "$c" ] && echo "cap $(basename "$c") $(cat "$c")"
done > "$OUT/pt-sysfs.txt" 2>&1

mkdir -p "$OUT/kselftest"
st=$ITRACE_BUILD/selftests/itrace
run() {
	n=$1
	shift
	echo "guest: kselftest $n $*"
	timeout 300 "$@" > "$OUT/kselftest/$n.tap" 2>&1
	echo "# exit status $?" >> "$OUT/kselftest/$n.tap"
}
# Left out of trace_fd: the five that map a read-only trace (ENOMEM without
# multiple entries, which read_only_needs_multiple_entries checks), and
# two that time stop-mode loss records: Linux's single-entry path stops at
# the next perf_aux_output_begin() without an AUX TRUNCATED record, and a
# poller woken at the watermark may run before that loss record is out
# (stop_stress below checks every byte and every loss record either way).
run trace_fd "$st/trace_fd" \
	-T second_mapping_ebusy -T mremap_and_split \
	-T poll_read_only_never_readable -T remap_while_tracing \
	-T trace_child_read_only \
	-T stop_mode_itrace_lost -T poll_stop_mode
run overwrite "$st/overwrite" -r self_pt.read_only_needs_multiple_entries
run stop_stress "$st/stop_stress"

mkdir -p "$OUT/e2e"
echo "guest: end-to-end recordings"
sh "$ITRACE_SRC/tools/testing/itrace/guest/e2e-record.sh" "$OUT/e2e"
exit 0
