#!/bin/bash
# The ToPA PMI against the upstream x86 PMU and intel_pt drivers (TAP):
# the perfmon model lets the Intel PMU driver initialise; a trace many
# times larger than a 2-page buffer stops when the buffer is full (stop
# mode: PMIs, loss records, tracing resumes after the reader drains) and
# wraps forever in overwrite mode (the newest data decodes from its first
# PSB without error; two PMIs per lap count the wraps).  Guest half:
# pmi-guest.sh.
#
#   tools/testing/itrace/pt-packets/pmi.sh [BUILD]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
export BUILD
out=$BUILD/pt-packets/pmi
mkdir -p "$out"

gcc -O1 -g -Wall -static -no-pie -o "$out/pmi-spin" "$here/pmi-spin.c"
"$top/tools/testing/itrace/scripts/run-vm.sh" -t 900 -o "$out/vm" \
	"$here/pmi-guest.sh" "$out/pmi-spin" > "$out/run-vm.log" 2>&1
rc=$?
check "guest ran (run-vm exit $rc)" [ $rc -eq 0 ]
vm=$out/vm
d=$vm/dmesg-end.txt

line=$(grep -m1 'Performance Events:' "$d" 2>/dev/null | sed 's/^\[[^]]*\] //')
echo "# $line"
check "Intel PMU driver initialised" grep -q 'Performance Events:.*Intel PMU driver' "$d"
check "not 'software events only'" bash -c "! grep -q 'software events only' '$d'"
for bad in 'irq loop stuck' 'NMI received for unknown reason' 'ToPA ERROR' \
	'WARNING:' 'Dazed and confused'; do
	check "dmesg: no '$bad'" bash -c "! grep -q '$bad' '$d'"
done

val() { awk -v k="$2" '$1 == k { print $2 }' "$vm/$1" 2>/dev/null; }
stat_of() { awk -v k="$2" '$1 == "total" && $2 == k { print $3 }' "$vm/$1.stats" 2>/dev/null; }
bytes() { sed -n 's/.*recorded \([0-9]*\) bytes.*/\1/p' "$vm/$1.record" 2>/dev/null; }
buf=$((2 * 4096))	# overwrite mode
sbuf=$((2 * 4096))	# stop mode (see pmi-guest.sh)

full=$(bytes full)
echo "# whole trace (1 MiB buffer): ${full:-?} bytes, $(stat_of full insns) instructions, $(stat_of full gaps) gaps"
check "whole trace is many (>= 8) times the stop-mode buffer (${full:-0} bytes)" \
	[ "${full:-0}" -ge $((8 * sbuf)) ]
check "1 MiB buffer: no loss, no decode error" \
	[ "$(stat_of full gaps)" = 0 -a "$(stat_of full errors)" = 0 ]

stop=$(bytes stop)
echo "# stop mode: $(val stop.record pmis) PMIs, ${stop:-?} bytes kept, $(stat_of stop gaps) losses, $(stat_of stop insns) instructions"
check "stop mode: itrace record succeeded" [ "$(val stop.record rc)" = 0 ]
check "stop mode: the trace never overran data_tail" \
	bash -c "! grep -q 'ring overrun' '$vm/stop.record'"
check "stop mode: PMIs counted in /proc/interrupts ($(val stop.record pmis))" \
	[ "$(val stop.record pmis)" -ge 2 ]
check "stop mode: the full buffer stopped the trace: loss reported ($(stat_of stop gaps))" \
	[ "$(stat_of stop gaps)" -ge 1 ]
check "stop mode: tracing resumed after the reader drained (${stop:-0} > $sbuf bytes kept)" \
	[ "${stop:-0}" -gt $sbuf ]
check "stop mode: less kept than traced (${stop:-0} < ${full:-0})" \
	[ "${stop:-0}" -lt "${full:-0}" ]
check "stop mode: kept trace decodes without error" [ "$(stat_of stop errors)" = 0 ]

echo "# overwrite mode: $(val snap.record pmis) PMIs, $(bytes snap) bytes, $(stat_of snap insns) instructions"
check "overwrite mode: itrace record succeeded" [ "$(val snap.record rc)" = 0 ]
# Overwrite mode counts every byte through the trace fd: an INT on the
# ToPA entry holding the middle of the buffer and on the last one, two
# PMIs per lap of the buffer (DESIGN.md "Who owns the buffers").
laps=$(( ${full:-0} / buf ))
check "overwrite mode: PMIs count the wraps ($(val snap.record pmis) PMIs, about 2 per lap, $laps laps)" \
	[ "$(val snap.record pmis)" -ge "$laps" -a "$(val snap.record pmis)" -le $((3 * laps + 4)) ]
check "overwrite mode: newest data decodes from its first PSB without error" \
	[ "$(stat_of snap errors)" = 0 -a "$(stat_of snap insns)" -gt 1000 ]
check "overwrite mode: the buffer wrapped (start of the program overwritten)" \
	bash -c "! grep -q '^insns _start ' '$vm/snap.stats' && grep -q '^insns main ' '$vm/snap.stats'"
check "overwrite mode: data kept <= buffer" [ "$(bytes snap)" -le $buf ]
echo "1..$n"
[ $fail -eq 0 ]
