#!/bin/bash
# Emulated Intel PT check (TAP): boot the test kernel on the emulated CPU,
# trace pt-guest (user mode, upstream intel_pt driver, AUX area), decode the
# trace on the host with libipt: packet layer, instruction flow against the
# same static ELF, and execution counts of the workload's functions; perf
# record with a 2-page AUX buffer in stop mode (ToPA PMIs) and snapshot mode.
#
#   tools/testing/itrace/pt-packets/run.sh [BUILD]
#
# Needs build/qemu-obj/qemu-system-x86_64 and the bzImage; libipt-dev, gcc,
# glibc static libraries (libc6-dev), busybox (static) and cpio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=$BUILD/pt-packets
mkdir -p "$out"

build_ptcheck "$out"
gcc -O1 -g -Wall -static -no-pie -o "$out/pt-guest" "$here/pt-guest.c"

# initramfs: static busybox, pt-guest, an init script
root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp}
cp /usr/bin/busybox "$root/bin/busybox"
cp "$out/pt-guest" "$root/pt-guest"
# perf, with its libraries at their host paths; pt-guest at its host path
# too, so that perf script on the host finds the traced ELF.
perf=/usr/bin/perf
if [ -x $perf ]; then
	for f in $perf $(ldd $perf | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
	mkdir -p "$root$out"
	cp "$out/pt-guest" "$root$out/pt-guest"
	echo "$out/pt-guest" > "$root/perf-target"
fi
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
echo "PT-CPUINFO $(grep -m1 'model name' /proc/cpuinfo)"
echo "PT-CPUFLAG $(grep -m1 -o -w intel_pt /proc/cpuinfo)"
d=/sys/bus/event_source/devices/intel_pt
if [ -d $d ]; then
	for f in $d/caps/*; do echo "PT-CAP ${f##*/} $(cat $f)"; done
fi
dmesg | grep -i -E 'intel_pt|Performance Events|PMU' | sed 's/^/PT-DMESG /'
dmesg | grep -i -E 'tsc|clocksource|sched_clock' | sed 's/^/PT-CLOCK /'
echo PT-RUN retcomp
/pt-guest 100
echo PT-RUN noretcomp
/pt-guest 100 noretcomp
echo PT-RUN long
/pt-guest 20000
echo PT-RUN snapshot
/pt-guest 100 snapshot
echo PT-RUN kernel
/pt-guest 100 kernel
echo PT-RUN timing
/pt-guest 2000 cfg=$(cat /timing-cfg)
echo PT-RUN compat
/pt-guest 100 compat
if [ -x /usr/bin/perf ]; then
	echo PT-RUN perf
	cd /tmp
	HOME=/tmp /usr/bin/perf record -e intel_pt//u -o /tmp/perf.data -- \
		$(cat /perf-target) 1000 notrace
	echo "PT-PERF-RC $?"
	echo PT-GUEST-BEGIN
	base64 /tmp/perf.data
	echo PT-GUEST-END
	echo PT-RUN perf-compat
	HOME=/tmp /usr/bin/perf record -e intel_pt//u -o /tmp/perf-compat.data -- \
		$(cat /perf-target) 100 notrace-compat
	echo "PT-PERF-RC $?"
	echo PT-GUEST-BEGIN
	base64 /tmp/perf-compat.data
	echo PT-GUEST-END
	rm -f /tmp/perf-compat.data
	echo PT-RUN perf-timing
	HOME=/tmp /usr/bin/perf record -T -e "intel_pt/$(cat /perf-timing)/u" \
		-o /tmp/perf-timing.data -- $(cat /perf-target) 1000 notrace
	echo "PT-PERF-RC $?"
	echo PT-GUEST-BEGIN
	base64 /tmp/perf-timing.data
	echo PT-GUEST-END
	rm -f /tmp/perf-timing.data
	# IP filtering through the upstream driver: FilterEn on fib, then
	# TraceStop on add_two.
	for m in "filter:filter fib" "tracestop:tracestop add_two"; do
		echo "PT-RUN perf-${m%%:*}"
		HOME=/tmp /usr/bin/perf record -e intel_pt//u \
			--filter "${m#*:} @ $(cat /perf-target)" \
			-o /tmp/perf-${m%%:*}.data -- $(cat /perf-target) 1000 notrace
		echo "PT-PERF-RC $?"
		echo PT-GUEST-BEGIN
		base64 /tmp/perf-${m%%:*}.data
		echo PT-GUEST-END
		rm -f /tmp/perf-${m%%:*}.data
	done
	# The ToPA PMI: a 2-page AUX buffer, a trace many times larger.
	pmis() { awk '$1 == "PMI:" { print $2 }' /proc/interrupts; }
	for m in stop:-m,2 snapshot:-Se:-m,2; do
		echo "PT-RUN perf-${m%%:*}"
		opts=$(echo "${m#*:}" | tr ':' ' ')
		p0=$(pmis)
		HOME=/tmp /usr/bin/perf record -e intel_pt//u $opts \
			-o /tmp/perf-${m%%:*}.data -- $(cat /perf-target) 20000 notrace
		echo "PT-PERF-RC $?"
		echo "PT-PMIS $(( $(pmis) - p0 ))"
		echo PT-GUEST-BEGIN
		base64 /tmp/perf-${m%%:*}.data
		echo PT-GUEST-END
		rm -f /tmp/perf-${m%%:*}.data
	done
	# Snapshot mode on demand: perf record -S takes a snapshot at each
	# SIGUSR2 (and, without "e", none at exit). Three while the workload
	# runs, each counted only if perf was still there to get it.
	echo "PT-RUN perf-sigusr2"
	t0=$(date +%s)
	HOME=/tmp /usr/bin/perf record -e intel_pt//u -S -m,2 \
		-o /tmp/perf-sigusr2.data -- $(cat /perf-target) 400000 notrace &
	pid=$!
	# perf handles SIGUSR2 once the workload has been exec'ed (before,
	# the signal would kill it): wait for the workload's name.
	tgt=$(basename "$(cat /perf-target)")
	i=0
	while [ -z "$(pidof "$tgt")" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sent=0
	for i in 1 2 3; do
		sleep 0.5
		kill -USR2 $pid 2>/dev/null && sent=$((sent + 1))
	done
	wait $pid
	echo "PT-PERF-RC $?"
	echo "PT-SIGUSR2 $sent $(( $(date +%s) - t0 ))"
	echo PT-GUEST-BEGIN
	base64 /tmp/perf-sigusr2.data
	echo PT-GUEST-END
	rm -f /tmp/perf-sigusr2.data
	cd /
fi
dmesg | grep -E 'irq loop stuck|NMI received for unknown|ToPA ERROR' | sed 's/^/PT-SPLAT /'
dmesg | grep -E 'WARNING:|BUG:|KASAN:|INFO: possible|DEBUG_LOCKS_WARN|Call Trace' | sed 's/^/PT-SPLAT /'
reboot -f
INIT
chmod +x "$root/init"
# Timing packets: pt-guest with tsc, mtc, mtc_period=3, cyc, cyc_thresh=1
# (IA32_RTIT_CTL bits 10, 9, 17:14, 1, 22:19); perf with its own names.
timing_cfg=8c602
echo $timing_cfg > "$root/timing-cfg"
echo "tsc,mtc,mtc_period=0,cyc,cyc_thresh=2,psb_period=1" > "$root/perf-timing"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null) > "$out/initramfs.cpio"

log=$out/console.log
timeout 600 "$qemu" -L /usr/share/qemu -L /usr/share/seabios \
	-nographic -no-reboot -nic none -m 1G -cpu "$cpu" -kernel "$kernel" ${QEMU_EXTRA:-} \
	-initrd "$out/initramfs.cpio" \
	-append "console=ttyS0 nmi_watchdog=0 panic=-1 quiet ${KERNEL_ARGS:-}" > "$log" 2>&1 || true
tr -d '\r' < "$log" > "$log.txt"

sed -n 's/^PT-CLOCK /# guest clock: /p' "$log.txt"
check "guest sees intel_pt in /proc/cpuinfo" grep -q '^PT-CPUFLAG intel_pt' "$log.txt"
check "intel_pt PMU registered" grep -q '^PT-CAP topa_output 1' "$log.txt"
want="cr3_filtering=1 psb_cyc=1 ip_filtering=1 mtc=1 ptwrite=0 power_event_trace=0
topa_output=1 topa_multiple_entries=1 single_range_output=1 output_subsys=0
payloads_lip=0 num_address_ranges=2 mtc_periods=249 cycle_thresholds=3fff psb_periods=3f"
caps_ok=true
for kv in $want; do
	grep -q "^PT-CAP ${kv%=*} ${kv#*=}\$" "$log.txt" || { caps_ok=false; echo "# cap ${kv%=*} != ${kv#*=}"; }
done
check "intel_pt caps match the emulated CPUID leaf 0x14" $caps_ok
check "no WARN/BUG/KASAN/lockdep in guest log" bash -c "! grep -q '^PT-SPLAT' '$log.txt'"

sym() { printf '%x' 0x$(nm "$out/pt-guest" | awk -v s="$1" '$3 == s { print $1 }'); }
# From pt-guest's disassembly: the store in workload that touches each
# fresh page (movb $0x1,(%reg)), every instruction after a SYSCALL.
pf_store=$(insn_addrs "$out/pt-guest" 'movb +[$]0x1,[(]%r[a-z0-9]+[)]$' workload)
after_syscall=$(insn_addrs "$out/pt-guest" '^syscall$' "" next)
check "pt-guest disassembly: one page-touching store ($pf_store), SYSCALL instructions" \
	[ -n "$pf_store" -a "${pf_store#*,}" = "$pf_store" -a -n "$after_syscall" ]
for mode in retcomp noretcomp long snapshot timing compat; do
	loops=100
	[ $mode = long ] && loops=20000
	[ $mode = timing ] && loops=2000
	expect=("$(sym workload)=1" "$(sym add_one)=$((loops / 2))"
		"$(sym add_two)=$((loops / 2))" "$(sym fib)=177")
	# compat: LOOPS / 10 trips to compat mode, 10 iterations each there.
	[ $mode = compat ] && expect+=("$(sym compat_trip)=$((loops / 10))"
		"$(sym compat_loop)=$loops")
	awk -v m="$mode" '$0 == "PT-RUN " m { on = 1; next }
		on && /^PT-GUEST-BEGIN/ { take = 1; next }
		on && /^PT-GUEST-END/ { exit }
		take { print }' "$log.txt" | base64 -d > "$out/trace-$mode.bin" || true
	if [ ! -s "$out/trace-$mode.bin" ]; then
		notok "$mode: trace received from the guest"
		continue
	fi
	ok "$mode: trace received from the guest ($(stat -c %s "$out/trace-$mode.bin") bytes)"
	ctl=
	[ $mode = timing ] && ctl=$timing_cfg
	# Packet fields against the program (pkt_truth in lib.sh): each
	# indirect call through ops[] is a TIP to add_one or add_two; each of
	# the LOOPS / 10 page faults a FUP at the store that faults, then
	# TIP.PGD, and a TIP.PGE at the same store when it restarts; the
	# getppid and ioctl system calls return (TIP.PGE after a TIP.PGD
	# without FUP) right after a SYSCALL instruction; MODE.Exec says
	# 64-bit, and 32-bit only for the compat trips, whose far jumps are 2
	# TIPs each into compat_trip.
	pkt="tip@:add_one=$((loops / 2)) tip@:add_two=$((loops / 2))
		fup>tip.pgd@$pf_store>=$((loops / 10)) tip.pge.resume@$pf_store>=$((loops / 10))
		tip.pge.elsewhere=0 tip.pge.sync@$after_syscall=all tip.pge.sync>=1
		mode.exec/64>=1 mode.exec/16=0"
	# TSC packets: between the guest's RDTSC before and after tracing.
	tsc=$(awk -v m="$mode" '$0 == "PT-RUN " m { on = 1; next }
		on && /^PT-GUEST-TSC / { print "0x" $2 "-0x" $3; exit }' "$log.txt")
	pkt+=" tsc@${tsc:-none}=all tsc>=1"
	if [ $mode = compat ]; then
		pkt+=" mode.exec/32>=$((loops / 10)) tip@compat_trip=$((loops / 5))"
	else
		pkt+=" mode.exec/32=0"
	fi
	PTCHECK_PKT=$pkt PTCHECK_CTL=$ctl "$out/ptcheck" "$out/trace-$mode.bin" "$out/pt-guest" "${expect[@]}" \
		> "$out/ptcheck-$mode.tap" 2> "$out/ptcheck-$mode.err" || true
	sed 's/^/# /' "$out/ptcheck-$mode.err" | head -20
	retap "$mode: " "$out/ptcheck-$mode.tap"
	if [ $mode = long ]; then
		psbs=$(grep '^# [0-9]* bytes:' "$out/ptcheck-$mode.tap" | grep -o ' psb=[0-9]*' | cut -d= -f2)
		size=$(stat -c %s "$out/trace-$mode.bin")
		check "long: periodic PSB+ ($psbs PSB in $size bytes)" \
			[ "${psbs:-0}" -ge $((size / 4096)) ]
	fi
done
# Kernel and user mode: the packet layer only (no kernel image to decode).
awk '$0 == "PT-RUN kernel" { on = 1; next }
	on && /^PT-GUEST-BEGIN/ { take = 1; next }
	on && /^PT-GUEST-END/ { exit }
	take { print }' "$log.txt" | base64 -d > "$out/trace-kernel.bin" 2>/dev/null || true
check "kernel: trace received from the guest ($(stat -c %s "$out/trace-kernel.bin") bytes)" \
	[ -s "$out/trace-kernel.bin" ]
# Every IP in the kernel's text (System.map: _stext.._etext, so the
# sign-extended 48-bit payloads must rebuild to 0xffffffff8...) or in
# pt-guest; an interrupt in the kernel is FUP then TIP, in context.
smap=${SYSTEM_MAP:-$(dirname "$kernel")/../../../System.map}
ktext=$(awk '$3 == "_stext" { lo = $1 } $3 == "_etext" { hi = $1 }
	END { if (lo != "" && hi != "") print "0x" lo "-0x" hi }' "$smap" 2>/dev/null || true)
# pt-guest's code: from its first to past its last text symbol.
read -r ulo uhi < <(nm -n "$out/pt-guest" | awk '$2 ~ /^[tTwW]$/ { if (lo == "") lo = $1; hi = $1 }
	END { print "0x" lo, "0x" hi }')
uhi=$(printf '0x%x' $((uhi + 4096)))
where="${ktext:-0x0-0x1},$ulo-$uhi"
PTCHECK_PKT="tip@$where=all fup@$where=all tip.pge@$where=all fup.psb@$where=all
	tip/ipc3@${ktext:-0x0-0x1}>=1 tip@$pf_store>=10 fup>tip>=1 mode.exec/64>=1 mode.exec/32=0" \
	"$out/ptcheck" "$out/trace-kernel.bin" > "$out/ptcheck-kernel.tap" 2> "$out/ptcheck-kernel.err" || true
sed 's/^/# /' "$out/ptcheck-kernel.err" | head -20
retap "kernel: " "$out/ptcheck-kernel.tap"

# Debian's perf: record in the guest, decode on the host.
if [ -x $perf ]; then
	# perf_section NAME FILE: the perf.data the guest printed (base64)
	# after "PT-RUN NAME" into FILE; prints that run's PT-PERF-RC value.
	perf_section() {
		awk -v r="PT-RUN $1" '$0 == r { on = 1; next }
			on && /^PT-GUEST-BEGIN/ { take = 1; next }
			on && /^PT-GUEST-END/ { exit }
			take { print }' "$log.txt" | base64 -d > "$2" 2>/dev/null || true
		awk -v r="PT-RUN $1" '$0 == r { on = 1 }
			on && /^PT-PERF-RC/ { print $2; exit }' "$log.txt"
	}
	rc=$(perf_section perf "$out/perf.data")
	check "perf record -e intel_pt//u in the guest (rc ${rc:-?})" [ "${rc:-1}" = 0 ]
	$perf script -i "$out/perf.data" --itrace=e > "$out/perf-errors.txt" 2>&1 || true
	errs=$(grep -c 'instruction trace error' "$out/perf-errors.txt" || true)
	check "perf script --itrace=e: no decode errors ($errs)" [ "$errs" = 0 ]
	$perf script -i "$out/perf.data" --itrace=c -F addr > "$out/perf-calls.txt" 2>/dev/null || true
	for kv in workload=1 add_one=500 add_two=500 fib=177; do
		a=$(sym ${kv%=*})
		c=$(grep -c "=> *$a\$" "$out/perf-calls.txt" || true)
		check "perf script: ${kv%=*} called $c times (want ${kv#*=})" [ "$c" = "${kv#*=}" ]
	done
	insns=$($perf script -i "$out/perf.data" --itrace=i1i -F ip 2>/dev/null | wc -l)
	echo "# perf script: $insns instructions decoded"

	# MODE.Exec through perf: 10 trips to compat mode and back.
	f=$out/perf-compat.data
	rc=$(perf_section perf-compat "$f")
	check "perf-compat: perf record -e intel_pt//u of the compat trips (rc ${rc:-?})" \
		[ "${rc:-1}" = 0 ]
	$perf script -i "$f" --itrace=e > "$out/perf-compat-errors.txt" 2>&1 || true
	errs=$(grep -c 'instruction trace error' "$out/perf-compat-errors.txt" || true)
	check "perf-compat: perf script --itrace=e: no decode errors ($errs)" [ "$errs" = 0 ]
	modes=$($perf script -i "$f" -D 2>/dev/null | grep -o 'MODE.Exec.* [0-9]*$' | awk '{ print $NF }' |
		sort | uniq -c | awk '{ printf "%s-bit:%s ", $2, $1 }')
	loop=$($perf script -i "$f" --itrace=i1i -F ip 2>/dev/null | grep -c "^ *$(sym compat_loop)\$" || true)
	m32=$(echo "$modes" | tr ' ' '\n' | awk -F: '$1 == "32-bit" { print $2 }')
	check "perf-compat: compat_loop decoded $loop times in 32-bit mode (want 100; MODE.Exec $modes)" \
		[ "$loop" = 100 -a "${m32:-0}" -ge 10 ]

	# Timing packets through perf: TSC, MTC (period 0), CYC, PSB 4K.
	f=$out/perf-timing.data
	rc=$(perf_section perf-timing "$f")
	check "perf-timing: perf record -T -e intel_pt/$(cat "$root/perf-timing")/u (rc ${rc:-?})" \
		[ "${rc:-1}" = 0 ]
	$perf script -i "$f" --itrace=e > "$out/perf-timing-errors.txt" 2>&1 || true
	errs=$(grep -c 'instruction trace error' "$out/perf-timing-errors.txt" || true)
	check "perf-timing: perf script --itrace=e: no decode errors ($errs)" [ "$errs" = 0 ]
	$perf script -i "$f" -D 2>/dev/null | grep -E -o '^\. +[0-9a-f]+: +([0-9a-f]{2} )+ +(MTC|TMA|CYC|CBR|TSC)' |
		awk '{ print $NF }' | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }' > "$out/perf-timing-pkts.txt"
	pk=$(cat "$out/perf-timing-pkts.txt")
	check "perf-timing: perf -D sees TSC, TMA, MTC, CYC, CBR ($pk)" \
		bash -c "for p in TSC TMA MTC CYC CBR; do echo '$pk' | grep -q \"\$p=\"; done"
	$perf script -i "$f" --itrace=i1i --ns -F time,ip > "$out/perf-timing-insns.txt" 2>/dev/null || true
	read -r ti back distinct < <(awk '{ t = $1; sub(/:$/, "", t); n++
		if (n > 1 && t + 0 < last + 0) b++; if (t != last) d++; last = t }
		END { print n + 0, b + 0, d + 0 }' "$out/perf-timing-insns.txt")
	check "perf-timing: --itrace=i1i -F time: $ti instructions, $distinct distinct timestamps, $back going back" \
		[ "$ti" -gt 1000 -a "$back" = 0 -a "$distinct" -gt 100 ]
	calls=$($perf script -i "$f" --itrace=c -F addr 2>/dev/null | grep -c "=> *$(sym add_one)\$" || true)
	check "perf-timing: add_one called $calls times (want 500)" [ "$calls" = 500 ]

	# IP filtering: perf record --filter 'filter fib @ pt-guest' traces
	# only fib: every decoded instruction inside fib, 177 entries (one
	# from workload by TIP.PGE, 176 recursive calls inside the range).
	# --filter 'tracestop add_two @ pt-guest': tracing stops at the first call
	# of add_two (i = 1), after one call of add_one.
	for m in filter tracestop; do
		f=$out/perf-$m.data
		rc=$(perf_section "perf-$m" "$f")
		check "perf-$m: perf record --filter in the guest (rc ${rc:-?})" [ "${rc:-1}" = 0 ]
		$perf script -i "$f" --itrace=e > "$out/perf-$m-errors.txt" 2>&1 || true
		errs=$(grep -c 'instruction trace error' "$out/perf-$m-errors.txt" || true)
		check "perf-$m: perf script --itrace=e: no decode errors ($errs)" [ "$errs" = 0 ]
		$perf script -i "$f" --itrace=i1i -F ip 2>/dev/null | awk '{ print $1 }' > "$out/perf-$m-ips.txt"
		total=$(wc -l < "$out/perf-$m-ips.txt")
		if [ $m = filter ]; then
			read -r lo sz < <(nm -S "$out/pt-guest" | awk '$4 == "fib" { print $1, $2 }')
			lo=$(printf '%x' $((16#$lo))) hi=$(printf '%x' $((16#$lo + 16#$sz)))
			# Hex addresses compared as zero-padded strings (mawk).
			outside=$(awk -v lo=$lo -v hi=$hi 'function pad(x) {
				return substr("0000000000000000", 1, 16 - length(x)) x }
				{ a = pad($1); if (a < pad(lo) || a >= pad(hi)) n++ }
				END { print n + 0 }' "$out/perf-$m-ips.txt")
			entries=$(grep -c "^0*$lo\$" "$out/perf-$m-ips.txt" || true)
			check "perf-filter: $total instructions decoded, all inside fib ($outside outside)" \
				[ "$total" -gt 1000 -a "$outside" = 0 ]
			check "perf-filter: fib entered $entries times (want 177)" [ "$entries" = 177 ]
		else
			one=$(grep -c "^0*$(sym add_one)\$" "$out/perf-$m-ips.txt" || true)
			two=$(grep -c "^0*$(sym add_two)\$" "$out/perf-$m-ips.txt" || true)
			ts=$($perf script -i "$f" -D 2>/dev/null | grep -c 'TraceSTOP\|TraceStop' || true)
			check "perf-tracestop: add_one decoded $one times, add_two $two times (want 1, 0; $total instructions)" \
				[ "$one" = 1 -a "$two" = 0 ]
			check "perf-tracestop: perf -D sees the TraceStop packet ($ts)" [ "$ts" -ge 1 ]
		fi
	done

	# ToPA PMI: stop mode (-m,2) and snapshot mode (-S, one last
	# snapshot at exit) on a trace ~12 times the 8 KiB buffer.
	for m in stop snapshot; do
		f=$out/perf-$m.data
		rc=$(perf_section "perf-$m" "$f")
		pmi=$(awk -v r="PT-RUN perf-$m" '$0 == r { on = 1 }
			on && /^PT-PMIS/ { print $2; exit }' "$log.txt")
		check "perf-$m: perf record -m,2 in the guest (rc ${rc:-?})" [ "${rc:-1}" = 0 ]
		$perf script -i "$f" --itrace=e > "$out/perf-$m-errors.txt" 2>&1 || true
		errs=$(grep -c 'instruction trace error' "$out/perf-$m-errors.txt" || true)
		a=$(sym workload)
		calls=$($perf script -i "$f" --itrace=c -F addr 2>/dev/null | grep -c "=> *$a\$" || true)
		fn=$($perf script -i "$f" --itrace=c -F addr 2>/dev/null | wc -l)
		echo "# perf-$m: $pmi PMIs, $(stat -c %s "$f" 2>/dev/null) bytes of perf.data, $fn calls decoded, $errs decode errors"
		if [ $m = stop ]; then
			# A STOP region ends wherever the byte stream does, which
			# can be inside a packet; perf joins the cut packet to the
			# PSB+ of the restart and reports a few errors there (itrace,
			# which decodes each run apart, has none: pmi.sh).  So only
			# "Lost trace data" is required here, not zero errors.
			lost=$(grep -c 'Lost trace data' "$out/perf-$m-errors.txt" || true)
			echo "# perf-stop: $lost 'Lost trace data', $((errs - lost)) errors at the joins"
			check "perf-stop: PMIs taken (${pmi:-0})" [ "${pmi:-0}" -ge 2 ]
			check "perf-stop: buffer full reported as lost data ($lost)" [ "$lost" -ge 1 ]
			check "perf-stop: trace decodes ($fn calls)" [ "$fn" -gt 0 ]
			# perf -D prints each AUXTRACE chunk's packets as
			# ".  OFFSET:  BYTES  NAME".  A packet that STOP cut short
			# is the last of its chunk, so its bytes (which perf may
			# read as several bad packets, or as short ones between
			# them) lie in the chunk's last 15 bytes: one byte less than
			# the longest packet (PSB).  perf record pads each AUXTRACE
			# chunk with zeros to a multiple of 8 bytes, which perf -D
			# shows as PAD packets or, after a packet STOP cut short,
			# as trailing 00 bytes of the chunk's last line ("82 00 00
			# 00 00 00 00  TNT" after a PSB cut in its 15th byte): so
			# the chunk's end is that of its last packet other than
			# PAD, without trailing zero bytes.  A bad packet anywhere
			# else is a fault inside a run.
			read -r inrun intail < <($perf script -i "$f" -D 2>/dev/null | awk '
				function hex(s,   v, i) {
					for (i = 1; i <= length(s); i++)
						v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
					return v + 0
				}
				function flush(   i) {
					for (i = 0; i < nbad; i++)
						if (end - bad[i] > 15) inrun++; else intail++
					nbad = 0
				}
				/^\.  [0-9a-f]+:  / {
					off = hex(substr($2, 1, length($2) - 1))
					nz = 1
					for (i = 3; i <= NF && $i ~ /^[0-9a-f][0-9a-f]$/; i++)
						if ($i != "00")
							nz = i - 2
					if ($NF != "PAD")
						end = off + nz
					if (/Bad packet/)
						bad[nbad++] = off
					next
				}
				{ flush() }
				END { flush(); print inrun + 0, intail + 0 }')
			check "perf-stop: bad packets only where STOP cut a run ($intail in the last 15 bytes of a chunk, ${inrun:-?} elsewhere)" \
				[ "${inrun:-1}" = 0 ]
		else
			check "perf-snapshot: no PMI in overwrite mode (${pmi:-?})" [ "${pmi:-1}" = 0 ]
			check "perf-snapshot: trace decodes ($fn calls), no decode errors ($errs)" \
				[ "$fn" -gt 0 -a "$errs" = 0 ]
		fi
	done

	# Snapshots on SIGUSR2: one snapshot per signal perf got, each
	# a whole buffer (2 pages) or less, decoding without error.
	f=$out/perf-sigusr2.data
	rc=$(perf_section perf-sigusr2 "$f")
	read -r sent secs < <(awk '$1 == "PT-SIGUSR2" { print $2, $3; exit }' "$log.txt")
	check "perf-sigusr2: perf record -S in the guest (rc ${rc:-?}), 3 SIGUSR2 sent while it ran (${sent:-?}, ${secs:-?} s)" \
		[ "${rc:-1}" = 0 -a "${sent:-0}" = 3 ]
	# perf writes one PERF_RECORD_AUXTRACE (the copied data) per snapshot;
	# the kernel's PERF_RECORD_AUX come at every switch-out as well.
	aux=$($perf script -i "$f" -D 2>/dev/null | awk '/PERF_RECORD_AUXTRACE / { n++ } END { print n + 0 }')
	big=$($perf script -i "$f" -D 2>/dev/null |
		awk '/PERF_RECORD_AUXTRACE / { for (i = 1; i < NF; i++) if ($i == "size:") print $(i + 1) }' |
		while read -r v; do if [ $((v)) -gt 8192 ]; then echo x; fi; done | wc -l)
	$perf script -i "$f" --itrace=e > "$out/perf-sigusr2-errors.txt" 2>&1 || true
	errs=$(grep -c 'instruction trace error' "$out/perf-sigusr2-errors.txt" || true)
	fn=$($perf script -i "$f" --itrace=c -F addr 2>/dev/null | wc -l)
	echo "# perf-sigusr2: $aux AUX records, $fn calls decoded, $errs decode errors"
	check "perf-sigusr2: one snapshot per signal ($aux AUXTRACE records for ${sent:-?} signals), none larger than the buffer ($big)" \
		[ "$aux" = "${sent:-x}" -a "$big" = 0 ]
	check "perf-sigusr2: snapshots decode ($fn calls), no decode errors ($errs)" \
		[ "$fn" -gt 0 -a "$errs" = 0 ]
fi
echo "1..$n"
[ $fail -eq 0 ]
