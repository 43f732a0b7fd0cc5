#!/bin/bash
# Bare-metal check of the emulated Branch Trace Store (TAP): bts-test.c,
# run with "+ds" added to the CPU model: CPUID and MSR rules, the records
# of near and far branches, exceptions, interrupts, SYSENTER/SYSEXIT, INT
# and IRET with each CPL filter, the circular buffer and the threshold PMI;
# then the VM migrated while it records.
#
#   tools/testing/itrace/pt-packets/bts-test.sh [BUILD]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=$BUILD/pt-packets/bts-test
mkdir -p "$out"

gcc -m32 -O2 -Wall -ffreestanding -fno-toplevel-reorder -nostdlib -static \
	-fno-pic -fno-pie -no-pie -fno-stack-protector \
	-Wl,-Ttext=0x100000 -Wl,--build-id=none \
	-o "$out/bts-test" "$here/bts-test.c"
args=(-L /usr/share/qemu -L /usr/share/seabios -display none -nic none
      -no-reboot -m 64M -cpu "$cpu,+ds" -device isa-debug-exit,iobase=0xf4,iosize=4
      -kernel "$out/bts-test")

timeout 300 "$qemu" "${args[@]}" -serial stdio 2>&1 | tr -d '\r' > "$out/console.log" || true
retap "" "$out/console.log"
[ $n -gt 0 ] || notok "bts-test ran"

# Without "+ds" the CPU has no DS, DTES64 nor DS-CPL (BTS is opt-in).
timeout 60 "$qemu" "${args[@]/$cpu,+ds/$cpu}" -append nods -serial stdio 2>&1 |
	tr -d '\r' > "$out/nods.log" || true
n0=$n
retap "" "$out/nods.log"
[ $n -gt $n0 ] || notok "bts-test nods ran"
# Migration while recording: the source spins with BTS on, is saved to a
# file and quits; the destination resumes from it and gets the NMI that
# ends the loop (bts-test.c, migrate_run()).
mon_sock=$out/mon.sock
rm -f "$mon_sock" "$out/state" "$out/mig1" "$out/mig2"
"$qemu" "${args[@]}" -append migrate -serial file:"$out/mig1" \
	-monitor unix:"$mon_sock",server=on,wait=off &
pid=$!
for _ in $(seq 240); do
	grep -q BTS-MIGRATE-READY "$out/mig1" 2>/dev/null && break
	sleep 0.5
done
check "migrate: bts-test spins with BTS on" grep -q BTS-MIGRATE-READY "$out/mig1"
sleep 1
mon "migrate \"exec:cat > $out/state\"" > /dev/null || true
for _ in $(seq 240); do
	mon "info migrate" | grep -q "Migration status: completed" && break
	sleep 0.5
done
mon "quit" > /dev/null || true
wait $pid || true
check "migrate: VM state saved" [ -s "$out/state" ]
check "migrate: the source had not finished" bash -c "! grep -q '^1\.\.' '$out/mig1'"
rm -f "$mon_sock"
timeout 300 "$qemu" "${args[@]}" -append migrate -serial file:"$out/mig2" \
	-monitor unix:"$mon_sock",server=on,wait=off -incoming "exec:cat $out/state" &
pid=$!
for _ in $(seq 240); do
	st=
	[ -S "$mon_sock" ] && st=$(mon "info status" 2>/dev/null || true)
	case $st in *"VM status: running"*) break ;; esac
	sleep 0.5
done
sleep 1
mon "nmi" > /dev/null || true
wait $pid || true
tr -d '\r' < "$out/mig2" > "$out/mig2.log"
n0=$n
retap "" "$out/mig2.log"
[ $n -gt $n0 ] || notok "migrate: the destination finished"
echo "1..$n"
[ $fail -eq 0 ]
