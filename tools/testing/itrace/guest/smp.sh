# SPDX-License-Identifier: GPL-2.0
#
# Guest half of the two-vCPU run of `make check` (busybox sh; the guest
# boots with run-vm.sh -c 2, TCG running one host thread per vCPU): the
# emulated Intel PT of each CPU beside the other's, PMIs and wake-ups
# between CPUs, and traced threads that move from CPU to CPU.  Leaves in
# $OUT:
#   cpus.txt              the online CPUs
#   kselftest/<name>.tap  every itrace kselftest
#   e2e/                  recordings of the end-to-end programs, migrate
#                         among them (it moves itself across the CPUs
#                         while the reader runs where the scheduler puts it)
#   record/               itrace record's own tests (record.sh)
set -u
. /etc/itrace.env

{
	echo "online $(cat /sys/devices/system/cpu/online)"
	echo "nproc $(nproc)"
} > "$OUT/cpus.txt" 2>&1

sh "$ITRACE_SRC/tools/testing/itrace/guest/kselftests.sh" \
	"$ITRACE_BUILD/selftests/itrace" "$OUT/kselftest"

mkdir -p "$OUT/e2e"
echo "guest: end-to-end recordings"
sh "$ITRACE_SRC/tools/testing/itrace/guest/e2e-record.sh" "$OUT/e2e"
echo "guest: itrace record's tests (threads migrating between the CPUs, -a on both)"
sh "$ITRACE_SRC/tools/testing/itrace/guest/record.sh" "$OUT/record"

exit 0
