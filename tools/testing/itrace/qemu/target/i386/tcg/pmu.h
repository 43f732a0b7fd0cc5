/*
 * Architectural performance monitoring for TCG (the perfmon of the
 * Intel PT CPU model)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef I386_TCG_PMU_H
#define I386_TCG_PMU_H

/*
 * CPUID leaf 0xA under TCG with "+intel-pt": version 2, 4 general-purpose
 * counters and 3 fixed counters, 48 bits wide.  Of the 7 architectural
 * events (bit-vector length 7), EBX marks unavailable those the model
 * does not count: LLC references (bit 3) and LLC misses (bit 4).
 * UnHalted Core Cycles (bit 0), Instructions Retired (bit 1), UnHalted
 * Reference Cycles (bit 2), Branch Instructions Retired (bit 5) and
 * Branch Mispredicts Retired (bit 6) count (tcg/sysemu/pmu.c); the last
 * counts 0, exactly: the CPU executes no instruction on a predicted path,
 * so no branch retires mispredicted.
 */
#define TCG_PMU_VERSION         2
#define TCG_PMU_GP_COUNTERS     4
#define TCG_PMU_FIXED_COUNTERS  3
#define TCG_PMU_WIDTH           48
#define TCG_PMU_EVENTS          7
#define TCG_PMU_0A_EAX          (TCG_PMU_VERSION | \
                                 (TCG_PMU_GP_COUNTERS << 8) | \
                                 (TCG_PMU_WIDTH << 16) | \
                                 (TCG_PMU_EVENTS << 24))
#define TCG_PMU_0A_EBX          ((1U << 3) | (1U << 4))
#define TCG_PMU_0A_EDX          (TCG_PMU_FIXED_COUNTERS | \
                                 (TCG_PMU_WIDTH << 5))

/* IA32_PERF_GLOBAL_STATUS bit 55: a ToPA entry with INT=1 filled up. */
#define PERF_GLOBAL_TRACE_TOPA_PMI  (1ULL << 55)

/*
 * The third word of a TB's insn_start data (TARGET_INSN_START_EXTRA_WORDS)
 * in TBs translated with HF_PMU_MASK: what the TB counted at its start
 * that has not retired if the instruction faults, the counted
 * instructions from this one to the end of the TB (bits 63:1) and the
 * branch instruction that ends the TB (bit 0).
 */
#define TCG_PMU_UNRETIRED(insns, branch) (((uint64_t)(insns) << 1) | (branch))

#ifndef CONFIG_USER_ONLY
void tcg_pmu_init(X86CPU *cpu);
bool tcg_pmu_msr(CPUX86State *env, uint32_t msr);
bool tcg_pmu_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val,
                   uintptr_t retaddr);
uint64_t tcg_pmu_rdmsr(CPUX86State *env, uint32_t msr, uintptr_t retaddr);
bool tcg_pmu_rdpmc(CPUX86State *env, uint32_t ecx, uint64_t *val,
                   uintptr_t retaddr);
void tcg_pmu_unretire(CPUX86State *env, uint64_t unretired);
void tcg_pmu_interrupt_begin(CPUX86State *env, bool is_int);
void tcg_pmu_far_transfer(CPUX86State *env);
void tcg_pmu_halt(CPUX86State *env);
void tcg_pmu_pmi(CPUX86State *env);
void tcg_pmu_pre_save(CPUX86State *env);
void tcg_pmu_post_load(CPUX86State *env);
#else
static inline void tcg_pmu_unretire(CPUX86State *env, uint64_t unretired)
{
}
static inline void tcg_pmu_interrupt_begin(CPUX86State *env, bool is_int)
{
}
static inline void tcg_pmu_far_transfer(CPUX86State *env)
{
}
#endif

#endif /* I386_TCG_PMU_H */
