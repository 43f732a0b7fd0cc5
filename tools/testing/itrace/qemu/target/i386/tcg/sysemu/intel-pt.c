/*
 * Intel Processor Trace emulation for TCG
 *
 * Generates the packet stream described in the Intel SDM, Vol. 3C,
 * "Intel Processor Trace", for the instructions the guest executes, and
 * writes it to guest memory through ToPA or single-range output.
 *
 * Translation blocks are keyed on HF_PT_MASK (IA32_RTIT_CTL.TraceEn), so
 * only code translated while tracing is enabled calls the branch helpers
 * below; a guest that never enables tracing runs unchanged.  Whether
 * packets are generated (PacketEn: the CPL and CR3 filters) is decided at
 * run time, here.  Every IP in a packet comes from the run-time EIP.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/timer.h"
#include "cpu.h"
#include "exec/helper-proto.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "tcg/helper-tcg.h"
#include "tcg/intel-pt.h"
#include "tcg/pmu.h"

/* Packet opcodes (SDM "Packet Formats") */
#define PT_TIP_PGD      0x01
#define PT_EXT          0x02
#define PT_TIP          0x0d
#define PT_TIP_PGE      0x11
#define PT_TSC          0x19
#define PT_MTC          0x59
#define PT_CYC          0x03
#define PT_FUP          0x1d
#define PT_MODE         0x99
#define PT_EXT_PSB      0x82
#define PT_EXT_PSBEND   0x23
#define PT_EXT_OVF      0xf3
#define PT_EXT_PIP      0x43
#define PT_EXT_CBR      0x03
#define PT_EXT_TMA      0x73
#define PT_EXT_STOP     0x83

#define PT_PSB_LEN      16
#define PT_TNT_MAX      6       /* bits in a short TNT packet */
QEMU_BUILD_BUG_ON(INTEL_PT_TNT_FULL != 1 << PT_TNT_MAX);
QEMU_BUILD_BUG_ON(INTEL_PT_RET_STACK & (INTEL_PT_RET_STACK - 1));

/* TSC ticks per tick of the core crystal clock (CPUID leaf 0x15). */
#define PT_TSC_PER_CTC  (INTEL_PT_TCG_15_EBX / INTEL_PT_TCG_15_EAX)

/*
 * MTC payloads are 8 bits of CTC >> MTCFreq: a decoder cannot tell apart
 * gaps of 256 MTC periods or more, after which PSB+ (with TSC and TMA)
 * resynchronises it instead of an MTC.
 */
#define PT_MTC_WRAP     256

#define RTIT_CTL_VALID  (RTIT_CTL_TRACEEN | RTIT_CTL_CYCEN | RTIT_CTL_OS | \
                         RTIT_CTL_USER | RTIT_CTL_CR3FILTER | \
                         RTIT_CTL_TOPA | RTIT_CTL_MTCEN | \
                         RTIT_CTL_TSCEN | RTIT_CTL_DISRETC | \
                         RTIT_CTL_BRANCHEN | RTIT_CTL_MTCFREQ | \
                         RTIT_CTL_CYCTHRESH | RTIT_CTL_PSBFREQ | \
                         RTIT_CTL_ADDR_CFG(0) | RTIT_CTL_ADDR_CFG(1))
#define RTIT_STATUS_RW  (RTIT_STATUS_ERROR | RTIT_STATUS_STOPPED | \
                         RTIT_STATUS_PENDPSB | RTIT_STATUS_PENDTOPAPMI)
#define RTIT_STATUS_RO  (RTIT_STATUS_FILTEREN | RTIT_STATUS_CONTEXTEN | \
                         RTIT_STATUS_TRIGGEREN)

static bool pt_supported(CPUX86State *env)
{
    return env->features[FEAT_7_0_EBX] & CPUID_7_0_EBX_INTEL_PT;
}

static uint64_t pt_phys_mask(CPUX86State *env)
{
    return MAKE_64BIT_MASK(0, env_archcpu(env)->phys_bits);
}

static bool pt_trace_en(CPUX86State *env)
{
    return env->msr_rtit_ctrl & RTIT_CTL_TRACEEN;
}

/* TriggerEn: TraceEn and output has neither stopped nor failed. */
static bool pt_trigger_en(CPUX86State *env)
{
    return pt_trace_en(env) &&
           !(env->msr_rtit_status & (RTIT_STATUS_STOPPED |
                                     RTIT_STATUS_ERROR));
}

/* ContextEn: the CPL and CR3 filters let the current context through. */
static bool pt_context_en(CPUX86State *env)
{
    uint64_t ctl = env->msr_rtit_ctrl;
    int cpl = env->hflags & HF_CPL_MASK;

    if (!(ctl & (cpl == 0 ? RTIT_CTL_OS : RTIT_CTL_USER))) {
        return false;
    }
    if ((ctl & RTIT_CTL_CR3FILTER) &&
        ((env->cr[3] ^ env->msr_rtit_cr3_match) & ~0x1fULL)) {
        return false;
    }
    return true;
}

/*
 * Without BranchEn no COFI packets are generated; the packet stream then
 * holds only PSB+ (and timing), as on hardware.
 */
static bool pt_cofi_en(CPUX86State *env)
{
    return env->msr_rtit_ctrl & RTIT_CTL_BRANCHEN;
}

static unsigned pt_addr_cfg(uint64_t ctl, int n)
{
    return (ctl >> (RTIT_CTL_ADDR0_CFG_SHIFT + 4 * n)) & 0xf;
}

/*
 * TBs translated while tracing with an ADDRn range in use
 * (HF_PT_FILTER_MASK) also report direct JMP and CALL, whose targets may
 * enter or leave a range.
 */
static void pt_update_hflags(CPUX86State *env)
{
    env->hflags &= ~(HF_PT_MASK | HF_PT_FILTER_MASK);
    if (pt_trace_en(env)) {
        env->hflags |= HF_PT_MASK;
        if (env->msr_rtit_ctrl & (RTIT_CTL_ADDR_CFG(0) |
                                  RTIT_CTL_ADDR_CFG(1))) {
            env->hflags |= HF_PT_FILTER_MASK;
        }
    }
}

/*
 * IP filtering (SDM "Filtering by IP"): IA32_RTIT_ADDRn_A..B, bounds
 * included, with ADDRn_CFG 1 a FilterEn range and 2 a TraceStop range.
 * As on hardware, FilterEn and TraceStop are evaluated where a taken
 * branch or an event lands, not when linear code flow crosses a bound.
 */
static bool pt_in_range(CPUX86State *env, int n, target_ulong ip)
{
    return ip >= env->msr_rtit_addrs[2 * n] &&
           ip <= env->msr_rtit_addrs[2 * n + 1];
}

static bool pt_in_cfg_range(CPUX86State *env, unsigned cfg, target_ulong ip)
{
    int n;

    for (n = 0; n < INTEL_PT_TCG_ADDR_RANGES; n++) {
        if (pt_addr_cfg(env->msr_rtit_ctrl, n) == cfg &&
            pt_in_range(env, n, ip)) {
            return true;
        }
    }
    return false;
}

/* FilterEn at @ip: always 1 without a FilterEn range. */
static bool pt_filter_en(CPUX86State *env, target_ulong ip)
{
    return !env->pt.addr_filter ||
           pt_in_cfg_range(env, RTIT_ADDR_CFG_FILTER, ip);
}

/* At TraceEn 0 -> 1 and after loadvm: the ranges in use, FilterEn. */
static void pt_filter_init(CPUX86State *env, target_ulong ip)
{
    IntelPTState *pt = &env->pt;
    int n;

    pt->addr_filter = false;
    pt->addr_stop = false;
    for (n = 0; n < INTEL_PT_TCG_ADDR_RANGES; n++) {
        unsigned cfg = pt_addr_cfg(env->msr_rtit_ctrl, n);

        pt->addr_filter |= cfg == RTIT_ADDR_CFG_FILTER;
        pt->addr_stop |= cfg == RTIT_ADDR_CFG_STOP;
    }
    pt->filter_en = pt_filter_en(env, ip);
}

/* Output */

static void pt_set_output(CPUX86State *env, uint32_t table_off, uint32_t off)
{
    env->msr_rtit_output_mask = ((uint64_t)off << 32) | table_off | 0x7f;
}

static void pt_output_error(CPUX86State *env)
{
    env->msr_rtit_status |= RTIT_STATUS_ERROR;
}

/*
 * A ToPA entry with INT=1 filled up: set IA32_PERF_GLOBAL_STATUS bit 55
 * (Trace_ToPA_PMI) and raise the PMI (tcg/sysemu/pmu.c).  The bit stays
 * set until software writes 1 to IA32_PERF_GLOBAL_OVF_CTRL bit 55.
 */
static void pt_topa_pmi(CPUX86State *env)
{
    env->msr_global_status |= PERF_GLOBAL_TRACE_TOPA_PMI;
    tcg_pmu_pmi(env);
}

/*
 * A region with INT filled.  With the intel-pt-pmi-delay property the PMI
 * waits for that many more bytes of output (pt_topa_pmi_delayed()); a PMI
 * already waiting is not delayed further, and one more INT meanwhile is
 * the same PMI, as Trace_ToPA_PMI is one status bit.
 */
static void pt_topa_int(CPUX86State *env)
{
    uint32_t delay = env_archcpu(env)->intel_pt_pmi_delay;

    if (!delay) {
        pt_topa_pmi(env);
    } else if (!env->pt.pmi_delay_left) {
        env->pt.pmi_delay_left = delay;
    }
}

/* @n more bytes written, or output stopped (@stopped): a delayed PMI due? */
static void pt_topa_pmi_delayed(CPUX86State *env, uint32_t n, bool stopped)
{
    IntelPTState *pt = &env->pt;

    if (!pt->pmi_delay_left) {
        return;
    }
    if (stopped || n >= pt->pmi_delay_left) {
        pt->pmi_delay_left = 0;
        pt_topa_pmi(env);
    } else {
        pt->pmi_delay_left -= n;
    }
}

static bool pt_write_phys(CPUX86State *env, hwaddr addr,
                          const uint8_t *buf, uint32_t len)
{
    MemTxResult r;

    r = address_space_write(env_cpu(env)->as, addr, MEMTXATTRS_UNSPECIFIED,
                            buf, len);
    return r == MEMTX_OK;
}

/*
 * Single-range output: the region is OUTPUT_BASE, its size is given by the
 * mask in OUTPUT_MASK_PTRS[31:0]; the output wraps.
 */
static void pt_output_single(CPUX86State *env, const uint8_t *buf,
                             uint32_t len)
{
    uint32_t mask = (uint32_t)env->msr_rtit_output_mask | 0x7f;
    uint32_t off = (env->msr_rtit_output_mask >> 32) & mask;
    hwaddr base = env->msr_rtit_output_base & pt_phys_mask(env);

    while (len) {
        uint32_t n = MIN(len, (uint64_t)mask - off + 1);

        if (!pt_write_phys(env, base + off, buf, n)) {
            pt_output_error(env);
            return;
        }
        buf += n;
        len -= n;
        off = (off + n) & mask;
    }
    env->msr_rtit_output_mask = ((uint64_t)off << 32) |
                                (uint32_t)env->msr_rtit_output_mask | 0x7f;
}

/* Reserved bits of a ToPA entry (SDM "ToPA Table Entry Format"). */
#define TOPA_RESERVED   ((1ULL << 1) | (1ULL << 3) | (1ULL << 5) | \
                         (3ULL << 10))

/*
 * A malformed ToPA entry (SDM "ToPA Errors"): reserved bits or address
 * bits above MAXPHYADDR set, a region base not aligned to the region
 * size, STOP or INT on an END entry, END in entry 0 of a table.
 */
static bool pt_topa_entry_bad(uint64_t entry, uint32_t idx,
                              uint64_t phys_mask)
{
    uint64_t size = 4096ULL << ((entry >> TOPA_SIZE_SHIFT) & TOPA_SIZE_MASK);

    if (entry & (TOPA_RESERVED | ~phys_mask)) {
        return true;
    }
    if (entry & TOPA_END) {
        return idx == 0 || (entry & (TOPA_STOP | TOPA_INT));
    }
    return entry & (size - 1) & ~0xfffULL;
}

/*
 * Without multiple ToPA output entries (CPUID.14H.0:ECX[1] = 0, the
 * `intel-pt-topa-multi=off` CPU property), the SDM has the ToPA PMI of an
 * INT region come before the region is full, without saying how early;
 * Linux moves to its next table at a PMI that finds at most 512 bytes
 * (TOPA_PMI_MARGIN) left.  It is raised when this many are left: packets
 * reach memory a stage (INTEL_PT_STAGE_SIZE, 256 bytes) at a time and the
 * NMI is taken at the end of the translation block, so the handler finds
 * between 256 and 512 bytes left and the region never fills first.
 */
#define PT_TOPA_SINGLE_PMI_LEFT 512

/*
 * Read entry @idx of the ToPA table at @table into @entry: false if it
 * is outside memory or malformed, including the single-entry rules (SDM
 * "ToPA Errors").
 */
static bool pt_topa_read(CPUX86State *env, hwaddr table, uint32_t idx,
                         uint64_t *entry)
{
    bool multi = env_archcpu(env)->intel_pt_topa_multi;
    uint64_t phys_mask = pt_phys_mask(env);
    MemTxResult res;

    *entry = address_space_ldq(env_cpu(env)->as, table + idx * 8,
                               MEMTXATTRS_UNSPECIFIED, &res);
    if (res != MEMTX_OK || pt_topa_entry_bad(*entry, idx, phys_mask)) {
        return false;
    }
    /* SDM "ToPA Errors", rules for a single ToPA entry */
    return multi || idx != 1 ||
           ((*entry & TOPA_END) && (*entry & phys_mask & ~0xfffULL) == table);
}

/*
 * ToPA output: OUTPUT_BASE is the current table, OUTPUT_MASK_PTRS[31:7]
 * the index of the current entry and [63:32] the offset in its region.
 * A region that fills is left at once for the next entry, through an END
 * to its table (SDM "Table of Physical Addresses (ToPA)"), unless it has
 * STOP: then Stopped is set and the offset stays at the region size
 * ("ToPA STOP"), which is an operational error if tracing goes on from
 * there with Stopped clear ("ToPA Errors", illegal output offset), as is
 * any larger offset.  INT raises the ToPA PMI when its region fills.
 * Errors (malformed entries, a table or region outside memory) set Error
 * and leave the pointers at the entry at fault.  Tables of one output
 * entry (see PT_TOPA_SINGLE_PMI_LEFT) must have an END back to the table
 * as entry 1, and their INT comes early.
 */
static void pt_output_topa(CPUX86State *env, const uint8_t *buf,
                           uint32_t len)
{
    bool multi = env_archcpu(env)->intel_pt_topa_multi;
    uint64_t phys_mask = pt_phys_mask(env);
    hwaddr table = env->msr_rtit_output_base & phys_mask;
    uint32_t idx = (uint32_t)env->msr_rtit_output_mask >> 7;
    uint32_t off = env->msr_rtit_output_mask >> 32;

    while (len) {
        uint64_t entry, size;
        hwaddr region;
        uint32_t n;

        if (!pt_topa_read(env, table, idx, &entry)) {
            pt_output_error(env);
            break;
        }
        region = entry & phys_mask & ~0xfffULL;
        if (entry & TOPA_END) {
            table = region;
            idx = 0;
            off = 0;
            continue;
        }
        size = 4096ULL << ((entry >> TOPA_SIZE_SHIFT) & TOPA_SIZE_MASK);
        if (off >= size) {
            pt_output_error(env);
            break;
        }
        n = MIN(len, size - off);
        if (!pt_write_phys(env, region + off, buf, n)) {
            pt_output_error(env);
            break;
        }
        buf += n;
        len -= n;
        off += n;
        pt_topa_pmi_delayed(env, n, false);
        if (!multi && (entry & TOPA_INT) &&
            off + PT_TOPA_SINGLE_PMI_LEFT >= size &&
            off - n + PT_TOPA_SINGLE_PMI_LEFT < size) {
            pt_topa_int(env);
        }
        if (off < size) {
            continue;
        }
        /* The region is full: the only place INT and STOP act. */
        if (multi && (entry & TOPA_INT)) {
            pt_topa_int(env);
        }
        if (entry & TOPA_STOP) {
            env->msr_rtit_status |= RTIT_STATUS_STOPPED;
            break;
        }
        /* On to the next region now, not when more data comes. */
        idx++;
        off = 0;
        if (idx >= (1U << 25) || !pt_topa_read(env, table, idx, &entry)) {
            pt_output_error(env);
            break;
        }
        if (entry & TOPA_END) {
            table = entry & phys_mask & ~0xfffULL;
            idx = 0;
        }
    }
    env->msr_rtit_output_base = table;
    pt_set_output(env, idx << 7, off);
    if (env->msr_rtit_status & (RTIT_STATUS_STOPPED | RTIT_STATUS_ERROR)) {
        /* No more output to wait for: a held-back PMI comes now. */
        pt_topa_pmi_delayed(env, 0, true);
    }
}

static void pt_flush(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;

    if (pt->stage_len && pt_trigger_en(env)) {
        if (env->msr_rtit_ctrl & RTIT_CTL_TOPA) {
            pt_output_topa(env, pt->stage, pt->stage_len);
        } else {
            pt_output_single(env, pt->stage, pt->stage_len);
        }
        if (!pt_trigger_en(env)) {
            /* Output stopped or failed: no more packets until restarted. */
            pt->packet_en = false;
        }
    }
    pt->stage_len = 0;
}

/* Packet generation */

/*
 * Room for a packet of up to @len bytes.  The stage holds whole packets
 * only: a migration, which does not carry the stage, then loses whole
 * packets, and the OVF that intel_pt_post_load() emits accounts for them.
 */
static void pt_packet(CPUX86State *env, uint32_t len)
{
    if (env->pt.stage_len + len > INTEL_PT_STAGE_SIZE) {
        pt_flush(env);
    }
}

static void pt_byte(CPUX86State *env, uint8_t b)
{
    IntelPTState *pt = &env->pt;

    /* Never full: pt_packet() made room for the packet. */
    if (pt->stage_len == INTEL_PT_STAGE_SIZE) {
        pt_flush(env);
    }
    pt->stage[pt->stage_len++] = b;
    pt->psb_bytes++;
}

/* A whole packet of @len bytes, at most 16. */
static inline void pt_put(CPUX86State *env, const uint8_t *b, uint32_t len)
{
    IntelPTState *pt = &env->pt;

    pt_packet(env, len);
    memcpy(pt->stage + pt->stage_len, b, len);
    pt->stage_len += len;
    pt->psb_bytes += len;
}

static void pt_bytes_le(CPUX86State *env, uint64_t val, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        pt_byte(env, val >> (8 * i));
    }
}

/* Timing */

/*
 * Host TSC ticks for which the guest TSC of packets is extrapolated from
 * the last read of cpu_get_tsc() (2^17: ~50 us on a 2-3 GHz host).
 */
#define PT_CLOCK_WINDOW (1ULL << 17)

/*
 * The rate of the guest TSC per host tick between the last read and this
 * one, t at dh host ticks later, in 32.32 fixed point; 0 if not known.
 */
static uint64_t pt_clock_rate(IntelPTClock *k, uint64_t dh, uint64_t t)
{
    uint64_t rate;

    if (!k->host || dh < PT_CLOCK_WINDOW || t <= k->guest) {
        return 0;
    }
    rate = (((unsigned __int128)(t - k->guest)) << 32) / dh;
    /*
     * Virtual time stops with the VM, host ticks do not: a rate 1/64 off
     * the last one in use spanned a stop (or that one did), and neither
     * is used; the next one measured is.
     */
    if (k->good && (rate > k->good + k->good / 64 ||
                    rate < k->good - k->good / 64)) {
        k->good = 0;
        return 0;
    }
    k->good = rate;
    return rate;
}

/*
 * The guest TSC, as RDTSC reads it: TCG_PT_TSC_MHZ against virtual time
 * (cpu_get_tsc()).  The emulated core crystal clock (CTC) is TSC /
 * PT_TSC_PER_CTC, and the core clock runs at the nominal ratio (CBR =
 * MSR_PLATFORM_INFO[15:8]), one cycle per TSC tick.  MTC, TMA, CYC and
 * TSC packets all derive from this one clock, so they agree with each
 * other and never go backwards.
 *
 * Tracing reads it every few packets (pt_timing()), and cpu_get_tsc()
 * costs a clock_gettime() and a 128-bit division: a third of what MTCEn
 * tracing added to a branchy workload.  Within PT_CLOCK_WINDOW host ticks
 * of its last read, it is extrapolated from the host's TSC instead, at
 * the rate the last two reads measured (guest per host ticks, 32.32 fixed
 * point; both clocks follow host time, so the error is that of the rate
 * over the window, a few ns).  A stopped VM, a migration (another host
 * TSC) or a host TSC going back all leave the window: the clock is read
 * again, and until a rate is measured again, at every read.  Never
 * backwards, but after loadvm (intel_pt_post_load()).
 */
static uint64_t pt_tsc(CPUX86State *env)
{
    IntelPTClock *k = &env->pt_clock;
    uint64_t host = cpu_get_host_ticks(), dh = host - k->host, t;

    if (k->rate && dh < PT_CLOCK_WINDOW) {
        t = k->guest + (uint64_t)(((unsigned __int128)dh * k->rate) >> 32);
    } else {
        t = cpu_get_tsc(env);
        if (!k->host || dh >= PT_CLOCK_WINDOW) {
            k->rate = pt_clock_rate(k, dh, t);
            k->host = host;
            k->guest = t;
        }
    }
    t = MAX(t, k->last);
    k->last = t;
    return t + env->tsc_offset;
}

static unsigned pt_mtc_freq(CPUX86State *env)
{
    return (env->msr_rtit_ctrl & RTIT_CTL_MTCFREQ) >> RTIT_CTL_MTCFREQ_SHIFT;
}

/* PSBFreq: a PSB+ every 2K << PSBFreq bytes of output. */
static uint32_t pt_psb_period(CPUX86State *env)
{
    return 2048U << ((env->msr_rtit_ctrl & RTIT_CTL_PSBFREQ) >>
                     RTIT_CTL_PSBFREQ_SHIFT);
}

/*
 * CYC: header bits 1:0 = 11b, bit 2 Exp, bits 7:3 the count's bits 4:0;
 * each further byte bit 0 Exp, bits 7:1 the next 7 bits of the count.
 */
static void pt_cyc(CPUX86State *env, uint64_t cyc)
{
    uint8_t b[11];
    int i, n = 0;

    b[n] = PT_CYC | ((cyc & 0x1f) << 3);
    cyc >>= 5;
    while (cyc) {
        b[n] |= n == 0 ? 0x04 : 0x01;
        n++;
        b[n] = (cyc & 0x7f) << 1;
        cyc >>= 7;
    }
    n++;
    pt_packet(env, n);
    for (i = 0; i < n; i++) {
        pt_byte(env, b[i]);
    }
}

/*
 * Before a packet that carries timing (TNT, TIP, TIP.PGE/PGD, FUP and
 * MODE outside PSB+): an MTC if the CTC bit that MTCFreq selects has
 * toggled since the last MTC or TMA, and with CYCEn a CYC with the core
 * cycles since the last CYC, if at least 2^(CycThresh - 1).  Packets are
 * the only points at which the trace can tell time, so an MTC is emitted
 * at the first packet after the CTC edge, with the payload of the latest
 * edge, as if it had been emitted at the edge with nothing in between: a
 * CYC before it (whatever CycThresh) counts the cycles up to the edge,
 * the next CYC those from the edge on, so that a decoder's time never
 * runs ahead of the MTC.  A gap the 8-bit payload cannot express asks for
 * a PSB+ instead.
 */
static void pt_timing_emit(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;
    uint64_t ctl = env->msr_rtit_ctrl;
    uint64_t tsc;

    tsc = pt_tsc(env);
    if (ctl & RTIT_CTL_MTCEN) {
        unsigned freq = pt_mtc_freq(env);
        uint64_t period = (tsc / PT_TSC_PER_CTC) >> freq;

        if (period != pt->mtc_period) {
            uint64_t edge = (period << freq) * PT_TSC_PER_CTC;

            if (pt->psb_pending) {
                /* The PSB+ to come resynchronises time. */
            } else if (period - pt->mtc_period >= PT_MTC_WRAP &&
                       (ctl & RTIT_CTL_TSCEN)) {
                pt->psb_pending = true;
            } else {
                if ((ctl & RTIT_CTL_CYCEN) && edge > pt->cyc_tsc) {
                    pt_cyc(env, edge - pt->cyc_tsc);
                    pt->cyc_tsc = edge;
                }
                pt_packet(env, 2);
                pt_byte(env, PT_MTC);
                pt_byte(env, period);
            }
            pt->mtc_period = period;
        }
    }
    if (ctl & RTIT_CTL_CYCEN) {
        unsigned thresh = (ctl & RTIT_CTL_CYCTHRESH) >>
                          RTIT_CTL_CYCTHRESH_SHIFT;
        uint64_t cyc = tsc - pt->cyc_tsc;

        if (cyc && cyc >= (thresh ? 1ULL << (thresh - 1) : 0)) {
            pt_cyc(env, cyc);
            pt->cyc_tsc = tsc;
        }
    }
}

/*
 * The test of pt_timing_emit() inlined at every packet.  Without MTCEn and
 * CYCEn a packet costs no call for it.  CYC packets count the cycles
 * before each packet, so with CYCEn every packet reads the clock.  With
 * MTCEn alone (perf's and itrace's default) the branch packets (TNT, TIP:
 * @branch) of user mode (pt_timing_lazy()) in the next PT_MTC_CHECK_BYTES
 * bytes after a clock read do not read it again: an MTC comes at the
 * first packet after the CTC edge that reads the clock, as
 * pt_timing_emit() says, up to that many bytes later.  Every other packet
 * (TIP.PGE, TIP.PGD, FUP, MODE, PSB+, any in the kernel) reads it: they
 * mark where the trace stops and starts, or run where a context switch
 * happens, which decoders place by the sideband's times.  The guest's time
 * under TCG is the host's, which no instruction of the guest is tied to;
 * reading it costs more than generating the packet, and reading it at
 * every packet made MTCEn tracing 2.5 times as slow as without it.
 */
#define PT_MTC_CHECK_BYTES      16

/*
 * In user mode only: the kernel's packets (a context switch among them,
 * which decoders of a user+kernel trace place by the time) read the clock.
 */
static inline bool pt_timing_lazy(CPUX86State *env)
{
    return (env->hflags & HF_CPL_MASK) == 3;
}

static inline void pt_timing(CPUX86State *env, bool branch)
{
    IntelPTState *pt = &env->pt;
    uint64_t ctl = env->msr_rtit_ctrl;

    if (pt->in_psb || !pt->timed ||
        !(ctl & (RTIT_CTL_MTCEN | RTIT_CTL_CYCEN))) {
        return;
    }
    if (branch && !(ctl & RTIT_CTL_CYCEN) && pt_timing_lazy(env) &&
        pt->psb_bytes < pt->timing_next) {
        return;
    }
    pt_timing_emit(env);
    pt->timing_next = pt->psb_bytes + PT_MTC_CHECK_BYTES;
}

/*
 * The pending TNT bits are kept below a 1 bit in tnt_acc, so that the
 * inline code of a TB adds one with a shift (translate.c, gen_pt_tnt())
 * and the short TNT packet is the accumulator shifted left by one: the
 * 1 becomes the packet's stop bit, bit 0 its opcode (0).
 */
static void pt_tnt_flush(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;

    if (pt->tnt_acc > 1) {
        uint8_t b = pt->tnt_acc << 1;

        pt_timing(env, true);
        pt_put(env, &b, 1);
        pt->tnt_acc = 1;
    }
}

static void pt_tnt(CPUX86State *env, bool taken)
{
    IntelPTState *pt = &env->pt;

    pt->tnt_acc = (pt->tnt_acc << 1) | taken;
    if (pt->tnt_acc >= INTEL_PT_TNT_FULL) {
        pt_tnt_flush(env);
    }
}

/*
 * Emit a packet with an IP payload, compressed against the last IP as the
 * SDM's "IP Compression" rules allow: the shortest of update-16, update-32,
 * sign-extended-48, update-48 and full.  Inside PSB+ the IP is never
 * compressed (sign-extended-48 or full): a decoder may take the FUP of a
 * PSB+ before it clears its last IP for the PSB, as perf's does
 * (intel_pt_psb_with_fup()), and an update-16/32 would then combine with
 * the IP of the last packet before the PSB.
 */
static void pt_ip_packet(CPUX86State *env, uint8_t opc, uint64_t ip)
{
    IntelPTState *pt = &env->pt;
    uint64_t last = pt->last_ip;
    uint8_t b[9];
    int ipc, len;

    pt_tnt_flush(env);
    pt_timing(env, opc == PT_TIP);
    if (pt->in_psb) {
        ipc = sextract64(ip, 0, 48) == ip ? 3 : 6;
        len = ipc == 3 ? 6 : 8;
    } else if ((ip >> 16) == (last >> 16)) {
        ipc = 1;
        len = 2;
    } else if ((ip >> 32) == (last >> 32)) {
        ipc = 2;
        len = 4;
    } else if (sextract64(ip, 0, 48) == ip) {
        ipc = 3;
        len = 6;
    } else if ((ip >> 48) == (last >> 48)) {
        ipc = 4;
        len = 6;
    } else {
        ipc = 6;
        len = 8;
    }
    b[0] = opc | (ipc << 5);
    stq_le_p(b + 1, ip);        /* the low @len bytes are the payload */
    pt_put(env, b, 1 + len);
    pt->last_ip = ip;
}

/* A packet with the full, uncompressed IP. */
static void pt_ip_packet_full(CPUX86State *env, uint8_t opc, uint64_t ip)
{
    pt_tnt_flush(env);
    pt_timing(env, false);
    pt_packet(env, 9);
    pt_byte(env, opc | (6 << 5));
    pt_bytes_le(env, ip, 8);
    env->pt.last_ip = ip;
}

/* A packet whose IP payload is suppressed; the last IP is unchanged. */
static void pt_noip_packet(CPUX86State *env, uint8_t opc)
{
    pt_tnt_flush(env);
    pt_timing(env, false);
    pt_packet(env, 1);
    pt_byte(env, opc);
}

static uint8_t pt_exec_mode(CPUX86State *env)
{
    if (env->hflags & HF_CS64_MASK) {
        return 0x01;            /* CS.L */
    }
    return env->hflags & HF_CS32_MASK ? 0x02 : 0x00;   /* CS.D */
}

static void pt_mode_exec(CPUX86State *env)
{
    env->pt.exec_mode = pt_exec_mode(env);
    pt_tnt_flush(env);
    pt_timing(env, false);
    pt_packet(env, 2);
    pt_byte(env, PT_MODE);
    pt_byte(env, env->pt.exec_mode);
}

static void pt_ret_stack_clear(CPUX86State *env)
{
    int i;

    for (i = 0; i < INTEL_PT_RET_STACK; i++) {
        env->pt.ret_stack[i] = INTEL_PT_RET_NONE;
    }
}

/*
 * PSB+: PSB, TSC (TSCEn), TMA (TSCEn and MTCEn), CBR, MODE.Exec, FUP with
 * the IP where execution continues (only while PacketEn), PSBEND.  A
 * decoder may start here, so the last IP is reset and RET compression
 * restarts from an empty stack.  TSC and TMA restart MTC and CYC: a CYC
 * before the PSB (whatever CycThresh) counts the cycles up to the TSC, so
 * that the CYC packets between two MTC account for all cycles between
 * them, which decoders calibrate the cycle-to-TSC ratio with.
 */
/* PIP: CR3[51:5] in payload bits 47:1; NR (bit 0) is 0 (no VMX). */
static void pt_pip(CPUX86State *env)
{
    pt_packet(env, 8);
    pt_byte(env, PT_EXT);
    pt_byte(env, PT_EXT_PIP);
    pt_bytes_le(env, (env->cr[3] >> 5) << 1, 6);
}

static void pt_psb_plus(CPUX86State *env, target_ulong ip)
{
    IntelPTState *pt = &env->pt;
    uint64_t tsc;
    int i;

    pt_tnt_flush(env);
    pt_timing(env, false);
    tsc = pt_tsc(env);
    if ((env->msr_rtit_ctrl & RTIT_CTL_CYCEN) && pt->timed &&
        tsc > pt->cyc_tsc) {
        pt_cyc(env, tsc - pt->cyc_tsc);
    }
    pt->in_psb = true;
    pt->psb_pending = false;
    pt->psb_bytes = 0;
    pt_packet(env, PT_PSB_LEN);
    for (i = 0; i < PT_PSB_LEN / 2; i++) {
        pt_byte(env, PT_EXT);
        pt_byte(env, PT_EXT_PSB);
    }
    pt->last_ip = 0;
    pt_ret_stack_clear(env);
    if (env->msr_rtit_ctrl & RTIT_CTL_TSCEN) {
        pt_packet(env, 8);
        pt_byte(env, PT_TSC);
        pt_bytes_le(env, tsc, 7);
        if (env->msr_rtit_ctrl & RTIT_CTL_MTCEN) {
            /*
             * TMA: CTC[15:0] at the TSC, and the fast counter: the core
             * cycles (here TSC ticks) since that CTC tick.
             */
            uint64_t ctc = tsc / PT_TSC_PER_CTC;
            uint64_t fc = tsc - ctc * PT_TSC_PER_CTC;

            pt_packet(env, 7);
            pt_byte(env, PT_EXT);
            pt_byte(env, PT_EXT_TMA);
            pt_bytes_le(env, ctc, 2);
            pt_byte(env, 0);
            pt_bytes_le(env, fc & 0x1ff, 2);
            pt->mtc_period = ctc >> pt_mtc_freq(env);
        }
    }
    pt->cyc_tsc = tsc;
    pt->timed = true;
    pt_packet(env, 4);
    pt_byte(env, PT_EXT);
    pt_byte(env, PT_EXT_CBR);
    pt_byte(env, INTEL_PT_TCG_BUS_RATIO);
    pt_byte(env, 0);
    /* SDM 33.3.7: PIP if ContextEn and IA32_RTIT_CTL.OS */
    if ((env->msr_rtit_ctrl & RTIT_CTL_OS) && pt_context_en(env)) {
        pt_pip(env);
    }
    pt_mode_exec(env);
    if (pt->packet_en) {
        pt_ip_packet(env, PT_FUP, ip);
    }
    pt_packet(env, 2);
    pt_byte(env, PT_EXT);
    pt_byte(env, PT_EXT_PSBEND);
    pt->in_psb = false;
    /* TSC and TMA told the time: the next read is as after an MTC check. */
    pt->timing_next = pt->psb_bytes + PT_MTC_CHECK_BYTES;
}

/* Periodic PSB+, inserted where execution continues at @ip. */
static void pt_maybe_psb(CPUX86State *env, target_ulong ip)
{
    if (env->pt.psb_bytes >= pt_psb_period(env) || env->pt.psb_pending) {
        pt_psb_plus(env, ip);
    }
}

static void pt_enable_packets(CPUX86State *env, target_ulong ip)
{
    env->pt.packet_en = true;
    pt_ret_stack_clear(env);
    if (pt_cofi_en(env)) {
        pt_mode_exec(env);
        pt_ip_packet(env, PT_TIP_PGE, ip);
    }
    pt_maybe_psb(env, ip);
}

static void pt_disable_packets(CPUX86State *env)
{
    env->pt.packet_en = false;
    pt_ret_stack_clear(env);
    if (pt_cofi_en(env)) {
        pt_noip_packet(env, PT_TIP_PGD);
    }
}

/*
 * FilterEn 1 -> 0 at a branch to @ip: TIP.PGD with the branch target.
 * (The SDM suppresses the IP for conditional branches; libipt binds a
 * TIP.PGD with IP to a conditional branch, and perf accepts it, so the
 * target is given for every branch.)
 */
static void pt_disable_packets_ip(CPUX86State *env, target_ulong ip)
{
    env->pt.packet_en = false;
    pt_ret_stack_clear(env);
    if (pt_cofi_en(env)) {
        pt_ip_packet(env, PT_TIP_PGD, ip);
    }
}

/*
 * A taken branch or event landed at @ip in a TraceStop range, with
 * TriggerEn before it and ContextEn after it: TIP.PGD (with the target)
 * if packets were being generated, then TraceStop; Stopped is set, which
 * clears TriggerEn.
 */
static void pt_trace_stop(CPUX86State *env, target_ulong ip)
{
    if (env->pt.packet_en) {
        pt_disable_packets_ip(env, ip);
    }
    pt_packet(env, 2);
    pt_byte(env, PT_EXT);
    pt_byte(env, PT_EXT_STOP);
    pt_flush(env);
    env->msr_rtit_status |= RTIT_STATUS_STOPPED;
    env->pt.packet_en = false;
}

/*
 * IP filtering at a near branch that lands at @ip, with TriggerEn; only
 * while an ADDRn range is in use.  Returns true if the branch itself is
 * traced (PacketEn stays 1), false if it turned packets on or off (the
 * TIP.PGE or TIP.PGD says where) or they stay off.
 */
static bool pt_filter_branch(CPUX86State *env, target_ulong ip)
{
    IntelPTState *pt = &env->pt;

    if (!pt->packet_en && !pt_context_en(env)) {
        return false;
    }
    if (pt->addr_stop && pt_in_cfg_range(env, RTIT_ADDR_CFG_STOP, ip)) {
        pt_trace_stop(env, ip);
        return false;
    }
    pt->filter_en = pt_filter_en(env, ip);
    if (pt->packet_en && !pt->filter_en) {
        pt_disable_packets_ip(env, ip);
        return false;
    }
    if (!pt->packet_en && pt->filter_en) {
        pt_enable_packets(env, ip);
        return false;
    }
    return pt->packet_en;
}

static bool pt_filtering(CPUX86State *env)
{
    return env->pt.addr_filter || env->pt.addr_stop;
}

/*
 * What the code inlined at branches may do until the next call into this
 * file (translate.c, gen_pt_*()), recomputed by every entry point before
 * it returns.  Inline code adds TNT bits (a RET compressed into one
 * included), stages full short TNT packets (inline_room) and pushes the
 * return addresses of CALLs; it calls a helper for a RET that does not
 * compress.  Anything
 * else is left to the helpers: IP filtering, whose TBs call them
 * unconditionally (HF_PT_FILTER_MASK), and a PSB+ that is due, since the
 * helpers insert it at the next branch.  With no packets generated, the
 * inline code does nothing.
 */
static void pt_sync_inline(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;

    uint32_t psb_period;

    pt->inline_room = 0;
    if (!pt->packet_en || !pt_cofi_en(env)) {
        pt->inline_en = INTEL_PT_INLINE_OFF;
        return;
    }
    psb_period = pt_psb_period(env);
    if (pt_filtering(env) || pt->psb_pending || pt->psb_bytes >= psb_period) {
        pt->inline_en = INTEL_PT_INLINE_SLOW;
        return;
    }
    pt->inline_en = env->msr_rtit_ctrl & RTIT_CTL_DISRETC ?
                    INTEL_PT_INLINE_FAST : INTEL_PT_INLINE_RETC;
    /*
     * Packet bytes (a full TNT packet's, a TIP's) may be staged inline if
     * they fit, need no look at the clock before them (pt_timing(): none
     * with CYCEn, up to timing_next with MTCEn alone), and do not make a
     * PSB+ due: the byte that does goes through a helper, which inserts
     * the PSB+ right after it, as pt_maybe_psb() does after any packet.
     */
    if (env->msr_rtit_ctrl & RTIT_CTL_CYCEN) {
        return;
    }
    pt->inline_room = MIN(INTEL_PT_STAGE_SIZE - pt->stage_len,
                          psb_period - 1 - pt->psb_bytes);
    if ((env->msr_rtit_ctrl & RTIT_CTL_MTCEN) && pt->timed) {
        pt->inline_room = MIN(pt->inline_room,
                              pt_timing_lazy(env) &&
                              pt->timing_next > pt->psb_bytes ?
                              pt->timing_next - pt->psb_bytes : 0);
    }
}

/* TraceEn 0 -> 1, by WRMSR at @next_ip. */
/* The packet generator's state as at TraceEn 0 -> 1. */
static void pt_state_reset(CPUX86State *env)
{
    memset(&env->pt, 0, sizeof(env->pt));
    env->pt.tnt_acc = 1;
    pt_ret_stack_clear(env);
}

static void pt_start(CPUX86State *env, target_ulong next_ip)
{
    IntelPTState *pt = &env->pt;

    pt_state_reset(env);
    pt_filter_init(env, next_ip);
    if (!pt_trigger_en(env)) {
        return;
    }
    pt_psb_plus(env, next_ip);
    if (pt_context_en(env) && pt->filter_en) {
        pt_enable_packets(env, next_ip);
    }
}

/*
 * TraceEn 1 -> 0, by WRMSR: tracing ends before the instruction at
 * @next_ip, which the FUP tells the decoder.
 */
static void pt_stop(CPUX86State *env, target_ulong next_ip)
{
    if (env->pt.packet_en && pt_cofi_en(env)) {
        pt_ip_packet(env, PT_FUP, next_ip);
    }
    if (env->pt.packet_en) {
        pt_disable_packets(env);
    }
    pt_flush(env);
    /* A held-back ToPA PMI does not wait for output that will not come. */
    pt_topa_pmi_delayed(env, 0, true);
}

/*
 * A far transfer (far CALL/JMP/RET, INT n, IRET, SYSCALL, SYSRET,
 * SYSENTER, SYSEXIT) or, if @async, an interrupt or exception that
 * interrupted the instruction at @src.  Called once the CPU state is that
 * of the target; CPL and CR3 filters are evaluated again here.
 */
static void pt_far_transfer(CPUX86State *env, bool async, target_ulong src)
{
    IntelPTState *pt = &env->pt;
    bool was_en = pt->packet_en;
    bool now_en;

    if (!pt_trigger_en(env)) {
        return;
    }
    now_en = pt_context_en(env);
    if (now_en && pt_filtering(env)) {
        /* FilterEn toggles only with ContextEn; TraceStop needs it. */
        if (pt->addr_stop &&
            pt_in_cfg_range(env, RTIT_ADDR_CFG_STOP, env->eip)) {
            if (was_en && async && pt_cofi_en(env)) {
                pt_ip_packet(env, PT_FUP, src);
            }
            pt_trace_stop(env, env->eip);
            return;
        }
        pt->filter_en = pt_filter_en(env, env->eip);
    }
    now_en = now_en && pt->filter_en;
    if (!was_en && !now_en) {
        return;
    }
    if (!pt_cofi_en(env)) {
        pt->packet_en = now_en;
        return;
    }
    if (was_en && async) {
        pt_ip_packet(env, PT_FUP, src);
    }
    if (!now_en) {
        if (pt_context_en(env)) {
            /* FilterEn cleared: the target is in context. */
            pt_disable_packets_ip(env, env->eip);
        } else {
            pt_disable_packets(env);
        }
    } else if (!was_en) {
        pt_enable_packets(env, env->eip);
    } else {
        if (pt_exec_mode(env) != pt->exec_mode) {
            pt_mode_exec(env);
        }
        pt_ip_packet(env, PT_TIP, env->eip);
        pt_maybe_psb(env, env->eip);
    }
}

void intel_pt_far_transfer(CPUX86State *env, bool async, target_ulong src)
{
    pt_far_transfer(env, async, src);
    pt_sync_inline(env);
}

/*
 * After loadvm or an incoming migration.  The packet generator's own state
 * (staged bytes, pending TNT bits, last IP, call stack) is not migrated:
 * report the loss as hardware reports its internal buffer overflows, with
 * OVF and, if packets are being generated, a FUP where execution resumes.
 */
static void pt_post_load(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;

    /* virtual time is the snapshot's: the clock starts from it */
    memset(&env->pt_clock, 0, sizeof(env->pt_clock));
    pt_state_reset(env);
    pt_update_hflags(env);
    pt_filter_init(env, env->eip);
    if (!pt_trigger_en(env)) {
        return;
    }
    pt->packet_en = pt_context_en(env) && pt->filter_en;
    pt_packet(env, 2);
    pt_byte(env, PT_EXT);
    pt_byte(env, PT_EXT_OVF);
    /* Timing restarts at a PSB+ (TSC, TMA), at the next branch. */
    pt->psb_pending = true;
    if (pt->packet_en && pt_cofi_en(env)) {
        pt->exec_mode = pt_exec_mode(env);
        pt_ip_packet_full(env, PT_FUP, env->eip);
    }
}

/*
 * MOV to CR3 (EIP already at the next instruction): PIP while packets are
 * generated in kernel tracing, and the CR3 filter evaluated again.
 */
static void pt_mov_cr3(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;
    bool now_en;

    if (!pt_trigger_en(env)) {
        return;
    }
    now_en = pt_context_en(env) && pt->filter_en;
    if (pt->packet_en && now_en) {
        if (env->msr_rtit_ctrl & RTIT_CTL_OS) {
            pt_tnt_flush(env);
            pt_timing(env, false);
            pt_pip(env);
        }
    } else if (now_en) {
        pt_enable_packets(env, env->eip);
    } else if (pt->packet_en) {
        pt_disable_packets(env);
    }
}

void intel_pt_post_load(CPUX86State *env)
{
    pt_post_load(env);
    pt_sync_inline(env);
}

void intel_pt_mov_cr3(CPUX86State *env)
{
    pt_mov_cr3(env);
    pt_sync_inline(env);
}

/*
 * Branch helpers, called from TBs translated with HF_PT_MASK: always in
 * TBs with HF_PT_FILTER_MASK, otherwise as pt_sync_inline() says.
 */

static void pt_branch_tnt(CPUX86State *env, bool taken, target_ulong next_ip)
{
    if (taken && pt_filtering(env) && pt_trigger_en(env) &&
        !pt_filter_branch(env, next_ip)) {
        return;
    }
    if (!env->pt.packet_en || !pt_cofi_en(env)) {
        return;
    }
    pt_tnt(env, taken);
    pt_maybe_psb(env, next_ip);
}

/* Conditional branch; @next_ip is where execution continues. */
void helper_pt_tnt(CPUX86State *env, uint32_t taken, target_ulong next_ip)
{
    pt_branch_tnt(env, taken, next_ip);
    pt_sync_inline(env);
}

/*
 * Inline code added the TNT bit of a branch to @next_ip (or of a
 * compressed RET) and the packet is full.
 */
void helper_pt_tnt_full(CPUX86State *env, target_ulong next_ip)
{
    pt_tnt_flush(env);
    pt_maybe_psb(env, next_ip);
    pt_sync_inline(env);
}

/* Near CALL: remember its return address for RET compression. */
void helper_pt_call(CPUX86State *env, target_ulong ret_ip)
{
    IntelPTState *pt = &env->pt;

    if (!pt->packet_en) {
        return;
    }
    pt->ret_stack[pt->ret_top] = ret_ip;
    pt->ret_top = (pt->ret_top + 1) % INTEL_PT_RET_STACK;
}

/*
 * Direct near JMP or CALL to @ip, only in TBs translated with an ADDRn
 * range in use: no packet of its own, but it may enter or leave a range.
 */
void helper_pt_jmp(CPUX86State *env, target_ulong ip)
{
    if (pt_filtering(env) && pt_trigger_en(env)) {
        pt_filter_branch(env, ip);
    }
    pt_sync_inline(env);
}

static void pt_branch_tip(CPUX86State *env)
{
    if (pt_filtering(env) && pt_trigger_en(env) &&
        !pt_filter_branch(env, env->eip)) {
        return;
    }
    if (!env->pt.packet_en || !pt_cofi_en(env)) {
        return;
    }
    pt_ip_packet(env, PT_TIP, env->eip);
    pt_maybe_psb(env, env->eip);
}

/* Near indirect JMP or CALL, EIP already holds the target. */
void helper_pt_tip(CPUX86State *env)
{
    pt_branch_tip(env);
    pt_sync_inline(env);
}

/*
 * A RET to the return address of the matching CALL is compressed into a
 * taken TNT bit; any other RET gets a TIP and empties the call stack,
 * which no longer matches the program's.
 */
static void pt_branch_ret(CPUX86State *env)
{
    IntelPTState *pt = &env->pt;

    if (pt_filtering(env) && pt_trigger_en(env) &&
        !pt_filter_branch(env, env->eip)) {
        return;
    }
    if (!pt->packet_en || !pt_cofi_en(env)) {
        return;
    }
    if (!(env->msr_rtit_ctrl & RTIT_CTL_DISRETC)) {
        uint32_t top = (pt->ret_top + INTEL_PT_RET_STACK - 1) %
                       INTEL_PT_RET_STACK;

        if (pt->ret_stack[top] == env->eip) {
            pt->ret_stack[top] = INTEL_PT_RET_NONE;
            pt->ret_top = top;
            pt_tnt(env, true);
            pt_maybe_psb(env, env->eip);
            return;
        }
    }
    pt_ret_stack_clear(env);
    pt_ip_packet(env, PT_TIP, env->eip);
    pt_maybe_psb(env, env->eip);
}

/* Near RET, EIP already holds the target. */
void helper_pt_ret(CPUX86State *env)
{
    pt_branch_ret(env);
    pt_sync_inline(env);
}

/* MSRs */

/*
 * Bits and encodings CPUID leaf 0x14 does not enumerate #GP: MTCFreq,
 * CycThresh and PSBFreq must be one of the advertised values, ADDRn_CFG
 * (for the 2 ranges) 0, 1 or 2.
 */
static bool pt_ctl_valid(uint64_t val)
{
    unsigned mtc = (val & RTIT_CTL_MTCFREQ) >> RTIT_CTL_MTCFREQ_SHIFT;
    unsigned cyc = (val & RTIT_CTL_CYCTHRESH) >> RTIT_CTL_CYCTHRESH_SHIFT;
    unsigned psb = (val & RTIT_CTL_PSBFREQ) >> RTIT_CTL_PSBFREQ_SHIFT;
    int n;

    for (n = 0; n < INTEL_PT_TCG_ADDR_RANGES; n++) {
        if (pt_addr_cfg(val, n) > RTIT_ADDR_CFG_STOP) {
            return false;
        }
    }
    return !(val & ~RTIT_CTL_VALID) &&
           (INTEL_PT_TCG_MTC_PERIODS & (1U << mtc)) &&
           (INTEL_PT_TCG_CYC_THRESHOLDS & (1U << cyc)) &&
           (INTEL_PT_TCG_PSB_PERIODS & (1U << psb));
}

/* OUTPUT_BASE, OUTPUT_MASK_PTRS and STATUS must not change while tracing. */
static bool pt_wrmsr_ctl(CPUX86State *env, uint64_t val)
{
    uint64_t old = env->msr_rtit_ctrl;
    /* WRMSR is two bytes long; EIP points at it. */
    target_ulong next_ip = env->eip + 2;

    if (!pt_ctl_valid(val)) {
        return false;
    }
    if (old & RTIT_CTL_TRACEEN) {
        /* Only a write clearing TraceEn may change other bits. */
        if (val == old) {
            return true;
        }
        if (val & RTIT_CTL_TRACEEN) {
            return false;
        }
        pt_stop(env, next_ip);
        env->msr_rtit_ctrl = val;
    } else {
        env->msr_rtit_ctrl = val;
        if (val & RTIT_CTL_TRACEEN) {
            pt_start(env, next_ip);
        }
    }
    pt_update_hflags(env);
    return true;
}

static bool pt_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val)
{
    uint64_t phys_mask = pt_phys_mask(env);

    if (!pt_supported(env)) {
        /* As for any other MSR QEMU does not know: ignore the write. */
        return true;
    }
    if (msr == MSR_IA32_RTIT_CTL) {
        return pt_wrmsr_ctl(env, val);
    }
    if (pt_trace_en(env)) {
        return false;
    }
    switch (msr) {
    case MSR_IA32_RTIT_STATUS:
        if (val & ~(RTIT_STATUS_RW | RTIT_STATUS_RO)) {
            return false;
        }
        env->msr_rtit_status = val & RTIT_STATUS_RW;
        break;
    case MSR_IA32_RTIT_OUTPUT_BASE:
        if (val & (~phys_mask | 0x7f)) {
            return false;
        }
        env->msr_rtit_output_base = val;
        break;
    case MSR_IA32_RTIT_OUTPUT_MASK:
        env->msr_rtit_output_mask = val | 0x7f;
        break;
    case MSR_IA32_RTIT_CR3_MATCH:
        if (val & (~phys_mask | 0x1f)) {
            return false;
        }
        env->msr_rtit_cr3_match = val;
        break;
    case MSR_IA32_RTIT_ADDR0_A ... MSR_IA32_RTIT_ADDR1_B:
        /* Bits 63:48 must be the sign extension of bit 47. */
        if (sextract64(val, 0, 48) != val) {
            return false;
        }
        env->msr_rtit_addrs[msr - MSR_IA32_RTIT_ADDR0_A] = val;
        break;
    default:
        g_assert_not_reached();
    }
    return true;
}

/* Returns false if the write must raise #GP. */
bool intel_pt_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val)
{
    bool ok = pt_wrmsr(env, msr, val);

    pt_sync_inline(env);
    return ok;
}

uint64_t intel_pt_rdmsr(CPUX86State *env, uint32_t msr)
{
    uint64_t val;

    if (!pt_supported(env)) {
        return 0;
    }
    /* Software reading the output pointers sees every packet so far. */
    pt_flush(env);
    pt_sync_inline(env);

    switch (msr) {
    case MSR_PLATFORM_INFO:
        return INTEL_PT_TCG_BUS_RATIO << 8;
    case MSR_IA32_RTIT_CTL:
        return env->msr_rtit_ctrl;
    case MSR_IA32_RTIT_STATUS:
        val = env->msr_rtit_status;
        if (pt_trace_en(env)) {
            if (env->pt.filter_en) {
                val |= RTIT_STATUS_FILTEREN;
            }
            if (pt_trigger_en(env)) {
                val |= RTIT_STATUS_TRIGGEREN;
            }
            if (pt_context_en(env)) {
                val |= RTIT_STATUS_CONTEXTEN;
            }
        }
        return val;
    case MSR_IA32_RTIT_OUTPUT_BASE:
        return env->msr_rtit_output_base;
    case MSR_IA32_RTIT_OUTPUT_MASK:
        return env->msr_rtit_output_mask | 0x7f;
    case MSR_IA32_RTIT_CR3_MATCH:
        return env->msr_rtit_cr3_match;
    case MSR_IA32_RTIT_ADDR0_A ... MSR_IA32_RTIT_ADDR1_B:
        return env->msr_rtit_addrs[msr - MSR_IA32_RTIT_ADDR0_A];
    default:
        g_assert_not_reached();
    }
}

/* Software reading perfmon state sees every packet so far in memory. */
void intel_pt_flush(CPUX86State *env)
{
    if (pt_supported(env)) {
        pt_flush(env);
        pt_sync_inline(env);
    }
}
