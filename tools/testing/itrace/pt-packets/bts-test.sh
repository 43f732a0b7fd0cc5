#!/bin/bash
# Bare-metal check of the emulated Branch Trace Store (TAP): bts-test.c,
# run with "+ds" added to the CPU model: CPUID and MSR rules, the records
# of near and far branches, exceptions, interrupts, SYSENTER/SYSEXIT, INT
# and IRET with each CPL filter, the circular buffer and the threshold PMI.
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
echo "1..$n"
[ $fail -eq 0 ]
