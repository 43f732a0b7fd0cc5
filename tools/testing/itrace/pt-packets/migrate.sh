#!/bin/bash
# Emulated Intel PT across a migration (TAP): trace pt-guest while it spins
# in user mode, migrate the VM to a file and resume it in a second QEMU.
# The packet generator's own state does not migrate: the trace must carry
# OVF and resume with a FUP, and still decode with libipt, with exact call
# counts for the workload that runs after the migration.
#
#   tools/testing/itrace/pt-packets/migrate.sh [BUILD]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
out=$BUILD/pt-packets/migrate
mkdir -p "$out"

build_ptcheck "$out"
gcc -O1 -g -Wall -static -no-pie -o "$out/pt-guest" "$here/pt-guest.c"

root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp}
cp /usr/bin/busybox "$root/bin/busybox"
cp "$out/pt-guest" "$root/pt-guest"
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
echo PT-RUN spin
/pt-guest 100 spin
reboot -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null) > "$out/initramfs.cpio"

args=(-L /usr/share/qemu -L /usr/share/seabios -display none -no-reboot
      -nic none -m 512M -cpu "$cpu" -kernel "$kernel"
      -initrd "$out/initramfs.cpio"
      -append "console=ttyS0 nmi_watchdog=0 panic=-1 quiet")
SAVE_CPL=3 vm_save "" "$out/state" "$out/log1" PT-GUEST-SPIN 0.5 \
	"guest is spinning with the trace on" "${args[@]}"
check "guest had not finished before the migration" \
	bash -c "! grep -q PT-GUEST-END '$out/log1'"
vm_resume "$out/state" "$out/log2" 300 - "${args[@]}"
tr -d '\r' < "$out/log2" | awk '/^PT-GUEST-BEGIN/ { take = 1; next }
	/^PT-GUEST-END/ { exit }
	take { print }' | base64 -d > "$out/trace.bin" 2>/dev/null || true
check "trace received after the migration ($(stat -c %s "$out/trace.bin") bytes)" \
	[ -s "$out/trace.bin" ]

sym() { printf '%x' 0x$(nm "$out/pt-guest" | awk -v s="$1" '$3 == s { print $1 }'); }
# Packet fields: the 100 indirect calls after the migration, a TIP each
# to add_one or add_two; the FUP after OVF (if the guest was in user mode
# when it stopped) in spin, where the guest was; TIP.PGE resumes where
# the FUP before each TIP.PGD said; the TSC packets lie between the
# guest's RDTSC before and after tracing.
tsc=$(awk '{ sub(/\r$/, "") } /^PT-GUEST-TSC / { print "0x" $2 "-0x" $3; exit }' "$out/log2")
PTCHECK_PKT="tip@:add_one=50 tip@:add_two=50 ovf=1 fup.ovf@spin=all tip.pge.elsewhere=0
	tsc@${tsc:-none}=all tsc>=2" \
"$out/ptcheck" "$out/trace.bin" "$out/pt-guest" "$(sym add_one)=50" \
	"$(sym add_two)=50" "$(sym fib)=177" > "$out/ptcheck.tap" 2> "$out/ptcheck.err" || true
sed 's/^/# /' "$out/ptcheck.err" | head -20
retap "" "$out/ptcheck.tap"
check "OVF marks the lost packet state" grep -q '^ok .*packet fields: ovf=1 (' "$out/ptcheck.tap"

# OVF while packets are generated: msr-test "ovf" traces (CPL0, so always
# in context) a HLT that waits for an NMI; the VM is migrated while it
# waits and the NMI sent to the migrated VM.  After OVF the emulator must
# give a FUP with the full IP (IPBytes 6) of where execution resumes, the
# instruction after the HLT; the NMI then gives a FUP there and a TIP to
# nmi_entry.
build_baremetal msr-test "$out"
margs=(-L /usr/share/qemu -L /usr/share/seabios -display none -no-reboot
       -nic none -m 64M -cpu "$cpu" -device isa-debug-exit,iobase=0xf4,iosize=4
       -kernel "$out/msr-test" -append ovf)
vm_save "ovf: " "$out/state-ovf" "$out/ovf1" PT-OVF-HALTED 0 \
	"msr-test waits in HLT with the trace on" "${margs[@]}"
vm_resume "$out/state-ovf" "$out/ovf2" 120 nmi "${margs[@]}"
awk '{ sub(/\r$/, "") } $0 == "PT-HEXOVF-BEGIN" { t = 1; next }
	$0 == "PT-HEXOVF-END" { t = 0 } t' "$out/ovf2" | tr -d '\n' | xxd -r -p > "$out/ovf.bin" || true
check "ovf: the migrated VM woke up and dumped its trace ($(stat -c %s "$out/ovf.bin") bytes)" \
	[ -s "$out/ovf.bin" ]
after_hlt=$(insn_addrs "$out/msr-test" '^hlt$' ovf_run next)
PTCHECK_PKT="ovf=1 fup.ovf/ipc6@$after_hlt=1 fup.ovf=1 fup>tip@$after_hlt=1
	tip@:nmi_entry=1 mode.exec/32>=1" \
	"$out/ptcheck" "$out/ovf.bin" "$out/msr-test" > "$out/ovf.tap" 2> "$out/ovf.err" || true
sed 's/^/# /' "$out/ovf.err" | head -20
retap "ovf: " "$out/ovf.tap"
echo "1..$n"
[ $fail -eq 0 ]
