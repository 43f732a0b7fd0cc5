# SPDX-License-Identifier: GPL-2.0
#
# Guest half of `make fuzz` (busybox sh; run-vm.sh -c 2 boots the
# KASAN/lockdep/kmemleak test kernel on two vCPUs): runs itrace-fuzz with
# the settings of /in/fuzz.env (FUZZ_SEED, FUZZ_SECONDS, FUZZ_WORKERS) and
# the known findings of /in/known-findings (tools/testing/itrace/fuzz/), and
# leaves in $OUT/fuzz:
#   run.log   the run: seed, every worker life with its replay command,
#             kernel reports as they came, findings, the summary
#   log/      the op logs of the lives that found something (or ran
#             while the kernel reported something)
#   rc        itrace-fuzz's exit status
# The host judges the kernel log (tools/testing/itrace/fuzz/run.sh).
set -u
. /etc/itrace.env
. /in/fuzz.env

# An Oops kills the process that hit it, not the guest: the run goes on
# and its logs come back.  The host's health scan still fails the run.
echo 0 > /proc/sys/kernel/panic_on_oops
mkdir -p "$OUT/fuzz/log"
echo "guest: itrace-fuzz -s $FUZZ_SEED -t $FUZZ_SECONDS -w $FUZZ_WORKERS"
# The run log goes to the console too: it survives a guest that hangs.
{
	"$ITRACE_BUILD/tools/fuzz/itrace-fuzz" -s "$FUZZ_SEED" \
		-t "$FUZZ_SECONDS" -w "$FUZZ_WORKERS" -o "$OUT/fuzz/log" \
		-k /in/known-findings 2>&1
	echo "$?" > "$OUT/fuzz/rc"
} | tee "$OUT/fuzz/run.log" > /dev/console
tail -n 3 "$OUT/fuzz/run.log"
exit 0
