#!/bin/bash
# The emulated CPU's performance counters under the upstream x86 PMU
# driver and Debian's perf (TAP; guest half: pmu-guest.sh):
#  - perf record -e instructions:u -c N of pmu-loop, a program of known
#    length: as many samples as N divides its instructions, each at the
#    instruction right after the N-th one since the last (the PMI comes
#    after the instruction that overflows the counter: qemu/README.md);
#  - perf stat of it: its instructions and branches, exactly;
#  - perf record -e cycles: samples;
#  - open, read, multiplex (more events than counters) and close counter
#    events, raw, cache and hardware ones, user-space RDPMC, as root and
#    as an unprivileged user: the kernel's log stays clean.
#
#   tools/testing/itrace/pt-packets/pmu.sh [BUILD]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
export BUILD
out=$BUILD/pt-packets/pmu
mkdir -p "$out"
period=100003 iters=5000000

gcc -O2 -static -nostdlib -no-pie -fno-pie -DPMU_LOOP_ITERS=$iters \
	-o "$out/pmu-loop" "$here/pmu-loop.c"
gcc -O2 -Wall -Wextra -static -o "$out/pmu-events" "$here/pmu-events.c"
echo "PMU_PERIOD=$period" > "$out/pmu-params"
perf=/usr/bin/perf
libs=$(ldd $perf | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sed 's,^/lib,/usr/lib,')
tar -chf "$out/perf.tar" -C / ${perf#/} $(for l in $libs; do echo "${l#/}"; done)
"$top/tools/testing/itrace/scripts/run-vm.sh" -t 900 -o "$out/vm" "$here/pmu-guest.sh" \
	"$out/perf.tar" "$out/pmu-loop" "$out/pmu-events" "$out/pmu-params" > "$out/run-vm.log" 2>&1
rc=$?
vm=$out/vm
check "guest ran (run-vm exit $rc)" [ $rc -eq 0 ]
d=$vm/dmesg-end.txt
line=$(grep -m1 'Performance Events:' "$d" 2>/dev/null | sed 's/^\[[^]]*\] //')
echo "# $line"
check "Intel PMU driver initialised" grep -q 'Performance Events:.*Intel PMU driver' "$d"
check "kernel health: no WARN/BUG/Oops/KASAN/lockdep report in the console log" \
	"$top/tools/testing/itrace/scripts/kernel-health.sh" "$vm/console.log"
for bad in 'unchecked MSR access' 'irq loop stuck' 'NMI received for unknown reason' \
	'Dazed and confused' 'perf: interrupt took too long'; do
	check "dmesg: no '$bad'" bash -c "! grep -q '$bad' '$d'"
done

# 1. perf record -e instructions:u -c N: samples and their IPs.
insns=$((1 + 4 * iters + 3))
want=$((insns / period))
got=$(grep -c . "$vm/loop.ips" 2>/dev/null)
echo "# pmu-loop: $insns instructions, period $period: $got samples (want $want)"
check "perf record -e instructions:u -c $period: exit 0" grep -qx 'rc 0' "$vm/record.log"
check "samples = instructions / period: $got = $insns / $period" [ "${got:-0}" = "$want" ]
sym() { nm "$out/pmu-loop" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
# pmu-loop's 8 instruction addresses, decimal: _start, the loop's 4, done's 3
body=$(objdump -d --no-show-raw-insn "$out/pmu-loop" |
	awk -F'\t' '/^ *[0-9a-f]+:\t/ { a = $1; sub(/^ */, "", a); sub(/:$/, "", a); print a }' |
	while read -r a; do echo $((0x$a)); done | tr '\n' ' ')
# The instruction with 1-based number J in program order: _start, the
# loop's 4 ITERS times, then done's 3; sample K is at instruction K*N+1.
awk -v n="$want" -v p="$period" -v it="$iters" -v body="$body" '
	function insn(j) {
		if (j == 1) return a[1]
		if (j <= 1 + 4 * it) return a[2 + (j - 2) % 4]
		return a[6 + j - 2 - 4 * it]
	}
	BEGIN { split(body, a, " ")
		for (k = 1; k <= n; k++) printf "%x\n", insn(k * p + 1) }' > "$out/want.ips"
sed 's/^ *//; s/^0*//' "$vm/loop.ips" 2>/dev/null > "$out/got.ips"
lo=$(( $(sym _start) )) hi=$(( $(sym done) + 9 ))
# A sample may say the first instruction of an interrupt handler: the
# PMI (an NMI) and a timer interrupt due at the same instruction boundary,
# the interrupt taken first (the skid the SDM allows); at most one or two
# of them a run, each in the kernel, the others exact.
kin=$(grep -c '^ffff' "$out/got.ips")
inprog=$(while read -r a; do
		case $a in ffff*) continue ;; esac
		v=$((0x$a))
		[ $v -ge $lo ] && [ $v -lt $hi ] || echo bad
	done < "$out/got.ips" | grep -c bad)
check "every sample IP in pmu-loop's code ($inprog outside, $kin at an interrupt's entry)" \
	[ "$inprog" = 0 -a "$kin" -le 2 ]
mism=$(paste "$out/want.ips" "$out/got.ips" | awk '$2 !~ /^ffff/ && $1 != $2' | wc -l)
echo "# sample IPs: $(head -3 "$out/got.ips" | tr '\n' ' ')...; $mism lines differ from the model"
check "each sample IP is the instruction right after the k*N-th one (skid: the next instruction; $kin at an interrupt)" \
	[ "$mism" = 0 -a "${got:-0}" -gt 0 -a "$(wc -l < "$out/got.ips")" = "$(wc -l < "$out/want.ips")" ]

# 2. perf stat: exact counts.
si=$(awk -F, '$3 == "instructions:u" { print $1 }' "$vm/loop.stat" 2>/dev/null)
sb=$(awk -F, '$3 == "branches:u" { print $1 }' "$vm/loop.stat" 2>/dev/null)
echo "# perf stat pmu-loop: ${si:-?} instructions, ${sb:-?} branches"
check "perf stat -e instructions:u: $insns, exactly (${si:-?})" [ "${si:-x}" = "$insns" ]
check "perf stat -e branches:u: $((iters + 1)), exactly (${sb:-?})" [ "${sb:-x}" = "$((iters + 1))" ]

# 3. cycles.
cs=$(grep -c . "$vm/cycles.ips" 2>/dev/null)
cu=$(grep -c ' loop\| done\| _start' "$vm/cycles.ips" 2>/dev/null)
echo "# perf record -e cycles -F 1000: $cs samples, $cu in pmu-loop's code"
check "perf record -e cycles: exit 0, samples ($cs, $cu in the program)" \
	bash -c "grep -qx 'rc 0' '$vm/cycles.log' && [ '${cu:-0}' -gt 0 ]"

# 4-5. events as root and unprivileged, multiplexed perf stat.
retap "root: " "$vm/events-root.tap"
retap "nobody: " "$vm/events-nobody.tap"
check "perf stat of 13 events (multiplexed), user and kernel: exit 0" grep -qx 'rc 0' "$vm/mux.log"
sed 's/^/# mux: /' "$vm/mux.stat" 2>/dev/null | grep -v '^# mux: #' | head -13
check "perf stat as nobody (paranoid 2), user-mode events: exit 0" grep -qx 'rc 0' "$vm/nobody.log"
nu=$(awk -F, '$3 == "instructions:u" { print $1 }' "$vm/nobody.stat" 2>/dev/null)
check "perf stat as nobody: instructions:u exact ($nu)" [ "${nu:-x}" = "$insns" ]
echo "1..$n"
[ $fail -eq 0 ]
