# Shared by the emulated-PT checks (sourced, bash): paths, the TAP counters
# and helpers.  The sourcing script sets `here` and passes [BUILD] as $1.
top=$(cd "$here/../../../.." && pwd)
BUILD=${1:-${BUILD:-$top/build}}
qemu=$BUILD/qemu-obj/qemu-system-x86_64
kernel=${KERNEL:-$BUILD/linux-obj/arch/x86/boot/bzImage}
cpu=$(cat "$top/tools/testing/itrace/qemu-cpu.txt")

n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }

# retap PREFIX FILE [COMMENT-GLOB]: fold a TAP stream into ours, its results
# renumbered and prefixed with PREFIX, its comments matching COMMENT-GLOB
# (default: all) passed through.
retap() {
	local prefix=$1 file=$2 keep=${3:-'#*'} line
	while read -r line; do
		case $line in
		"ok "*) ok "$prefix$(echo "$line" | sed -E 's/^ok [0-9]+ //')" ;;
		"not ok "*) notok "$prefix$(echo "$line" | sed -E 's/^not ok [0-9]+ //')" ;;
		$keep) echo "$line" ;;
		esac
	done < "$file"
}

# build_baremetal NAME DIR: a bare-metal (multiboot, 32-bit) check,
# NAME.c with baremetal.h (msr-test, pmu-test, bts-test), into DIR/NAME.
build_baremetal() {
	gcc -m32 -O2 -Wall -ffreestanding -fno-toplevel-reorder -nostdlib -static \
		-fno-pic -fno-pie -no-pie -fno-stack-protector \
		-Wl,-Ttext=0x100000 -Wl,--build-id=none \
		-o "$2/$1" "$here/$1.c"
}

# vm_save PREFIX STATE LOG READY SETTLE WHAT QEMU-ARGS...: start QEMU with
# QEMU-ARGS, its serial console in LOG and its monitor on $mon_sock; once
# LOG shows READY (the check "PREFIX WHAT"), wait SETTLE seconds, migrate
# the VM to the file STATE (the check "PREFIX VM state saved") and quit.
#
# With SAVE_CPL set (3: user mode), the VM is stopped first and saved only
# once its vCPU is at that CPL (the check "PREFIX vCPU stopped at CPL N"):
# a task switched out has no trace on (Linux clears TraceEn), so a save
# taken then, which a loaded host makes likelier, has no packet state to
# lose.  The saved VM is paused; vm_resume continues it.
vm_save() {
	local prefix=$1 state=$2 log=$3 ready=$4 settle=$5 what=$6 pid i at
	shift 6
	mon_sock=$out/mon.sock
	rm -f "$mon_sock" "$state" "$log"
	"$qemu" "$@" -serial file:"$log" \
		-monitor unix:"$mon_sock",server=on,wait=off &
	pid=$!
	for _ in $(seq 300); do
		grep -q "$ready" "$log" 2>/dev/null && break
		sleep 0.5
	done
	check "$prefix$what" grep -q "$ready" "$log"
	sleep "$settle"
	if [ -n "${SAVE_CPL:-}" ]; then
		at=no
		for i in $(seq 100); do
			mon stop > /dev/null || true
			mon "info registers" | grep -q "CPL=$SAVE_CPL " && { at=yes; break; }
			mon cont > /dev/null || true
			sleep 0.1
		done
		check "${prefix}vCPU stopped at CPL $SAVE_CPL (stop $i of at most 100)" \
			[ $at = yes ]
	fi
	mon "migrate \"exec:cat > $state\"" > /dev/null || true
	for _ in $(seq 240); do
		mon "info migrate" | grep -q "Migration status: completed" && break
		sleep 0.5
	done
	mon "quit" > /dev/null || true
	wait $pid || true
	check "${prefix}VM state saved" [ -s "$state" ]
}

# vm_resume STATE LOG SECONDS NMI QEMU-ARGS...: resume the VM saved in
# STATE in a second QEMU (serial console in LOG), with NMI "nmi" send it an
# NMI once it runs; wait SECONDS at most for it to end.  A VM saved
# paused is continued once its state is loaded.
#
# The guests wait for that NMI with nothing printed.  It is sent again
# while LOG stays empty for 5 s, each time with a TAP comment: the host's
# NMI may merge with a PMI, as two NMIs at one instruction boundary do on
# hardware (one can be pending).  Seen with QEMU instrumented (1 run in
# 20-60 of pmu-test's migration): a counter overflowed, its PMI waited
# 0.1-5 ms for the BQL (tcg_pmu_pmi()) while the monitor, holding it,
# raised the host's NMI; the PMI then found that NMI pending, the guest
# took one NMI and its handler saw the overflow's status bit.  The guests
# take an NMI within 5 ms and print within 0.1 s of it.
vm_resume() {
	local state=$1 log=$2 secs=$3 nmi=$4 pid st i
	shift 4
	rm -f "$mon_sock" "$log"
	timeout "$secs" "$qemu" "$@" -serial file:"$log" \
		-monitor unix:"$mon_sock",server=on,wait=off \
		-incoming "exec:cat $state" &
	pid=$!
	# a VM saved paused (SAVE_CPL) arrives paused: continue it
	for _ in $(seq 240); do
		kill -0 $pid 2> /dev/null || break
		st=
		[ -S "$mon_sock" ] && st=$(mon "info status" 2>/dev/null || true)
		case $st in
		*"VM status: running"*) break ;;
		*"VM status: paused (inmigrate)"*) ;;
		*"VM status: paused"*) mon cont > /dev/null || true ;;
		esac
		sleep 0.5
	done
	if [ "$nmi" = nmi ]; then
		sleep 1
		mon "nmi" > /dev/null || true
		i=0
		while kill -0 $pid 2> /dev/null && ! [ -s "$log" ]; do
			sleep 0.5
			i=$((i + 1))
			[ $i -ge 10 ] && kill -0 $pid 2> /dev/null && ! [ -s "$log" ] || continue
			echo "# $(basename "$log"): nothing printed 5 s after the NMI, sent again"
			mon "nmi" > /dev/null || true
			i=0
		done
	fi
	wait $pid || true
}

# migrate_baremetal READY SETTLE WHAT: run the bare-metal check (QEMU
# arguments in the array args, results in $out) with "-append migrate";
# once it prints READY ("migrate: WHAT" is that check), wait SETTLE
# seconds, save the VM to a file and quit; resume it from the file in a
# second QEMU and send the NMI that ends its loop.  The destination's TAP
# joins ours as "migrate: ..." results.
migrate_baremetal() {
	local ready=$1 settle=$2 what=$3 n0
	vm_save "migrate: " "$out/state" "$out/mig1" "$ready" "$settle" "$what" \
		"${args[@]}" -append migrate
	check "migrate: the source had not finished" bash -c "! grep -q '^1\.\.' '$out/mig1'"
	vm_resume "$out/state" "$out/mig2" 300 nmi "${args[@]}" -append migrate
	tr -d '\r' < "$out/mig2" > "$out/mig2.log"
	n0=$n
	retap "" "$out/mig2.log"
	[ $n -gt $n0 ] || notok "migrate: the destination finished"
}

# mon COMMAND: one QEMU monitor command through the socket $mon_sock;
# prints the monitor's answer.  The monitor takes one client at a time and
# sees the last one leave only when its main loop runs: a refused
# connection is tried again for up to 10 s.
mon() {
	python3 - "$mon_sock" "$1" <<'PY'
import socket, sys, time
for attempt in range(20):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[1])
        break
    except ConnectionRefusedError:
        s.close()
        if attempt == 19:
            raise
        time.sleep(0.5)
s.settimeout(2)
def rd():
    buf = b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            buf += d
            if buf.endswith(b"(qemu) "):
                break
    except socket.timeout:
        pass
    return buf.decode(errors="replace")
rd()
s.sendall(sys.argv[2].encode() + b"\n")
print(rd())
PY
}

# ptcheck: the host-side packet and flow checker (libipt, libelf).
build_ptcheck() {
	gcc -O2 -Wall -o "$1/ptcheck" "$here/ptcheck.c" -lipt -lelf
}

# insn_addrs ELF REGEX [FUNCTION] [next]: the addresses (0x..., comma
# separated) of the instructions whose disassembly (objdump, AT&T, without
# raw bytes) matches REGEX, in FUNCTION only if given; with "next" the
# addresses of the instructions that follow them instead.
insn_addrs() {
	local elf=$1 re=$2 fn=${3:-} next=${4:-}
	objdump -d --no-show-raw-insn ${fn:+--disassemble=$fn} "$elf" |
		awk -v re="$re" -v next_="$next" -F '\t' '
		/^ *[0-9a-f]+:\t/ {
			a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
			if (want) { printf "%s0x%s", sep, a; sep = ","; want = 0 }
			insn = $2; sub(/ +$/, "", insn)
			if (insn ~ re) {
				if (next_ == "next") want = 1
				else { printf "%s0x%s", sep, a; sep = "," }
			}
		}
		END { print "" }'
}
