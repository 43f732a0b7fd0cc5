/*
 * Architectural performance monitoring for TCG
 *
 * The perfmon of the Intel PT CPU model (CPUID leaf 0xA, version 2; Intel
 * SDM Vol. 3B, "Architectural Performance Monitoring"): 4 general-purpose
 * counters (IA32_PMC0-3, IA32_PERFEVTSEL0-3) and 3 fixed counters
 * (IA32_FIXED_CTR0-2, IA32_FIXED_CTR_CTRL), 48 bits wide, enabled through
 * IA32_PERF_GLOBAL_CTRL, overflows in IA32_PERF_GLOBAL_STATUS and a PMI
 * through the local APIC's performance-counter LVT entry; RDPMC.
 *
 * What counts:
 *  - instructions retired (IA32_FIXED_CTR0, event 0xc0 umask 0x00),
 *    exactly: a TB translated while a counter counts at its CPL
 *    (HF_PMU_MASK) subtracts its instructions from TCGPMUState.insn_left
 *    at its start, and an instruction that does not retire (a fault) is
 *    given back when the CPU state is restored to it (tcg_pmu_unretire());
 *  - branch instructions retired (event 0xc4 umask 0x00), exactly, in
 *    the same way: every x86 branch instruction ends its TB, and the TB
 *    counts it at its start;
 *  - core cycles (IA32_FIXED_CTR1, event 0x3c umask 0x00) and reference
 *    cycles at the TSC rate (IA32_FIXED_CTR2): one per TSC tick while the
 *    CPU is not halted, the TSC counting 3600 MHz of virtual time with the
 *    core at its nominal ratio (CBR 36); reference cycles of event 0x3c
 *    umask 0x01 count the core crystal clock, one per 150 TSC ticks
 *    (CPUID leaf 0x15);
 *  - branch mispredicts retired (event 0xc5 umask 0x00): 0, exactly.  The
 *    SDM's misprediction is a branch whose predicted path the processor
 *    executed and then discarded; TCG executes each instruction once, on
 *    the path the architecture takes, so none is mispredicted.  Counting
 *    it as nothing is then the event's own count, not a stand-in, and
 *    CPUID.0AH:EBX enumerates it as the real part does.
 * Any other event (and any of these with the edge, invert or counter
 * mask fields set) counts nothing: the counter keeps its value and never
 * overflows.  Events are counted at the CPL they happen at: USR is
 * CPL > 0, OS is CPL 0.
 *
 * Counters are brought up to date ("synchronised") whenever software
 * reads or writes them, at every transfer that may change the CPL (far
 * transfers, interrupts and exceptions, SMM) and at HLT, so that the
 * events between two synchronisations all belong to one CPL.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "cpu.h"
#include "exec/exec-all.h"
#include "exec/helper-proto.h"
#include "hw/i386/apic.h"
#include "tcg/helper-tcg.h"
#include "tcg/intel-pt.h"
#include "tcg/pmu.h"

/* IA32_PERFEVTSELx */
#define PERFEVTSEL_EVENT        0x000000ffULL
#define PERFEVTSEL_UMASK        0x0000ff00ULL
#define PERFEVTSEL_USR          (1ULL << 16)
#define PERFEVTSEL_OS           (1ULL << 17)
#define PERFEVTSEL_EDGE         (1ULL << 18)
#define PERFEVTSEL_PC           (1ULL << 19)
#define PERFEVTSEL_INT          (1ULL << 20)
#define PERFEVTSEL_ANY          (1ULL << 21)  /* version 3 and later */
#define PERFEVTSEL_EN           (1ULL << 22)
#define PERFEVTSEL_INV          (1ULL << 23)
#define PERFEVTSEL_CMASK        0xff000000ULL
/* Bits 63:32 and AnyThread are reserved in version 2. */
#define PERFEVTSEL_VALID        (0xffffffffULL & ~PERFEVTSEL_ANY)

/* IA32_FIXED_CTR_CTRL, 4 bits per counter; AnyThread (bit 2) is v3. */
#define FIXED_CTRL_OS           0x1
#define FIXED_CTRL_USR          0x2
#define FIXED_CTRL_PMI          0x8
#define FIXED_CTRL_FIELD        (FIXED_CTRL_OS | FIXED_CTRL_USR | \
                                 FIXED_CTRL_PMI)
#define FIXED_CTRL_VALID        (FIXED_CTRL_FIELD * 0x111ULL)

/* RDPMC: ECX[31:16] is the type of counter, ECX[15:0] its index. */
#define RDPMC_TYPE_GP           0x0000
#define RDPMC_TYPE_FIXED        0x4000

/* Counters, numbered as their bits in IA32_PERF_GLOBAL_CTRL and STATUS. */
#define PMU_FIXED0              32
#define PMU_COUNTERS            (MAKE_64BIT_MASK(0, TCG_PMU_GP_COUNTERS) | \
                                 MAKE_64BIT_MASK(PMU_FIXED0, \
                                                 TCG_PMU_FIXED_COUNTERS))
#define PMU_WIDTH_MASK          MAKE_64BIT_MASK(0, TCG_PMU_WIDTH)
#define PMU_GLOBAL_STATUS_MASK  (PMU_COUNTERS | \
                                 PERF_GLOBAL_TRACE_TOPA_PMI | \
                                 (3ULL << 62))

/* TSC ticks per tick of the core crystal clock (CPUID leaf 0x15). */
#define PMU_TSC_PER_XCLK        (INTEL_PT_TCG_15_EBX / INTEL_PT_TCG_15_EAX)

/* A budget no TB reaches: nothing to count, or no overflow in sight. */
#define PMU_NO_OVERFLOW         (INT64_MAX / 2)

typedef enum PMUEvent {
    PMU_EVENT_NONE,
    PMU_EVENT_INSNS,        /* instructions retired */
    PMU_EVENT_BRANCHES,     /* branch instructions retired */
    PMU_EVENT_CYCLES,       /* core cycles, and reference cycles at TSC rate */
    PMU_EVENT_XCLK,         /* reference cycles of the core crystal clock */
} PMUEvent;

static bool pmu_supported(CPUX86State *env)
{
    return env->features[FEAT_7_0_EBX] & CPUID_7_0_EBX_INTEL_PT;
}

static bool pmu_cpl_user(CPUX86State *env)
{
    return (env->hflags & HF_CPL_MASK) != 0;
}

static uint64_t *pmu_counter(CPUX86State *env, int n)
{
    if (n >= PMU_FIXED0) {
        return &env->msr_fixed_counters[n - PMU_FIXED0];
    }
    return &env->msr_gp_counters[n];
}

/*
 * What counter @n counts at CPL > 0 (@user) or CPL 0, and whether it
 * requests a PMI when it overflows (@pmi).
 */
static PMUEvent pmu_event(CPUX86State *env, int n, bool user, bool *pmi)
{
    uint64_t sel;
    unsigned ctl;

    if (!(env->msr_global_ctrl & BIT_ULL(n))) {
        return PMU_EVENT_NONE;
    }
    if (n >= PMU_FIXED0) {
        ctl = env->msr_fixed_ctr_ctrl >> (4 * (n - PMU_FIXED0));
        if (!(ctl & (user ? FIXED_CTRL_USR : FIXED_CTRL_OS))) {
            return PMU_EVENT_NONE;
        }
        *pmi = ctl & FIXED_CTRL_PMI;
        /* INST_RETIRED.ANY, CPU_CLK_UNHALTED.THREAD, .REF_TSC */
        return n == PMU_FIXED0 ? PMU_EVENT_INSNS : PMU_EVENT_CYCLES;
    }
    sel = env->msr_gp_evtsel[n];
    if (!(sel & PERFEVTSEL_EN) ||
        !(sel & (user ? PERFEVTSEL_USR : PERFEVTSEL_OS)) ||
        (sel & (PERFEVTSEL_EDGE | PERFEVTSEL_INV | PERFEVTSEL_CMASK))) {
        return PMU_EVENT_NONE;
    }
    *pmi = sel & PERFEVTSEL_INT;
    switch (sel & (PERFEVTSEL_UMASK | PERFEVTSEL_EVENT)) {
    case 0x003c:
        return PMU_EVENT_CYCLES;
    case 0x013c:
        return PMU_EVENT_XCLK;
    case 0x00c0:
        return PMU_EVENT_INSNS;
    case 0x00c4:
        return PMU_EVENT_BRANCHES;
    default:
        return PMU_EVENT_NONE;
    }
}

/* Counters numbered @n as their IA32_PERF_GLOBAL_CTRL bits. */
#define PMU_FOREACH_COUNTER(n) \
    for (n = 0; n < 64; n++) \
        if (PMU_COUNTERS & BIT_ULL(n))

/* The TSC without IA32_TSC_ADJUST: 3600 MHz of virtual time. */
static uint64_t pmu_tsc(CPUX86State *env)
{
    return cpu_get_tsc(env);
}

/* Cycles timer: the earliest overflow of a cycle counter with a PMI. */
static void pmu_timer_update(CPUX86State *env)
{
    X86CPU *cpu = env_archcpu(env);
    TCGPMUState *pmu = &env->pmu;
    uint64_t ticks = UINT64_MAX, left;
    bool pmi = false;
    int n;

    if (!cpu->pmu_timer) {
        return;
    }
    if (pmu->active && !pmu->halted) {
        PMU_FOREACH_COUNTER(n) {
            PMUEvent ev = pmu_event(env, n, pmu->user, &pmi);

            if (!pmi || (ev != PMU_EVENT_CYCLES && ev != PMU_EVENT_XCLK)) {
                continue;
            }
            left = PMU_WIDTH_MASK - *pmu_counter(env, n) + 1;
            if (ev == PMU_EVENT_XCLK) {
                left = left * PMU_TSC_PER_XCLK - pmu->tsc % PMU_TSC_PER_XCLK;
            }
            ticks = MIN(ticks, left);
        }
    }
    if (ticks == UINT64_MAX) {
        timer_del(cpu->pmu_timer);
        return;
    }
    /* TSC ticks from pmu->tsc to nanoseconds of virtual time. */
    timer_mod(cpu->pmu_timer,
              muldiv64(pmu->tsc + ticks, 1000, TCG_PT_TSC_MHZ) + 1);
}

/*
 * After a synchronisation or a change of the counters' configuration:
 * the events of each kind that may happen at the current CPL before one
 * counter overflows, and HF_PMU_MASK.  @unretired (TCG_PMU_UNRETIRED()):
 * what the running TB counted at its start and has not retired yet; it
 * retires without counting again.
 */
static void pmu_reload(CPUX86State *env, uint64_t unretired)
{
    TCGPMUState *pmu = &env->pmu;
    int64_t insns = PMU_NO_OVERFLOW, branches = PMU_NO_OVERFLOW, left;
    bool counting = false, pmi;
    int n;

    pmu->user = pmu_cpl_user(env);
    pmu->active = false;
    PMU_FOREACH_COUNTER(n) {
        if (pmu_event(env, n, !pmu->user, &pmi) != PMU_EVENT_NONE) {
            pmu->active = true;
        }
        left = PMU_WIDTH_MASK - *pmu_counter(env, n);
        switch (pmu_event(env, n, pmu->user, &pmi)) {
        case PMU_EVENT_NONE:
            continue;
        case PMU_EVENT_INSNS:
            insns = MIN(insns, left);
            counting = true;
            break;
        case PMU_EVENT_BRANCHES:
            branches = MIN(branches, left);
            counting = true;
            break;
        default:
            break;
        }
        pmu->active = true;
    }
    pmu->insn_base = insns;
    pmu->insn_left = insns - (int64_t)(unretired >> 1);
    pmu->branch_base = branches;
    pmu->branch_left = branches - (int64_t)(unretired & 1);
    if (counting) {
        env->hflags |= HF_PMU_MASK;
    } else {
        env->hflags &= ~HF_PMU_MASK;
    }
    pmu_timer_update(env);
}

/*
 * Bring the counters up to date with the events since the last
 * synchronisation, which all happened at the CPL of that one, less
 * @unretired (TCG_PMU_UNRETIRED()).  An overflow sets its bit in
 * IA32_PERF_GLOBAL_STATUS and, if its counter asks for one, makes a PMI
 * pending (pmu_deliver()).
 */
static void pmu_sync(CPUX86State *env, uint64_t unretired)
{
    TCGPMUState *pmu = &env->pmu;
    uint64_t insns = pmu->insn_base - pmu->insn_left - (unretired >> 1);
    uint64_t branches = pmu->branch_base - pmu->branch_left -
                        (unretired & 1);
    uint64_t tsc = pmu_tsc(env);
    uint64_t cycles = 0, xclk = 0, delta, val;
    bool pmi = false;
    int n;

    if (!pmu->halted) {
        cycles = tsc - pmu->tsc;
        xclk = tsc / PMU_TSC_PER_XCLK - pmu->tsc / PMU_TSC_PER_XCLK;
    }
    PMU_FOREACH_COUNTER(n) {
        switch (pmu_event(env, n, pmu->user, &pmi)) {
        case PMU_EVENT_INSNS:
            delta = insns;
            break;
        case PMU_EVENT_BRANCHES:
            delta = branches;
            break;
        case PMU_EVENT_CYCLES:
            delta = cycles;
            break;
        case PMU_EVENT_XCLK:
            delta = xclk;
            break;
        default:
            continue;
        }
        val = *pmu_counter(env, n) + delta;
        if (val > PMU_WIDTH_MASK) {
            env->msr_global_status |= BIT_ULL(n);
            pmu->pmi_pending |= pmi;
        }
        *pmu_counter(env, n) = val & PMU_WIDTH_MASK;
    }
    pmu->tsc = tsc;
    pmu->halted = env_cpu(env)->halted;
    pmu_reload(env, unretired);
}

/*
 * The PMI, through the local APIC's performance-counter LVT entry as
 * programmed (Linux: NMI); delivery masks the entry (apic_deliver_pmi()).
 * For counter overflows and for ToPA entries with INT=1 (intel-pt.c).
 */
void tcg_pmu_pmi(CPUX86State *env)
{
    X86CPU *cpu = env_archcpu(env);
    bool locked;

    if (!cpu->apic_state) {
        return;
    }
    locked = qemu_mutex_iothread_locked();
    if (!locked) {
        qemu_mutex_lock_iothread();
    }
    apic_deliver_pmi(cpu->apic_state);
    if (!locked) {
        qemu_mutex_unlock_iothread();
    }
}

static void pmu_deliver(CPUX86State *env)
{
    if (env->pmu.pmi_pending) {
        env->pmu.pmi_pending = false;
        tcg_pmu_pmi(env);
    }
}

/* What the TB running at @retaddr counted and has not retired yet. */
static uint64_t pmu_unretired(CPUX86State *env, uintptr_t retaddr)
{
    uint64_t data[TARGET_INSN_START_WORDS];

    if (!retaddr || !cpu_unwind_state_data(env_cpu(env), retaddr, data)) {
        return 0;
    }
    return data[2];
}

/*
 * Start of a TB translated with HF_PMU_MASK whose instructions or branch
 * made a budget negative: a counter overflows in it, or overflowed before
 * it.  The PMI is taken after the instruction that overflows the counter
 * retires, before the next one: if that is not the TB's last instruction,
 * the TB is not run, and a TB made of the instructions up to the one that
 * overflows runs instead.
 */
void helper_pmu_tb_start(CPUX86State *env)
{
    CPUState *cs = env_cpu(env);
    TCGPMUState *pmu = &env->pmu;
    uintptr_t retaddr = GETPC();
    TranslationBlock *tb = tcg_tb_lookup(retaddr);
    uint64_t counted = pmu_unretired(env, retaddr);
    int64_t insns = pmu->insn_left + (int64_t)(counted >> 1);
    int64_t branches = pmu->branch_left + (int64_t)(counted & 1);

    if (insns >= 0 && branches >= 0 && (!tb || insns + 1 >= tb->icount)) {
        /* The last instruction overflows it: the next TB's start says so. */
        return;
    }
    /* Not run, not counted. */
    pmu->insn_left = insns;
    pmu->branch_left = branches;
    if (insns < 0 || branches < 0) {
        pmu_sync(env, 0);
        pmu_deliver(env);
    } else {
        cs->cflags_next_tb = curr_cflags(cs) | CF_NOIRQ | (insns + 1);
    }
    cpu_loop_exit_noexc(cs);
}

/*
 * The CPU state is restored to an instruction that did not retire (it
 * faulted, or its TB was left for another reason): give back what the TB
 * counted from it on (its insn_start data).
 */
void tcg_pmu_unretire(CPUX86State *env, uint64_t unretired)
{
    env->pmu.insn_left += unretired >> 1;
    env->pmu.branch_left += unretired & 1;
}

/*
 * An interrupt or exception is about to be delivered (do_interrupt_all()).
 * If the delivery of an INT n, INT3 or INTO (@is_int), counted as retired
 * at its TB's start, raises an exception, that instruction did not retire
 * after all.
 */
void tcg_pmu_interrupt_begin(CPUX86State *env, bool is_int)
{
    TCGPMUState *pmu = &env->pmu;

    if (pmu->soft_int) {
        /* The software interrupt's delivery faulted. */
        tcg_pmu_unretire(env, TCG_PMU_UNRETIRED(1, 1));
    }
    pmu->soft_int = is_int && (env->hflags & HF_PMU_MASK);
}

/*
 * After a transfer that may change the CPL (far JMP, CALL, RET, IRET,
 * SYSCALL, SYSRET, SYSENTER, SYSEXIT, interrupts and exceptions, SMM
 * entry and RSM), at the end of the instruction's TB.
 */
void tcg_pmu_far_transfer(CPUX86State *env)
{
    env->pmu.soft_int = false;
    if (!env->pmu.active) {
        return;
    }
    pmu_sync(env, 0);
    pmu_deliver(env);
}

/* HLT (or MWAIT) retired and the CPU halts: no cycles until it wakes. */
void tcg_pmu_halt(CPUX86State *env)
{
    if (!env->pmu.active) {
        return;
    }
    pmu_sync(env, 0);
    pmu_deliver(env);
    env->pmu.halted = true;
    pmu_timer_update(env);
}

/* The cycles timer: on the vCPU's thread, outside TB execution. */
static void pmu_timer_work(CPUState *cs, run_on_cpu_data data)
{
    CPUX86State *env = cs->env_ptr;

    if (env->pmu.active || env->pmu.pmi_pending) {
        pmu_sync(env, 0);
        pmu_deliver(env);
    }
}

static void pmu_timer_cb(void *opaque)
{
    X86CPU *cpu = opaque;

    async_run_on_cpu(CPU(cpu), pmu_timer_work, RUN_ON_CPU_NULL);
}

void tcg_pmu_init(X86CPU *cpu)
{
    cpu->pmu_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pmu_timer_cb, cpu);
}

/*
 * Migration: the counters travel in the architectural MSRs
 * (cpu/msr_architectural_pmu), up to date; an overflow not yet delivered
 * travels in cpu/tcg_pmu and is delivered on the vCPU's thread.
 */
void tcg_pmu_pre_save(CPUX86State *env)
{
    if (pmu_supported(env) && env->pmu.active) {
        pmu_sync(env, 0);
    }
}

void tcg_pmu_post_load(CPUX86State *env)
{
    TCGPMUState *pmu = &env->pmu;

    if (!pmu_supported(env)) {
        return;
    }
    pmu->tsc = pmu_tsc(env);
    pmu->halted = env_cpu(env)->halted;
    pmu->soft_int = false;
    pmu_reload(env, 0);
    if (pmu->pmi_pending) {
        async_run_on_cpu(env_cpu(env), pmu_timer_work, RUN_ON_CPU_NULL);
    }
}

/* MSRs */

/* True for the perfmon MSRs this model implements. */
bool tcg_pmu_msr(CPUX86State *env, uint32_t msr)
{
    if (!pmu_supported(env)) {
        return false;
    }
    return (msr >= MSR_P6_PERFCTR0 &&
            msr < MSR_P6_PERFCTR0 + TCG_PMU_GP_COUNTERS) ||
           (msr >= MSR_P6_EVNTSEL0 &&
            msr < MSR_P6_EVNTSEL0 + TCG_PMU_GP_COUNTERS) ||
           (msr >= MSR_CORE_PERF_FIXED_CTR0 &&
            msr < MSR_CORE_PERF_FIXED_CTR0 + TCG_PMU_FIXED_COUNTERS) ||
           (msr >= MSR_CORE_PERF_FIXED_CTR_CTRL &&
            msr <= MSR_CORE_PERF_GLOBAL_OVF_CTRL);
}

static bool pmu_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val)
{
    if (msr >= MSR_P6_PERFCTR0 &&
        msr < MSR_P6_PERFCTR0 + TCG_PMU_GP_COUNTERS) {
        /*
         * Without full-width writes (IA32_PERF_CAPABILITIES.FW_WRITE),
         * bits 31:0 are written and sign-extended to the counter's width.
         */
        env->msr_gp_counters[msr - MSR_P6_PERFCTR0] =
            (uint64_t)(int64_t)(int32_t)val & PMU_WIDTH_MASK;
        return true;
    }
    if (msr >= MSR_P6_EVNTSEL0 &&
        msr < MSR_P6_EVNTSEL0 + TCG_PMU_GP_COUNTERS) {
        if (val & ~PERFEVTSEL_VALID) {
            return false;
        }
        env->msr_gp_evtsel[msr - MSR_P6_EVNTSEL0] = val;
        return true;
    }
    if (msr >= MSR_CORE_PERF_FIXED_CTR0 &&
        msr < MSR_CORE_PERF_FIXED_CTR0 + TCG_PMU_FIXED_COUNTERS) {
        if (val & ~PMU_WIDTH_MASK) {
            return false;
        }
        env->msr_fixed_counters[msr - MSR_CORE_PERF_FIXED_CTR0] = val;
        return true;
    }
    switch (msr) {
    case MSR_CORE_PERF_FIXED_CTR_CTRL:
        if (val & ~FIXED_CTRL_VALID) {
            return false;
        }
        env->msr_fixed_ctr_ctrl = val;
        return true;
    case MSR_CORE_PERF_GLOBAL_CTRL:
        if (val & ~PMU_COUNTERS) {
            return false;
        }
        env->msr_global_ctrl = val;
        return true;
    case MSR_CORE_PERF_GLOBAL_OVF_CTRL:
        if (val & ~PMU_GLOBAL_STATUS_MASK) {
            return false;
        }
        env->msr_global_status &= ~val;
        return true;
    default:
        /* IA32_PERF_GLOBAL_STATUS is read-only. */
        return false;
    }
}

/*
 * Returns false if the write must raise #GP.  @retaddr: the WRMSR's
 * (GETPC() of its helper), for what its TB counted and has not retired.
 * The WRMSR retires after its write takes effect: it counts as the
 * configuration it writes says (so the WRMSR that enables counting at its
 * CPL counts, and the one that disables it does not).  A WRMSR that
 * raises #GP does not retire; restoring the CPU state to it gives back
 * what its TB counted.
 */
bool tcg_pmu_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val,
                   uintptr_t retaddr)
{
    uint64_t unretired = pmu_unretired(env, retaddr);
    bool ok;

    pmu_sync(env, unretired);
    ok = pmu_wrmsr(env, msr, val);
    pmu_reload(env, ok ? TCG_PMU_UNRETIRED(1, 0) : unretired);
    pmu_deliver(env);
    return ok;
}

uint64_t tcg_pmu_rdmsr(CPUX86State *env, uint32_t msr, uintptr_t retaddr)
{
    pmu_sync(env, pmu_unretired(env, retaddr));
    pmu_deliver(env);
    if (msr >= MSR_P6_PERFCTR0 &&
        msr < MSR_P6_PERFCTR0 + TCG_PMU_GP_COUNTERS) {
        return env->msr_gp_counters[msr - MSR_P6_PERFCTR0];
    }
    if (msr >= MSR_P6_EVNTSEL0 &&
        msr < MSR_P6_EVNTSEL0 + TCG_PMU_GP_COUNTERS) {
        return env->msr_gp_evtsel[msr - MSR_P6_EVNTSEL0];
    }
    if (msr >= MSR_CORE_PERF_FIXED_CTR0 &&
        msr < MSR_CORE_PERF_FIXED_CTR0 + TCG_PMU_FIXED_COUNTERS) {
        return env->msr_fixed_counters[msr - MSR_CORE_PERF_FIXED_CTR0];
    }
    switch (msr) {
    case MSR_CORE_PERF_FIXED_CTR_CTRL:
        return env->msr_fixed_ctr_ctrl;
    case MSR_CORE_PERF_GLOBAL_CTRL:
        return env->msr_global_ctrl;
    case MSR_CORE_PERF_GLOBAL_STATUS:
        /* Intel PT packets staged so far reach memory, may set bit 55. */
        intel_pt_flush(env);
        return env->msr_global_status;
    default:
        /* IA32_PERF_GLOBAL_OVF_CTRL reads as 0. */
        return 0;
    }
}

/*
 * RDPMC (SDM Vol. 2B), after the CPL and CR4.PCE check (helper_rdpmc()):
 * ECX[31:16] is the type, 0 for a general-purpose counter (ECX[15:0]
 * below CPUID.0AH:EAX[15:8]) or 4000H for a fixed one (below
 * CPUID.0AH:EDX[4:0]); anything else is #GP(0).  The value counts the
 * events before the RDPMC.  Returns false if the CPU has no counters.
 */
bool tcg_pmu_rdpmc(CPUX86State *env, uint32_t ecx, uint64_t *val,
                   uintptr_t retaddr)
{
    unsigned type = ecx >> 16, idx = ecx & 0xffff;
    uint64_t *counter;

    if (!pmu_supported(env)) {
        return false;
    }
    if (type == RDPMC_TYPE_GP && idx < TCG_PMU_GP_COUNTERS) {
        counter = &env->msr_gp_counters[idx];
    } else if (type == RDPMC_TYPE_FIXED && idx < TCG_PMU_FIXED_COUNTERS) {
        counter = &env->msr_fixed_counters[idx];
    } else {
        raise_exception_ra(env, EXCP0D_GPF, retaddr);
    }
    pmu_sync(env, pmu_unretired(env, retaddr));
    pmu_deliver(env);
    *val = *counter;
    return true;
}
