# Guest half of bts.sh (busybox sh): the emulated Branch Trace Store
# through Linux's stock intel_bts driver and Debian's perf.  /in/perf.tar:
# perf and its libraries; /in/bts-prog (bts.sh builds it).
set -u
. /etc/itrace.env
tar -xf /in/perf.tar -C / && rm -f /in/perf.tar
perf=/usr/bin/perf
cd /tmp
dmesg > "$OUT/dmesg-boot.txt"
ls /sys/bus/event_source/devices/ > "$OUT/pmus.txt"
grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -x 'dts\|dtes64\|ds_cpl\|bts' \
	> "$OUT/cpuflags.txt"
# Every PMI counts here: no throttling for the time the (slow, emulated)
# BTS PMI handler takes to drain thousands of kernel records.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

# User-mode branches of bts-prog, per thread (BTS's only mode).
$perf record -e intel_bts//u --per-thread -m ,64 -o /tmp/bts.data /in/bts-prog \
	> "$OUT/record.log" 2>&1
echo "rc $?" >> "$OUT/record.log"
# All branches: from (ip) and to (addr) of each record.
$perf script -i /tmp/bts.data --itrace=b -F ip,addr > "$OUT/branches.txt" \
	2> "$OUT/script.log"
echo "rc $?" >> "$OUT/script.log"
$perf script -i /tmp/bts.data --itrace=b -F ip,sym,addr,flags \
	> "$OUT/branches-sym.txt" 2>&1
$perf script -i /tmp/bts.data -D > "$OUT/dump.txt" 2>&1

# The same with kernel and user branches, for the kernel's health.
$perf record -e intel_bts// --per-thread -m ,64 -o /tmp/bts-k.data /in/bts-prog \
	> "$OUT/record-k.log" 2>&1
echo "rc $?" >> "$OUT/record-k.log"
$perf script -i /tmp/bts-k.data --itrace=b -F ip,addr > "$OUT/branches-k.txt" \
	2> "$OUT/script-k.log"
echo "rc $?" >> "$OUT/script-k.log"

# itrace record of the same program through BTS and through PT (bts.sh
# decodes both on the host: the same instructions)
itrace=$ITRACE_BUILD/tools/itrace/itrace
$itrace record --pmu intel_bts -o "$OUT/bts-prog.bts.itrace" -- /in/bts-prog \
	> "$OUT/itrace-bts.log" 2>&1
echo "rc $?" >> "$OUT/itrace-bts.log"
$itrace record -o "$OUT/bts-prog.pt.itrace" -- /in/bts-prog \
	> "$OUT/itrace-pt.log" 2>&1
echo "rc $?" >> "$OUT/itrace-pt.log"

# intel_bts with itrace: the kselftest of its trace fds
timeout 300 "$ITRACE_BUILD/selftests/itrace/bts" > "$OUT/kselftest-bts.tap" 2>&1
echo "# exit status $?" >> "$OUT/kselftest-bts.tap"
# a user's intel_bts event beside the core-dump (kernel-owned PT) trace;
# intel_bts serving core dumps, and a user's PT event beside it
timeout 300 "$ITRACE_BUILD/selftests/itrace/rlimit_itrace" \
	-t bts_event_beside_core_trace -t bts_core_note -t bts_core_note_wrapped \
	-t bts_core_limit_clamps_records -t pt_event_beside_bts_core_trace \
	> "$OUT/kselftest-rlimit.tap" 2>&1
echo "# exit status $?" >> "$OUT/kselftest-rlimit.tap"

# Core dumps through intel_bts, decoded by itrace core (bts.sh matches them
# against the same expectations as intel_pt's)
crash=$ITRACE_BUILD/tools/itrace/crash
bts_dir=/sys/bus/event_source/devices/intel_bts/itrace
pt_dir=/sys/bus/event_source/devices/intel_pt/itrace
pattern=$(cat /proc/sys/kernel/core_pattern)
mkdir -p /tmp/bts-cores
echo "/tmp/bts-cores/core.%p" > /proc/sys/kernel/core_pattern
echo 1 > "$bts_dir/coredump"
cat "$bts_dir/coredump" > "$OUT/bts-coredump-selected.txt"
for p in crashnull crashabort crashplt; do
	rm -f /tmp/bts-cores/core.*
	(ulimit -c unlimited; "$crash/$p") > /dev/null 2>&1
	core=$(ls /tmp/bts-cores/core.* 2>/dev/null | head -n 1)
	"$ITRACE_BUILD/tools/itrace/itrace" core -n 64 "${core:-/nonexistent}" \
		> "$OUT/core-bts-$p.txt" 2>&1
	echo "rc $?" >> "$OUT/core-bts-$p.txt"
done
echo 1 > "$pt_dir/coredump"
echo "$pattern" > /proc/sys/kernel/core_pattern

# PERF_SAMPLE_ITRACE of intel_bts: samples of page faults and of an execute
# breakpoint, each with the newest BTS records (bts.sh reports them)
mkdir -p "$OUT/bts-samples"
for t in "pf page-faults" "bp mem:target:x"; do
	set -- $t
	"$ITRACE_BUILD/tools/itrace/itrace" record --pmu intel_bts \
		-o "$OUT/bts-samples/$1.itrace" -e "$2" -- "$ITRACE_BUILD/progs/callers" \
		> "$OUT/bts-samples/$1.out" 2> "$OUT/bts-samples/$1.log"
	echo $? > "$OUT/bts-samples/$1.rc"
done
dmesg > "$OUT/dmesg-end.txt"
