#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench` (bench/bts.sh): the workload
# REPS times without BTS and REPS times with `perf record -S -e
# intel_bts//u --per-thread` recording its user-mode branches, interleaved,
# the order alternating; lines "off NS" and "on NS" into $OUT/bts.txt, the
# size of the last snapshot into $OUT/snap.txt.
. /in/params
tar -xf /in/perf.tar -C / && rm -f /in/perf.tar
ns() { sed -n 's/.* ns=\([0-9]*\).*/\1/p'; }
off() { echo "off $(/in/work "$ROUNDS" | ns)" >> "$OUT/bts.txt"; }
on() {
	rm -f /tmp/bts.data
	/usr/bin/perf record -q -S -e intel_bts//u --per-thread ${PAGES:+-m ,$PAGES} -o /tmp/bts.data \
		/in/work "$ROUNDS" > /tmp/on.out 2> /tmp/on.log || { cat /tmp/on.log; exit 1; }
	echo "on $(ns < /tmp/on.out)" >> "$OUT/bts.txt"
	echo "$(wc -c < /tmp/bts.data) bytes of perf.data" >> "$OUT/snap.txt"
}
/in/work "$ROUNDS" > /dev/null || exit 1	# warm up
i=0
while [ "$i" -lt "$REPS" ]; do
	if [ $((i % 2)) -eq 0 ]; then off; on; else on; off; fi
	i=$((i + 1))
done
cat "$OUT/bts.txt"
