#!/bin/bash
# `make check`: every test layer (DESIGN.md section 7), one summary line
# "N passed, N failed" at the end.  Exit status 0 only if nothing failed.
#
# Two lanes, one per core of the 2-core machine it is made for.  The
# second lane runs the host-only checks (check-host.sh) in the
# background; the first runs the one-vCPU guests (kselftests and
# end-to-end recordings, ToPA variants, conformance) with their
# host-side verification.  A one-vCPU TCG guest keeps one host thread
# busy (QEMU's main loop takes a few percent of a core), so the lanes
# barely slow each other.  Once both are done, the second lane's results
# are printed and counted, then what runs alone: the emulator's own
# checks (pt-packets: its migration test found no OVF once when it ran
# beside the conformance guest), the two-vCPU guest and the uAPI fuzzer.
# Each stage heading says when it began, in seconds since the start.
set -uo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
top=$(cd "$t/../../.." && pwd)
res=$BUILD/check
rm -rf "$res"
mkdir -p "$res"
. "$here/check-lib.sh"

# The second lane, in its own process group (setsid): killed with all
# it started if this script ends first
CHECK_RES=$res setsid "$here/check-host.sh" > "$res/host.out" 2>&1 < /dev/null &
lane2=$!
trap 'kill -- -"$lane2" 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP

stage "layer 2-3: guest (kselftests, end-to-end recordings)"
g=$res/guest
# vm_result NAME RC DIR: the guest run's exit status and its kernel log
vm_result() {
	case $2 in
	0)   result ok "$1/run" ;;
	124) result fail "$1/run" "timed out" ;;
	125) result fail "$1/run" "guest ran, but the kernel log has a report" ;;
	*)   result fail "$1/run" "exit $2; see $3/cmd.log, $3/console.log" ;;
	esac
	if "$here/kernel-health.sh" "$3/console.log" 2>"$3.health.txt"; then
		result ok "$1/kernel-health (no WARN/BUG/KASAN/lockdep/kmemleak)"
	else
		result fail "$1/kernel-health" "$(head -3 "$3.health.txt" | tr '\n' ' ')"
	fi
}
"$here/run-vm.sh" -t 1200 -o "$g" "$t/guest/check.sh"
vm_result guest $? "$g"
boot=$(sed -n 's/.*itrace-guest: booted in \([0-9.]*\) s.*/\1/p' "$g/console.log" 2>/dev/null)
echo "   guest boot ${boot:-?} s (kernel uptime at init), whole VM run $(cat "$g/vm-seconds" 2>/dev/null || echo ?) s"

if grep -q '^type [0-9]' "$g/pt-sysfs.txt" 2>/dev/null &&
   grep -q '^cap topa_output 1' "$g/pt-sysfs.txt"; then
	result ok "guest/intel_pt-pmu-registered"
else
	result fail "guest/intel_pt-pmu-registered" "$(head -2 "$g/pt-sysfs.txt" 2>/dev/null | tr '\n' ' ')"
fi
# The brand string names the part the CPU model is (06_9EH stepping 0AH,
# Core i5-8600K) with its base frequency, which must be the TSC rate Linux
# measured: perf 6.1 takes the TSC frequency from /proc/cpuinfo's "model
# name" (its "#system_tsc_freq", used by metrics and perf test 7).
name=$(sed -n 's/^model name[^:]*: //p' "$g/pt-sysfs.txt" 2>/dev/null)
ghz=$(printf '%s\n' "$name" | sed -n 's/.*@ \([0-9.]*\)GHz$/\1/p')
mhz=$(sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' "$g/console.log" 2>/dev/null | head -1)
if [ -n "$ghz" ] && [ -n "$mhz" ] &&
   awk -v g="$ghz" -v m="$mhz" 'BEGIN { exit !(int(g * 1000 + 0.5) == int(m + 0.5)) }'; then
	result ok "guest/cpu-brand-tsc ($name, TSC $mhz MHz)"
else
	result fail "guest/cpu-brand-tsc" "model name '$name', TSC '${mhz:-?}' MHz"
fi

n=0
for f in "$g"/kselftest/*.tap; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	tap "$f" "kselftest/$(basename "$f" .tap)"
done
[ "$n" -gt 0 ] || result fail "kselftest" "no kselftest output came back from the guest"

stage "layer 3: end-to-end decode on the host"
"$here/e2e-verify.sh" "$g/e2e" > "$res/e2e.tap" 2>&1
tap "$res/e2e.tap" ""
stage "itrace record: threads and children, attach, CPU-wide, filter, snapshots, signals"
"$here/record-verify.sh" "$g/record" > "$res/record.tap" 2>&1
tap "$res/record.tap" ""

stage "itrace record -e / report: samples with trace against the program's call graph"
"$here/samples-verify.sh" "$g/samples" > "$res/samples.tap" 2>&1
tap "$res/samples.tap" ""

stage "RLIMIT_ITRACE core dumps: itrace core in the guest; readelf, gdb, itrace on the host"
tap "$g/coredump/coredump.tap" ""
"$t/guest/coredump.sh" --host "$g/coredump" > "$res/coredump-host.tap" 2>&1
tap "$res/coredump-host.tap" ""

stage "first-generation ToPA: one output entry per table (-cpu ...,intel-pt-topa-multi=off)"
gs=$res/topa-single
ITRACE_CPU_OPTS=intel-pt-topa-multi=off \
	"$here/run-vm.sh" -t 900 -o "$gs" "$t/guest/topa-single.sh"
vm_result topa-single $? "$gs"
if grep -q '^cap topa_multiple_entries 0' "$gs/pt-sysfs.txt" 2>/dev/null &&
   grep -q '^cap topa_output 1' "$gs/pt-sysfs.txt"; then
	result ok "topa-single/caps: topa_output 1, topa_multiple_entries 0"
else
	result fail "topa-single/caps" "$(tr '\n' ' ' < "$gs/pt-sysfs.txt" 2>/dev/null)"
fi
for f in "$gs"/kselftest/*.tap; do
	[ -f "$f" ] && tap "$f" "topa-single/kselftest/$(basename "$f" .tap)"
done
"$here/e2e-verify.sh" "$gs/e2e" > "$res/e2e-single.tap" 2>&1
tap "$res/e2e-single.tap" topa-single

stage "late ToPA PMIs (-cpu ...,intel-pt-pmi-delay=65536): overwrite mode stops, never laps, goes on"
gd=$res/pmi-delay
mkdir -p "$gd"
echo 65536 > "$res/pmi-delay.bytes"
ITRACE_CPU_OPTS=intel-pt-pmi-delay=65536 \
	"$here/run-vm.sh" -t 600 -o "$gd" "$t/guest/pmi-delay.sh" "$res/pmi-delay.bytes"
vm_result pmi-delay $? "$gd"
for f in "$gd"/kselftest/*.tap; do
	[ -f "$f" ] && tap "$f" "pmi-delay/kselftest/$(basename "$f" .tap)"
done
[ -f "$gd/kselftest/overwrite.tap" ] ||
	result fail "pmi-delay/kselftest" "no kselftest output came back from the guest"

stage "conformance: decoded traces against single-stepped ground truth (conformance/README)"
"$t/conformance/check.sh" "$BUILD" > "$res/conformance.tap" 2>&1
tap "$res/conformance.tap" conf
stage "the second lane: waited for"
wait "$lane2"
trap - EXIT
echo "== layer 1: host checks (check-host.sh, in the second lane)"
fold_results "$res/host.out"

stage "emulated Intel PT against the upstream driver, libipt and perf"
"$t/pt-packets/check.sh" "$BUILD" > "$res/pt-packets.tap" 2>&1
tap "$res/pt-packets.tap" pt

stage "two vCPUs (run-vm.sh -c 2): kselftests and end-to-end recordings"
gm=$res/smp
"$here/run-vm.sh" -t 900 -c 2 -o "$gm" "$t/guest/smp.sh"
vm_result smp $? "$gm"
if grep -qx 'nproc 2' "$gm/cpus.txt" 2>/dev/null; then
	result ok "smp/cpus: 2 online"
else
	result fail "smp/cpus" "$(tr '\n' ' ' < "$gm/cpus.txt" 2>/dev/null)"
fi
if grep -q '^cpus 2 moves 15 ' "$gm/e2e/migrate.out" 2>/dev/null; then
	result ok "smp/migrate: the traced thread moved 15 times between the CPUs"
else
	result fail "smp/migrate" "$(head -1 "$gm/e2e/migrate.out" 2>/dev/null)"
fi
for f in "$gm"/kselftest/*.tap; do
	[ -f "$f" ] && tap "$f" "smp/kselftest/$(basename "$f" .tap)"
done
"$here/e2e-verify.sh" "$gm/e2e" > "$res/e2e-smp.tap" 2>&1
tap "$res/e2e-smp.tap" smp
"$here/record-verify.sh" "$gm/record" smp > "$res/record-smp.tap" 2>&1
tap "$res/record-smp.tap" ""

stage "fuzz: random itrace uAPI sequences, root and nobody, two vCPUs (make fuzz, ${CHECK_FUZZ_SECONDS:=120} s)"
gf=$res/fuzz
FUZZ_SECONDS=$CHECK_FUZZ_SECONDS "$t/fuzz/run.sh" "$gf" > "$res/fuzz.txt" 2>&1
sum=$(sed -n 's/^itrace-fuzz: \(seed .*: [0-9]* ops .*\)$/\1/p' "$gf/fuzz/run.log" 2>/dev/null)
if [ -n "$sum" ]; then
	result ok "fuzz/run: $sum"
else
	result fail "fuzz/run" "no summary; see $res/fuzz.txt, $gf/console.log"
fi
if "$here/kernel-health.sh" "$gf/console.log" 2>"$gf.health.txt"; then
	result ok "fuzz/kernel-health (no WARN/BUG/KASAN/lockdep/kmemleak)"
else
	result fail "fuzz/kernel-health" "$(head -3 "$gf.health.txt" | tr '\n' ' ')"
fi
if [ -n "$sum" ] && ! grep -q '^itrace-fuzz: FINDING' "$gf/fuzz/run.log"; then
	result ok "fuzz/findings: none (the uAPI document's errnos, fields, signals, notes)"
else
	result fail "fuzz/findings" "$(grep -m2 '^itrace-fuzz: FINDING' "$gf/fuzz/run.log" 2>/dev/null | tr '\n' ' ')see $res/fuzz.txt"
fi

echo
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
