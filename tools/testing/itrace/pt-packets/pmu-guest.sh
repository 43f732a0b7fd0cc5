# Guest half of pmu.sh (busybox sh): the emulated CPU's counters through
# the upstream x86 PMU driver and Debian's perf.  /in/perf.tar: perf and
# its libraries; /in/pmu-loop, /in/pmu-events (pmu.sh builds them);
# /in/pmu-params: PMU_PERIOD.
set -u
. /etc/itrace.env
. /in/pmu-params
tar -xf /in/perf.tar -C / && rm -f /in/perf.tar
perf=/usr/bin/perf
cd /tmp
dmesg > "$OUT/dmesg-boot.txt"
# Every sample counts here: no throttling for the time the (slow,
# emulated) PMI handler takes.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

# 1. Sampling on instructions: a sample every N user instructions.
$perf record -e instructions:u -c "$PMU_PERIOD" -o /tmp/loop.data /in/pmu-loop \
	> "$OUT/record.log" 2>&1
echo "rc $?" >> "$OUT/record.log"
$perf script -i /tmp/loop.data -F ip > "$OUT/loop.ips" 2> "$OUT/script.log"
echo "rc $?" >> "$OUT/script.log"
$perf report -i /tmp/loop.data --stats > "$OUT/loop.stats" 2>&1

# 2. Counting: the same program, user instructions and branches.
$perf stat -x, -e instructions:u,branches:u -o "$OUT/loop.stat" /in/pmu-loop \
	> "$OUT/stat.log" 2>&1
echo "rc $?" >> "$OUT/stat.log"

# 3. Sampling on cycles, user and kernel.
$perf record -e cycles -F 1000 -o /tmp/cycles.data /in/pmu-loop > "$OUT/cycles.log" 2>&1
echo "rc $?" >> "$OUT/cycles.log"
$perf script -i /tmp/cycles.data -F ip,sym > "$OUT/cycles.ips" 2>/dev/null

# 4. Kernel health: more events than counters, user and kernel, as root.
$perf stat -x, -o "$OUT/mux.stat" -e cycles,instructions,ref-cycles,branches,r00c0,r00c4,r003c,r013c,r01c4,L1-dcache-loads,L1-dcache-stores,LLC-loads,dTLB-loads \
	/in/pmu-loop > "$OUT/mux.log" 2>&1
echo "rc $?" >> "$OUT/mux.log"
/in/pmu-events > "$OUT/events-root.tap" 2>&1

# 5. The same as an unprivileged user, perf_event_paranoid 2.
echo 2 > /proc/sys/kernel/perf_event_paranoid
mkdir -p /tmp/nobody && chown nobody /tmp/nobody
su -s /bin/sh -c "cd /tmp/nobody && /in/pmu-events" nobody > "$OUT/events-nobody.tap" 2>&1
su -s /bin/sh -c "cd /tmp/nobody && $perf stat -x, -o /tmp/nobody/u.stat -e instructions:u,branches:u,cycles:u,r00c0:u,L1-dcache-stores:u /in/pmu-loop" \
	nobody > "$OUT/nobody.log" 2>&1
echo "rc $?" >> "$OUT/nobody.log"
cp /tmp/nobody/u.stat "$OUT/nobody.stat" 2>/dev/null
dmesg > "$OUT/dmesg-end.txt"
