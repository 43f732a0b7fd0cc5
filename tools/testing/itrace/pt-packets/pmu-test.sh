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

build_baremetal pmu-test "$out"
args=(-L /usr/share/qemu -L /usr/share/seabios -display none -nic none
      -no-reboot -m 64M -cpu "$cpu" -device isa-debug-exit,iobase=0xf4,iosize=4
      -kernel "$out/pmu-test")

timeout 300 "$qemu" "${args[@]}" -serial stdio 2>&1 | tr -d '\r' > "$out/console.log" || true
retap "" "$out/console.log"
[ $n -gt 0 ] || notok "pmu-test ran"

# Migration: the source spins, is saved to a file and quits; the
# destination resumes from it and gets the NMI that ends the loop.
migrate_baremetal PMU-MIGRATE-READY 2 "pmu-test spins with the counters on"
echo "1..$n"
[ $fail -eq 0 ]
