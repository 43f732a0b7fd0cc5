#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# samples-verify.sh DIR [PREFIX]: check on the host the recordings of
# samples with trace that tools/testing/itrace/guest/samples.sh made in the
# guest (itrace record -e EVENT, PERF_SAMPLE_ITRACE), through
# `itrace report --samples --json` on the host; TAP, one line per check.
#
#  - bp (execute breakpoint on target() of progs/callers.c): as many samples
#    as calls (71), every one decoded, its trace ending at the sample's ip,
#    target+0; its last branch the call from caller_a, _b or _c into
#    target, before it only that caller's own branches back to main's call
#    into it (its if went the way the program implies: into the call),
#    35, 21 and 15 of them;
#    the call chains caller_X -> target with those counts;
#  - abs: the same with mem:0xADDR:x on callers-nopie (fixed addresses);
#  - wbp (mem:sink:w/8, a data breakpoint on a variable of the PIE): one
#    sample after each store to it, 71 in target(), 9 in syscaller(),
#    each trace ending at the sample's ip (the instruction after the store);
#  - pf (page-faults): exactly 32 samples in toucher(), each trace ending
#    at the faulting store, the sample's ip;
#  - tp (syscalls:sys_enter_getppid): 9 samples, each with syscaller() in
#    the chain from its trace;
#  - clock, task, insns, cycles, branches, raw (cpu-clock, task-clock,
#    instructions, cycles, branches, r00c0): samples, decoded traces, from
#    every thread (threads) or process (forkexec);
#  - noinh (--no-inherit --sample-trace 1024): one thread, traces <= 1024;
#  - every recording: each sample counted once as decoded, missing, empty,
#    no PSB, undecodable or unreadable (none silently dropped); exit 0, or
#    3 when some trace could not be decoded (the first samples after the
#    exec may hold trace of the forked itrace child, whose mappings the
#    sideband does not have, and no PSB after the exec).
#
# Environment: ITRACE (default build/tools/itrace/itrace).

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
ITRACE=${ITRACE:-$top/build/tools/itrace/itrace}

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 DIR [PREFIX]   (DIR: guest/samples.sh's results)" >&2
	exit 2
fi
dir=$1
pfx=${2:+$2/}

for name in bp abs wbp pf tp clock task insns cycles branches raw noinh; do
	if [ -f "$dir/$name.itrace" ]; then
		"$ITRACE" report --samples --json "$dir/$name.itrace" > "$dir/$name.host.json" \
			2> "$dir/$name.host.err"
		echo $? > "$dir/$name.host.rc"
	fi
done

python3 - "$dir" "$pfx" <<'PY'
import json, os, sys
d, pfx = sys.argv[1], sys.argv[2]
n = 0
failed = 0

def tap(ok, name, why=""):
    global n, failed
    n += 1
    if ok:
        print(f"ok {n} {pfx}samples/{name}")
    else:
        failed += 1
        print(f"not ok {n} {pfx}samples/{name} # {why}")

def rd(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None

def load(name):
    rc, hrc = rd(f"{d}/{name}.rc"), rd(f"{d}/{name}.host.rc")
    log = (rd(f"{d}/{name}.log") or "").splitlines()
    if rc != "0":
        tap(False, f"{name}/record", f"exit {rc}: {log[-3:] if log else 'no log'}")
        return None
    tap(True, f"{name}/record: {log[-1] if log else ''}")
    try:
        with open(f"{d}/{name}.host.json") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        tap(False, f"{name}/report", f"exit {hrc}: {e}; {rd(f'{d}/{name}.host.err')}")
        return None
    c = doc["counts"]
    parts = sum(c[k] for k in ("decoded", "missing", "empty", "no_psb", "undecodable", "unreadable"))
    # exit 3 exactly when a trace could not be decoded or a sample read
    want_rc = "3" if c["undecodable"] or c["unreadable"] else "0"
    tap(hrc == want_rc and parts == c["samples"] == len(doc["samples"]) and c["samples"] > 0,
        f"{name}/report: exit {hrc}, {c['samples']} samples = {c['decoded']} decoded + "
        f"{c['missing']} missing + {c['empty']} empty + {c['no_psb']} no PSB + "
        f"{c['undecodable']} undecodable + {c['unreadable']} unreadable",
        f"the counts do not add up, or no samples: {c}; {rd(f'{d}/{name}.host.err')}")
    return doc

def sym(loc):
    return loc.get("symbol") if loc else None

# bp, abs: the breakpoint on target()
def check_bp(name):
    doc = load(name)
    if not doc:
        return
    ss = doc["samples"]
    at = [s for s in ss if sym(s["ip"]) == "target" and s["ip"].get("offset") == 0]
    tap(len(ss) == 71 and len(at) == 71, f"{name}/samples: {len(ss)} samples, {len(at)} at target+0 (71 calls)",
        f"{len(ss)} samples, {len(at)} at target+0")
    ends = [s for s in ss if s["trace"] == "decoded" and s.get("end_is_ip")]
    tap(len(ends) == len(ss) == 71, f"{name}/ends: {len(ends)} of {len(ss)} traces decoded and end at the breakpoint",
        f"{len(ends)} of {len(ss)}")
    by = {}
    bad = []
    for s in ss:
        b = s["branches"]
        ok = len(b) >= 2 and b[-1]["kind"] == "call" and sym(b[-1]["to"]) == "target" \
            and b[-1]["to"].get("offset") == 0
        caller = sym(b[-1]["from"]) if ok else None
        ok = ok and caller in ("caller_a", "caller_b", "caller_c")
        # back over the caller's own branches (its if, taken or not as the
        # compiler laid it out) to main's call into it
        i = len(b) - 2
        while ok and i >= 0 and b[i]["kind"] != "call" and sym(b[i]["from"]) == caller \
                and sym(b[i]["to"]) == caller:
            i -= 1
        ok = ok and i >= 0 and b[i]["kind"] == "call" and sym(b[i]["from"]) == "main" and \
            sym(b[i]["to"]) == caller and b[i]["to"].get("offset") == 0
        if ok:
            by[caller] = by.get(caller, 0) + 1
        else:
            bad.append(s)
    want = {"caller_a": 35, "caller_b": 21, "caller_c": 15}
    tap(not bad and by == want,
        f"{name}/last-call: main -> caller_X -> target, by caller {by} (the program: {want})",
        f"{len(bad)} samples otherwise (first: {bad[0]['branches'][-2:] if bad else ''}); {by}")
    ch = {c["key"]: c["count"] for c in doc["chains"]}
    got = {k: sum(v for c, v in ch.items() if c.endswith(f"{k} -> target")) for k in want}
    tap(got == want, f"{name}/chains: ... -> caller_X -> target {got}", f"{ch}")

check_bp("bp")
check_bp("abs")

# wbp: a write breakpoint on sink, written by target() and syscaller()
doc = load("wbp")
if doc:
    ss = doc["samples"]
    by = {}
    for s in ss:
        by[sym(s["ip"])] = by.get(sym(s["ip"]), 0) + 1
    ends = [s for s in ss if s["trace"] == "decoded" and s.get("end_is_ip")]
    tap(by == {"target": 71, "syscaller": 9} and len(ends) == len(ss),
        f"wbp: {len(ss)} write samples after the stores to sink {by}, {len(ends)} traces end at the sample ip",
        f"{by}, {len(ends)} of {len(ss)} end at the ip")

doc = load("pf")
if doc:
    ss = doc["samples"]
    t = [s for s in ss if sym(s["ip"]) == "toucher"]
    tap(len(t) == 32, f"pf/toucher: {len(t)} page-fault samples in toucher (32 pages)", f"{len(t)}")
    e = [s for s in t if s["trace"] == "decoded" and s.get("end_is_ip")]
    tap(len(e) == len(t) and t, f"pf/ends: {len(e)} of {len(t)} traces end at the faulting store",
        f"{len(e)} of {len(t)}")

doc = load("tp")
if doc:
    ss = doc["samples"]
    sc = [s for s in ss if any(sym(x) == "syscaller" for x in s["stack"])]
    tap(len(ss) == 9 and len(sc) == 9,
        f"tp/getppid: {len(ss)} samples, {len(sc)} with syscaller() in the trace's chain (9 calls)",
        f"{len(ss)} samples, {len(sc)} with syscaller")

# (cpu-clock fires at most once a tick in the test kernel, no high
# resolution timers: a short-lived thread may take no sample; insns shows
# the samples of several threads)
for name, key, least in (("clock", "tid", 1), ("task", "pid", 2), ("insns", "tid", 2),
                         ("cycles", "tid", 1), ("branches", "tid", 1), ("raw", "tid", 1)):
    doc = load(name)
    if not doc:
        continue
    ss = doc["samples"]
    dec = [s for s in ss if s["trace"] == "decoded"]
    ids = {s[key] for s in dec}
    tap(len(dec) > 0 and len(ids) >= least,
        f"{name}/decoded: {len(dec)} of {len(ss)} samples decoded, from {len(ids)} {key}s",
        f"{len(dec)} decoded of {len(ss)}, {len(ids)} {key}s (want >= {least})")

doc = load("noinh")
if doc:
    ss = doc["samples"]
    tids = {s["tid"] for s in ss}
    big = [s for s in ss if s["trace_size"] > 1024]
    tap(len(tids) == 1 and not big and doc["sample_trace"] == 1024,
        f"noinh: {len(ss)} samples of one thread, traces <= 1024 bytes",
        f"tids {tids}, {len(big)} bigger")
print(f"1..{n}")
sys.exit(1 if failed else 0)
PY
