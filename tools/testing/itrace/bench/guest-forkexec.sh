#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench`: fork+exec latency of one
# process while another toggles its RLIMIT_ITRACE, measured by
# /in/forkexec (tools/testing/itrace/bench/forkexec.c) into
# $OUT/forkexec.txt.  /in/fparams: THREADS, BYTES, ROUNDS, REPS.
. /in/fparams
/in/forkexec "$THREADS" "$BYTES" "$ROUNDS" "$REPS" > "$OUT/forkexec.txt" 2> "$OUT/forkexec.err"
rc=$?
cat "$OUT/forkexec.txt" "$OUT/forkexec.err"
exit $rc
