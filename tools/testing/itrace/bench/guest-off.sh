#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench`: run the workload REPS times
# and never enable tracing; one line "off NS" per run into $OUT/off.txt.
. /in/params
"/in/work" "$ROUNDS" > /dev/null	# warm up
i=0
while [ "$i" -lt "$REPS" ]; do
	echo "off $(/in/work "$ROUNDS" | sed -n 's/.* ns=\([0-9]*\).*/\1/p')" >> "$OUT/off.txt"
	i=$((i + 1))
done
cat "$OUT/off.txt"
