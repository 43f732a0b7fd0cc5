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
#define RTIT_CTL_MTCEN          (1ULL << 9)
#define RTIT_CTL_BRANCHEN       (1ULL << 13)
#define RTIT_CTL_MTCFREQ_SHIFT  14
#define RTIT_CTL_MTCFREQ        (0xfULL << RTIT_CTL_MTCFREQ_SHIFT)
#define RTIT_CTL_CYCTHRESH_SHIFT 19
#define RTIT_CTL_CYCTHRESH      (0xfULL << RTIT_CTL_CYCTHRESH_SHIFT)
#define RTIT_CTL_PSBFREQ_SHIFT  24
#define RTIT_CTL_PSBFREQ        (0xfULL << RTIT_CTL_PSBFREQ_SHIFT)
#define RTIT_CTL_ADDR0_CFG_SHIFT 32     /* ADDRn_CFG: bits 35+4n:32+4n */
#define RTIT_CTL_ADDR_CFG(n)    (0xfULL << (RTIT_CTL_ADDR0_CFG_SHIFT + 4 * (n)))
#define RTIT_ADDR_CFG_FILTER    1       /* the range is a FilterEn range */
#define RTIT_ADDR_CFG_STOP      2       /* the range is a TraceStop range */

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
 * CPUID leaf 0x14 under TCG: the Intel PT capabilities of a Kaby Lake-S /
 * Coffee Lake-S client part (family 6, model 158), as a real 06_9EH part
 * reports them (sub-leaf 0: EAX=1 EBX=0xf ECX=0x7; sub-leaf 1:
 * EAX=0x02490002 EBX=0x003f3fff):
 *
 * sub-leaf 0 EBX: CR3 filtering (bit 0), configurable PSB frequency and
 *   cycle-accurate mode (bit 1: PSBFreq, CYCEn, CycThresh), IP filtering
 *   and TraceStop (bit 2), MTC (bit 3).
 * sub-leaf 0 ECX: ToPA output, ToPA tables with any number of entries,
 *   single-range output (bits 0-2).  `-cpu ...,intel-pt-topa-multi=off`
 *   clears bit 1: the first generation's tables of one output entry.  IP payloads are effective addresses
 *   (bit 31 clear), as on the real part.
 * sub-leaf 1 EAX: MTC periods 0, 3, 6, 9 (bits 31:16 = 0x0249); 2
 *   address ranges, ADDR0 and ADDR1 (bits 2:0).
 * sub-leaf 1 EBX: CycThresh values 0-13 (bits 15:0 = 0x3fff), PSBFreq
 *   values 0-5, 2K to 64K bytes (bits 31:16 = 0x003f).
 */
#define INTEL_PT_TCG_14_0_EBX   ((1U << 0) | (1U << 1) | (1U << 2) | \
                                 (1U << 3))
#define INTEL_PT_TOPA_MULTI     (1U << 1)   /* the CPU property can clear it */
#define INTEL_PT_TCG_14_0_ECX   ((1U << 0) | INTEL_PT_TOPA_MULTI | (1U << 2))
#define INTEL_PT_TCG_MTC_PERIODS    0x0249
#define INTEL_PT_TCG_CYC_THRESHOLDS 0x3fff
#define INTEL_PT_TCG_PSB_PERIODS    0x003f
#define INTEL_PT_TCG_ADDR_RANGES    2
#define INTEL_PT_TCG_14_1_EAX   ((INTEL_PT_TCG_MTC_PERIODS << 16) | \
                                 INTEL_PT_TCG_ADDR_RANGES)
#define INTEL_PT_TCG_14_1_EBX   ((INTEL_PT_TCG_PSB_PERIODS << 16) | \
                                 INTEL_PT_TCG_CYC_THRESHOLDS)

/*
 * CPUID leaves 0x15 and 0x16 under TCG, as the same part reports them:
 * TSC / core crystal clock (CTC) ratio 300/2, crystal frequency not
 * enumerated (0x15 ECX = 0); base and maximum frequency 3600 MHz, bus
 * 100 MHz (0x16).  Linux (native_calibrate_tsc()) then derives the crystal
 * from leaf 0x16, 3600 MHz * 2 / 300 = 24 MHz, and the TSC rate from it,
 * 24 MHz * 300 / 2 = 3600 MHz, and runs the local APIC timer at the
 * crystal rate without calibrating it.  So under TCG with "+intel-pt" the
 * TSC (hw/i386/x86.c, cpu_get_tsc()) and the APIC timer
 * (hw/intc/apic_common.c) keep exactly these rates against virtual time
 * (TCG_PT_TSC_MHZ, TCG_PT_CRYSTAL_MHZ in cpu.h).  The emulated CTC, which
 * MTC and TMA packets carry, is TSC * 2 / 300.
 */
#define INTEL_PT_TCG_15_EAX     2
#define INTEL_PT_TCG_15_EBX     300

/*
 * Ratio reported in MSR_PLATFORM_INFO[15:8] (x 100 MHz) and in CBR: the
 * core runs at the nominal 3600 MHz, one cycle per TSC tick.
 */
#define INTEL_PT_TCG_BUS_RATIO  (TCG_PT_TSC_MHZ / 100)

#ifndef CONFIG_USER_ONLY
bool intel_pt_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val);
uint64_t intel_pt_rdmsr(CPUX86State *env, uint32_t msr);
void intel_pt_far_transfer(CPUX86State *env, bool async, target_ulong src);
void intel_pt_post_load(CPUX86State *env);
void intel_pt_mov_cr3(CPUX86State *env);
void intel_pt_flush(CPUX86State *env);
#else
static inline void intel_pt_far_transfer(CPUX86State *env, bool async,
                                         target_ulong src)
{
}
#endif

#endif /* I386_TCG_INTEL_PT_H */
