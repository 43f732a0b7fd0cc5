# SPDX-License-Identifier: GPL-2.0
#
# The late-PMI run of `make check` (busybox sh): the guest boots with
# `-cpu ...,intel-pt-pmi-delay=N`, each ToPA PMI held back for N bytes of
# trace output (or until output stops); /in/pmi-delay.bytes says N
# (run-vm.sh's FILE argument). By hand:
#   echo 65536 > build/pmi-delay.bytes
#   ITRACE_CPU_OPTS=intel-pt-pmi-delay=65536 BUILD=$PWD/build \
#     tools/testing/itrace/scripts/run-vm.sh -o build/vm/pd \
#     tools/testing/itrace/guest/pmi-delay.sh build/pmi-delay.bytes
# After each stop the PMI moves the output on and the trace goes on at
# once (issue 16, item 7). Leaves in $OUT:
#   kselftest/<name>.tap  overwrite's late_pmi_reports_lost_laps
set -u
. /etc/itrace.env

mkdir -p "$OUT/kselftest"
st=$ITRACE_BUILD/selftests/itrace
echo "guest: kselftest overwrite -t late_pmi_reports_lost_laps"
ITRACE_PT_PMI_DELAY=$(cat /in/pmi-delay.bytes) timeout 300 "$st/overwrite" \
	-t late_pmi_reports_lost_laps > "$OUT/kselftest/overwrite.tap" 2>&1
echo "# exit status $?" >> "$OUT/kselftest/overwrite.tap"
exit 0
