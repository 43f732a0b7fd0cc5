#!/bin/bash
# Bare-metal check of the emulated CPU's performance counters (TAP):
# pmu-test.c, CPUID leaf 0xA, RDPMC and its #GP cases, widths, enable and
# USR/OS bits, exact instruction and branch counts, overflows and their
# PMI; then pmu-test "migrate": the VM migrated while a counted loop
# spins at CPL 3, the counts exact and the PMIs as many as the branches
# say after it.
#
#   tools/testing/itrace/pt-packets/pmu-test.sh [BUILD]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=$BUILD/pt-packets/pmu-test
mkdir -p "$out"

build_pmu_test "$out"
args=(-L /usr/share/qemu -L /usr/share/seabios -display none -nic none
      -no-reboot -m 64M -cpu "$cpu" -device isa-debug-exit,iobase=0xf4,iosize=4
      -kernel "$out/pmu-test")

timeout 300 "$qemu" "${args[@]}" -serial stdio 2>&1 | tr -d '\r' > "$out/console.log" || true
retap "" "$out/console.log"
[ $n -gt 0 ] || notok "pmu-test ran"

# Migration: the source spins, is saved to a file and quits; the
# destination resumes from it and gets the NMI that ends the loop.
mon_sock=$out/mon.sock
rm -f "$mon_sock" "$out/state" "$out/mig1" "$out/mig2"
"$qemu" "${args[@]}" -append migrate -serial file:"$out/mig1" \
	-monitor unix:"$mon_sock",server=on,wait=off &
pid=$!
for _ in $(seq 240); do
	grep -q PMU-MIGRATE-READY "$out/mig1" 2>/dev/null && break
	sleep 0.5
done
check "migrate: pmu-test spins with the counters on" grep -q PMU-MIGRATE-READY "$out/mig1"
sleep 2
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
