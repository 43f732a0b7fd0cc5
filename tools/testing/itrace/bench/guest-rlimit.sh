#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench`: what RLIMIT_ITRACE costs,
# measured by /in/rlimit (tools/testing/itrace/bench/rlimit.c) into
# $OUT/rlimit.txt.  /in/rparams: BYTES (the limit), ROUNDS, REPS.
. /in/rparams
echo "/tmp/core.%p" > /proc/sys/kernel/core_pattern || exit 1
/in/rlimit "$BYTES" "$ROUNDS" "$REPS" /tmp > "$OUT/rlimit.txt" 2> "$OUT/rlimit.err"
rc=$?
cat "$OUT/rlimit.txt" "$OUT/rlimit.err"
exit $rc
