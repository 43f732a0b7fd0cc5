# Guest half of pmi.sh (busybox sh): pmi-spin traced by `itrace record`
# through the upstream intel_pt driver and the trace fd, with a 2-page
# buffer in stop mode (read-write mapping) and in overwrite mode
# (--snapshot, read-only mapping), and a 1 MiB buffer to measure the whole
# trace.  Two pages of one-page ToPA regions are the hard case for the
# driver's STOP marker: the room left often ends inside the region after
# the one being written.  Each recording is decoded here, where /in/pmi-spin is.
set -u
. /etc/itrace.env
it=$ITRACE_BUILD/tools/itrace/itrace
iters=${PMI_ITERS:-400000}
pmis() { awk '$1 == "PMI:" { print $2 }' /proc/interrupts; }
dmesg > "$OUT/dmesg-boot.txt"
cd /tmp
for run in full:256: stop:2: snap:2:--snapshot; do
	name=${run%%:*} rest=${run#*:}
	pages=${rest%%:*} opt=${rest#*:}
	before=$(pmis)
	$it record -o /tmp/$name.data -m "$pages" $opt -- /in/pmi-spin "$iters" \
		> "$OUT/$name.record" 2>&1
	echo "rc $?" >> "$OUT/$name.record"
	echo "pmis $(( $(pmis) - before ))" >> "$OUT/$name.record"
	$it decode --stats /tmp/$name.data > "$OUT/$name.stats" 2> "$OUT/$name.decode-err"
	echo "rc $?" >> "$OUT/$name.decode-err"
	rm -f /tmp/$name.data
done
grep -E 'NMI|PMI' /proc/interrupts > "$OUT/interrupts.txt"
dmesg > "$OUT/dmesg-end.txt"
