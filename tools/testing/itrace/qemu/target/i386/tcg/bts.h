/*
 * Intel Branch Trace Store emulation for TCG
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef I386_TCG_BTS_H
#define I386_TCG_BTS_H

/* IA32_DEBUGCTL (SDM Vol. 3B, "IA32_DEBUGCTL MSR") */
#define DEBUGCTL_LBR            (1ULL << 0)
#define DEBUGCTL_BTF            (1ULL << 1)
#define DEBUGCTL_TR             (1ULL << 6)
#define DEBUGCTL_BTS            (1ULL << 7)
#define DEBUGCTL_BTINT          (1ULL << 8)
#define DEBUGCTL_BTS_OFF_OS     (1ULL << 9)
#define DEBUGCTL_BTS_OFF_USR    (1ULL << 10)
#define DEBUGCTL_FREEZE_LBRS_ON_PMI     (1ULL << 11)
#define DEBUGCTL_FREEZE_PERFMON_ON_PMI  (1ULL << 12)
#define DEBUGCTL_UNCORE_PMI_EN  (1ULL << 13)
#define DEBUGCTL_FREEZE_WHILE_SMM       (1ULL << 14)

/*
 * The bits a Kaby Lake part (family 6, model 158) without TSX defines;
 * a write that sets any other bit raises #GP.  Only TR, BTS, BTINT,
 * BTS_OFF_OS and BTS_OFF_USR act; the others are stored and read back.
 */
#define DEBUGCTL_VALID  (DEBUGCTL_LBR | DEBUGCTL_BTF | DEBUGCTL_TR | \
                         DEBUGCTL_BTS | DEBUGCTL_BTINT | \
                         DEBUGCTL_BTS_OFF_OS | DEBUGCTL_BTS_OFF_USR | \
                         DEBUGCTL_FREEZE_LBRS_ON_PMI | \
                         DEBUGCTL_FREEZE_PERFMON_ON_PMI | \
                         DEBUGCTL_UNCORE_PMI_EN | DEBUGCTL_FREEZE_WHILE_SMM)

/* IA32_MISC_ENABLE: BTS available (11 clear), PEBS unavailable (12 set). */
#define MISC_ENABLE_BTS_UNAVAIL     (1ULL << 11)
#define MISC_ENABLE_PEBS_UNAVAIL    (1ULL << 12)
#define MISC_ENABLE_DS_RO   (MISC_ENABLE_BTS_UNAVAIL | MISC_ENABLE_PEBS_UNAVAIL)

/* The 64-bit DS save area (DTES64): the BTS fields. */
#define DS_BTS_BASE             0x00
#define DS_BTS_INDEX            0x08
#define DS_BTS_ABS_MAX          0x10
#define DS_BTS_THRESHOLD        0x18
#define BTS_RECORD_SIZE         24

#ifndef CONFIG_USER_ONLY
void tcg_bts_init(X86CPU *cpu);
bool tcg_bts_supported(CPUX86State *env);
bool tcg_bts_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val);
uint64_t tcg_bts_rdmsr(CPUX86State *env, uint32_t msr);
uint64_t tcg_bts_misc_enable(CPUX86State *env, uint64_t val);
void tcg_bts_interrupt(CPUX86State *env, target_ulong from, int cpl);
void tcg_bts_far_transfer(CPUX86State *env);
void tcg_bts_post_load(CPUX86State *env);
void tcg_bts_pre_save(CPUX86State *env);
void tcg_bts_mov_cr3(CPUX86State *env);
#else
static inline void tcg_bts_interrupt(CPUX86State *env, target_ulong from,
                                     int cpl)
{
}
static inline void tcg_bts_far_transfer(CPUX86State *env)
{
}
static inline void tcg_bts_mov_cr3(CPUX86State *env)
{
}
#endif

#endif /* I386_TCG_BTS_H */
