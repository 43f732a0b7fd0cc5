/*
 * Intel Processor Trace emulation for TCG
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef I386_TCG_INTEL_PT_H
#define I386_TCG_INTEL_PT_H

/* IA32_RTIT_CTL */
#define RTIT_CTL_TRACEEN        (1ULL << 0)
#define RTIT_CTL_CYCEN          (1ULL << 1)
#define RTIT_CTL_OS             (1ULL << 2)
#define RTIT_CTL_USER           (1ULL << 3)
#define RTIT_CTL_CR3FILTER      (1ULL << 7)
#define RTIT_CTL_TOPA           (1ULL << 8)
#define RTIT_CTL_TSCEN          (1ULL << 10)
#define RTIT_CTL_DISRETC        (1ULL << 11)
#define RTIT_CTL_BRANCHEN       (1ULL << 13)

/* IA32_RTIT_STATUS */
#define RTIT_STATUS_FILTEREN    (1ULL << 0)
#define RTIT_STATUS_CONTEXTEN   (1ULL << 1)
#define RTIT_STATUS_TRIGGEREN   (1ULL << 3)
#define RTIT_STATUS_ERROR       (1ULL << 4)
#define RTIT_STATUS_STOPPED     (1ULL << 5)
#define RTIT_STATUS_PENDPSB     (1ULL << 6)
#define RTIT_STATUS_PENDTOPAPMI (1ULL << 7)

/* ToPA table entry */
#define TOPA_END                (1ULL << 0)
#define TOPA_INT                (1ULL << 2)
#define TOPA_STOP               (1ULL << 4)
#define TOPA_SIZE_SHIFT         6
#define TOPA_SIZE_MASK          0xfULL

/*
 * What this emulator implements, and therefore all that CPUID leaf 0x14
 * may advertise under TCG: CR3 filtering; ToPA output with any number of
 * entries per table; single-range output.  No IP filtering, CYC, MTC,
 * PTWRITE, power events or configurable PSB period.
 */
#define INTEL_PT_TCG_14_0_EBX   (1U << 0)
#define INTEL_PT_TCG_14_0_ECX   ((1U << 0) | (1U << 1) | (1U << 2))

/*
 * The minimal architectural perfmon that comes with the TCG Intel PT
 * emulation (tcg/sysemu/intel-pt.c, "Perfmon"): CPUID leaf 0xA reports
 * version 2, 4 general-purpose counters and 3 fixed counters, 48 bits
 * wide, and all 7 architectural events as not available (EBX bits set),
 * because no counter counts.
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
#define TCG_PMU_0A_EBX          ((1U << TCG_PMU_EVENTS) - 1)
#define TCG_PMU_0A_EDX          (TCG_PMU_FIXED_COUNTERS | \
                                 (TCG_PMU_WIDTH << 5))

/* IA32_PERF_GLOBAL_STATUS bit 55: a ToPA entry with INT=1 filled up. */
#define PERF_GLOBAL_TRACE_TOPA_PMI  (1ULL << 55)

/* Ratio reported in MSR_PLATFORM_INFO[15:8] (x 100 MHz). */
#define INTEL_PT_TCG_BUS_RATIO  24

#ifndef CONFIG_USER_ONLY
bool intel_pt_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val);
uint64_t intel_pt_rdmsr(CPUX86State *env, uint32_t msr);
void intel_pt_far_transfer(CPUX86State *env, bool async, target_ulong src);
void intel_pt_post_load(CPUX86State *env);
void intel_pt_mov_cr3(CPUX86State *env);
bool intel_pt_pmu_msr(CPUX86State *env, uint32_t msr);
bool intel_pt_pmu_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val);
uint64_t intel_pt_pmu_rdmsr(CPUX86State *env, uint32_t msr);
#else
static inline void intel_pt_far_transfer(CPUX86State *env, bool async,
                                         target_ulong src)
{
}
#endif

#endif /* I386_TCG_INTEL_PT_H */
