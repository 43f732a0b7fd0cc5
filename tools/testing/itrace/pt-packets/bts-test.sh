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

build_baremetal bts-test "$out"
args=(-L /usr/share/qemu -L /usr/share/seabios -display none -nic none
      -no-reboot -m 64M -cpu "$cpu,+ds" -device isa-debug-exit,iobase=0xf4,iosize=4
      -kernel "$out/bts-test")

timeout 300 "$qemu" "${args[@]}" -serial stdio 2>&1 | tr -d '\r' > "$out/console.log" || true
retap "" "$out/console.log"
[ $n -gt 0 ] || notok "bts-test ran"

# Without "+ds" the CPU has no DS, DTES64 nor DS-CPL (BTS is opt-in).
timeout 60 "$qemu" "${args[@]/"$cpu",+ds/"$cpu"}" -append nods -serial stdio 2>&1 |
	tr -d '\r' > "$out/nods.log" || true
n0=$n
retap "" "$out/nods.log"
[ $n -gt $n0 ] || notok "bts-test nods ran"
# Migration while recording: the source spins with BTS on, is saved to a
# file and quits; the destination resumes from it and gets the NMI that
# ends the loop (bts-test.c, migrate_run()).
migrate_baremetal BTS-MIGRATE-READY 1 "bts-test spins with BTS on"
echo "1..$n"
[ $fail -eq 0 ]
