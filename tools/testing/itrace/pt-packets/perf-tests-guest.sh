#!/bin/sh
# In the guest (busybox sh), for perf-tests.sh: unpack /in/perf.tar (perf,
# its tests, GNU tools, python) and run upstream test_intel_pt.sh with
# bash, the GNU tools first in PATH.
tar -xf /in/perf.tar -C / && rm -f /in/perf.tar || exit 1
export PATH=/usr/local/gnu/bin:$PATH
cd /usr/lib/perf-core/tests/shell || exit 1
timeout 700 bash ./test_intel_pt.sh > "$OUT/test_intel_pt.out" 2>&1
echo $? > "$OUT/test_intel_pt.rc"
dmesg > "$OUT/dmesg-end.txt"
exit 0
