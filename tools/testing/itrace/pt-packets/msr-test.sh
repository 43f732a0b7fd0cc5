#!/bin/bash
# Bare-metal check of the emulated Intel PT programming interface (TAP):
# CPUID, IA32_RTIT_* #GP rules, ToPA END/INT/STOP and ToPA errors, the
# perfmon MSRs and the ToPA PMI (GLOBAL_STATUS bit 55, LVT NMI), then a CPL0
# 32-bit trace (with #GP exceptions inside it) decoded by libipt against
# msr-test's ELF.
#
#   tools/testing/itrace/pt-packets/msr-test.sh [BUILD]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=$BUILD/pt-packets/msr-test
mkdir -p "$out"

build_ptcheck "$out"
build_baremetal msr-test "$out"

timeout 120 "$qemu" -L /usr/share/qemu -L /usr/share/seabios -display none \
	-nic none -no-reboot -m 64M -cpu "$cpu" \
	-device isa-debug-exit,iobase=0xf4,iosize=4 -serial stdio \
	-kernel "$out/msr-test" 2>&1 | tr -d '\r' > "$out/console.log" || true

retap "" "$out/console.log" '# bench*'
if [ $n -eq 0 ]; then
	n=1 fail=1
	echo "not ok 1 msr-test ran"
fi

sym() { nm "$out/msr-test" | awk -v s="$1" '$3 == s { print $1 }'; }
# Packet fields (ptcheck PTCHECK_PKT) against msr-test's code: the WRMSRs
# (and the instructions after them and after each MOV to CR3) from its
# disassembly, its symbols; all of it runs in 32-bit protected mode.
wrmsr=$(insn_addrs "$out/msr-test" '^wrmsr$')
after_wrmsr=$(insn_addrs "$out/msr-test" '^wrmsr$' "" next)
after_cr3=$(insn_addrs "$out/msr-test" '^mov +%e[a-z]+,%cr3$' "" next)
m32="mode.exec/32>=1 mode.exec/64=0 mode.exec/16=0"
# PT-HEX: traced_work(2000) calls leaf_fn through fnptr 667 times (a TIP
# to leaf_fn each), and 5 WRMSRs #GP while tracing: FUP at the WRMSR, TIP
# to gp_entry, IRET's TIP past the WRMSR; the WRMSR that clears TraceEn
# gives a FUP with the IP after it, then TIP.PGD.
declare -A pkt=(
	[PT-HEX]="tip@:leaf_fn=667 fup>tip@$wrmsr=5 tip@:gp_entry=5 tip@$after_wrmsr=5
		fup>tip.pgd@$after_wrmsr=1 $m32"
	# CR3 filter: 300 iterations traced, 100 calls through fnptr; TIP.PGE
	# after the MOV to CR3 that matches, TIP.PGD (no IP) at the one that
	# does not, a PIP with CR3 0x1000 (PTCHECK_PIP) at the MOV in between.
	[PT-HEX3]="tip@:leaf_fn=100 tip.pge@$after_cr3=1 tip.pgd/ipc0=1 $m32"
	[PT-HEX6]="tip@:leaf_fn=1000 $m32"
	[PT-HEX6-tsc]="tsc>=2"
	# IP filter on leaf_fn: enter it 500 times (TIP.PGE at leaf_fn),
	# leave it 500 times by RET into traced_work (TIP.PGD with that IP).
	[PT-HEX7]="tip.pge@:leaf_fn=500 tip.pgd@traced_work=500 tip.pgd/ipc0=0 $m32"
	# TraceStop at stop_fn: TIP.PGD with stop_fn's IP, then TraceStop.
	[PT-HEX8]="tip.pgd@:stop_fn=1 tip.pgd>stop@:stop_fn=1 stop=1 $m32"
)
# PT-HEX: 2000 iterations with #GP inside; PT-HEX3: CR3 filter, 300 traced.
for t in PT-HEX:2000 PT-HEX3:300; do
	tag=${t%:*} want=${t#*:}
	awk -v b="$tag-BEGIN" -v e="$tag-END" '$0 == b { t = 1; next } $0 == e { exit } t' \
		"$out/console.log" | tr -d '\n' | xxd -r -p > "$out/$tag.bin"
	pip=
	[ $tag = PT-HEX3 ] && pip=1000
	PTCHECK_PIP=$pip PTCHECK_PKT=${pkt[$tag]} \
	"$out/ptcheck" "$out/$tag.bin" "$out/msr-test" "$(sym leaf_fn)=$want" \
		"$(sym traced_work)=1" > "$out/$tag.tap" 2> "$out/$tag.err" || true
	sed 's/^/# /' "$out/$tag.err" | head -20
	retap "$tag: " "$out/$tag.tap"
done
# PT-HEX6: 3000 iterations with TSC, MTC/TMA, CYC, CBR and PSBFreq 1; the
# packets are checked against the RTIT_CTL value msr-test printed.
ctl6=$(awk '$1 == "#" && $2 == "PT-CTL6" { print $3 }' "$out/console.log")
# RDTSC before enabling and after disabling (hi lo hi lo, hex): every TSC
# packet's value lies in between.
tsc6=$(awk 'function pad(x) { while (length(x) < 8) x = "0" x; return x }
	$1 == "#" && $2 == "PT-TSC6" { print "0x" $3 pad($4) "-0x" $5 pad($6) }' "$out/console.log")
awk '$0 == "PT-HEX6-BEGIN" { t = 1; next } $0 == "PT-HEX6-END" { exit } t' \
	"$out/console.log" | tr -d '\n' | xxd -r -p > "$out/PT-HEX6.bin"
if [ -n "$ctl6" ]; then
	PTCHECK_PKT="${pkt[PT-HEX6]} tsc@${tsc6:-bad}=all ${pkt[PT-HEX6-tsc]}" PTCHECK_CTL=$ctl6 PTCHECK_PSBGAP=1 "$out/ptcheck" "$out/PT-HEX6.bin" \
		"$out/msr-test" "$(sym leaf_fn)=3000" "$(sym traced_work)=1" \
		> "$out/PT-HEX6.tap" 2> "$out/PT-HEX6.err" || true
	sed 's/^/# /' "$out/PT-HEX6.err" | head -20
	retap "PT-HEX6 (timing): " "$out/PT-HEX6.tap"
else
	notok "PT-HEX6 (timing): msr-test printed its RTIT_CTL"
fi
# PT-HEX7: IP filter on leaf_fn (ADDR0), traced_work(500): only leaf_fn's
# instructions, 500 entries.  PT-HEX8: TraceStop on stop_fn (ADDR1) after
# 151 calls of leaf_fn: nothing of stop_fn, and tracing ends there.
lo=$(sym leaf_fn) hi=$(sym leaf_fn_end)
for t in "PT-HEX7:500:$lo-$hi" "PT-HEX8:151:"; do
	IFS=: read -r tag want range <<< "$t"
	awk -v b="$tag-BEGIN" -v e="$tag-END" '$0 == b { t = 1; next } $0 == e { exit } t' \
		"$out/console.log" | tr -d '\n' | xxd -r -p > "$out/$tag.bin"
	if [ ! -s "$out/$tag.bin" ]; then
		notok "$tag: trace dumped"
		continue
	fi
	extra=("$(sym traced_work)=0")
	[ $tag = PT-HEX8 ] && extra+=("$(sym stop_fn)=0")
	PTCHECK_PKT=${pkt[$tag]} PTCHECK_RANGE=$range "$out/ptcheck" "$out/$tag.bin" "$out/msr-test" \
		"$(sym leaf_fn)=$want" "${extra[@]}" > "$out/$tag.tap" 2> "$out/$tag.err" || true
	sed 's/^/# /' "$out/$tag.err" | head -20
	label=TraceStop
	[ -n "$range" ] && label="IP filter $range"
	retap "$tag ($label): " "$out/$tag.tap"
	if [ $tag = PT-HEX7 ]; then
		read -r pge pgd < <(awk '/^# [0-9]+ bytes:/ { for (i = 3; i <= NF; i++) {
			split($i, kv, "="); c[kv[1]] = kv[2] } }
			END { print c["tip.pge"] + 0, c["tip.pgd"] + 0 }' "$out/$tag.tap")
		check "$tag: a TIP.PGE and a TIP.PGD per entry ($pge, $pgd; want 500)" \
			[ "$pge" = 500 -a "$pgd" = 500 ]
	else
		stops=$(awk '/^# [0-9]+ bytes:/ { for (i = 3; i <= NF; i++) {
			split($i, kv, "="); if (kv[1] == "stop") print kv[2] } }' "$out/$tag.tap")
		check "$tag: one TraceStop packet (${stops:-0})" [ "${stops:-0}" = 1 ]
	fi
done
# PT-HEX9: a far jump into a 16-bit code segment and back (mode16_run):
# MODE.Exec 16-bit (CS.D = CS.L = 0) and a TIP to the copy of the code at
# 0x8000, the loop's 4 taken and 1 not-taken branch, MODE.Exec 32-bit and
# a TIP to mode16_back.  Packets only: the 16-bit copy is not in the ELF.
awk '$0 == "PT-HEX9-BEGIN" { t = 1; next } $0 == "PT-HEX9-END" { exit } t' \
	"$out/console.log" | tr -d '\n' | xxd -r -p > "$out/PT-HEX9.bin"
PTCHECK_PKT="mode.exec/16=1 tip@0x8000=1 mode.exec/32>=2 mode.exec/64=0
	tip@0x$(sym mode16_back)=1 tnt.8/5=1" \
	"$out/ptcheck" "$out/PT-HEX9.bin" > "$out/PT-HEX9.tap" 2> "$out/PT-HEX9.err" || true
sed 's/^/# /' "$out/PT-HEX9.err" | head -20
retap "PT-HEX9 (16-bit mode): " "$out/PT-HEX9.tap"

# The first generation's ToPA, one output entry per table
# (intel-pt-topa-multi=off): msr-test "single" runs only its tests of it.
timeout 120 "$qemu" -L /usr/share/qemu -L /usr/share/seabios -display none \
	-nic none -no-reboot -m 64M -cpu "$cpu,intel-pt-topa-multi=off" \
	-device isa-debug-exit,iobase=0xf4,iosize=4 -serial stdio \
	-kernel "$out/msr-test" -append single 2>&1 | tr -d '\r' > "$out/console-single.log" || true
n0=$n
retap "" "$out/console-single.log"
[ $n -gt $n0 ] || notok "msr-test single ran"
echo "1..$n"
[ $fail -eq 0 ]
