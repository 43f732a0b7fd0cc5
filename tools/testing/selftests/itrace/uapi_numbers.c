// SPDX-License-Identifier: GPL-2.0
/*
 * The numbers of the itrace uAPI collide with nothing mainline has taken:
 * a perf tool of a later release must never misread our records, flags or
 * limits as its own. The tables below are the values current mainline
 * (v6.18) gives out, from its include/uapi/linux/perf_event.h,
 * include/uapi/asm-generic/resource.h and include/uapi/linux/elf.h;
 * posted series that claim slots are listed too (DESIGN.md section 4).
 * When mainline takes another value, it goes into its table, and this
 * test fails until ours moves.
 */
#include <stdio.h>
#include <string.h>

#include <linux/elf.h>
#include <linux/itrace.h>
#include <linux/perf_event.h>
#include <linux/resource.h>

#include "../kselftest_harness.h"

/* PERF_RECORD_*: 1 (MMAP) to 22 (CALLCHAIN_DEFERRED, v6.18) */
#define MAINLINE_RECORD_MAX	22

/* perf_event_open() flags: FD_NO_GROUP, FD_OUTPUT, PID_CGROUP, FD_CLOEXEC */
#define MAINLINE_FLAGS		0xfUL

/* RLIMIT_CPU (0) to RLIMIT_RTTIME (15) */
#define MAINLINE_RLIMIT_MAX	15

/*
 * The ELF note types of the CORE and LINUX owners (include/uapi/linux/elf.h;
 * owner GNU: 1 to 5). Owners differ, but a tool that looks at the type
 * alone must not take our note for one of these.
 */
static const unsigned int mainline_nt[] = {
	NT_PRSTATUS, NT_PRFPREG, NT_PRPSINFO, NT_TASKSTRUCT, NT_AUXV,
	NT_SIGINFO, NT_FILE, NT_PRXFPREG, NT_PPC_VMX, NT_PPC_SPE, NT_PPC_VSX,
	NT_PPC_TAR, NT_PPC_PPR, NT_PPC_DSCR, NT_PPC_EBB, NT_PPC_PMU,
	NT_PPC_TM_CGPR, NT_PPC_TM_CFPR, NT_PPC_TM_CVMX, NT_PPC_TM_CVSX,
	NT_PPC_TM_SPR, NT_PPC_TM_CTAR, NT_PPC_TM_CPPR, NT_PPC_TM_CDSCR,
	NT_PPC_PKEY, NT_PPC_DEXCR, NT_PPC_HASHKEYR, NT_386_TLS, NT_386_IOPERM,
	NT_X86_XSTATE, NT_X86_SHSTK, NT_X86_XSAVE_LAYOUT, NT_S390_HIGH_GPRS,
	NT_S390_TIMER, NT_S390_TODCMP, NT_S390_TODPREG, NT_S390_CTRS,
	NT_S390_PREFIX, NT_S390_LAST_BREAK, NT_S390_SYSTEM_CALL, NT_S390_TDB,
	NT_S390_VXRS_LOW, NT_S390_VXRS_HIGH, NT_S390_GS_CB, NT_S390_GS_BC,
	NT_S390_RI_CB, NT_S390_PV_CPU_DATA, NT_ARM_VFP, NT_ARM_TLS,
	NT_ARM_HW_BREAK, NT_ARM_HW_WATCH, NT_ARM_SYSTEM_CALL, NT_ARM_SVE,
	NT_ARM_PAC_MASK, NT_ARM_PACA_KEYS, NT_ARM_PACG_KEYS,
	NT_ARM_TAGGED_ADDR_CTRL, NT_ARM_PAC_ENABLED_KEYS, NT_ARM_SSVE,
	NT_ARM_ZA, NT_ARM_ZT, NT_ARM_FPMR, NT_ARM_POE, NT_ARC_V2, NT_VMCOREDD,
	NT_MIPS_DSP, NT_MIPS_FP_MODE, NT_MIPS_MSA, NT_RISCV_CSR,
	NT_RISCV_VECTOR, NT_LOONGARCH_CPUCFG, NT_LOONGARCH_CSR,
	NT_LOONGARCH_LSX, NT_LOONGARCH_LASX, NT_LOONGARCH_LBT,
	NT_LOONGARCH_HW_BREAK, NT_LOONGARCH_HW_WATCH, NT_GNU_PROPERTY_TYPE_0,
	1, 2, 3, 4, 5,	/* NT_GNU_ABI_TAG ... NT_GNU_GOLD_VERSION */
};

TEST(record_type_is_free)
{
	EXPECT_LT(MAINLINE_RECORD_MAX, PERF_RECORD_ITRACE_LOST);
	/* PERF_RECORD_MAX is not ABI, but ours must be below it */
	EXPECT_GT(PERF_RECORD_MAX, PERF_RECORD_ITRACE_LOST);
}

TEST(open_flag_is_free)
{
	EXPECT_EQ(0, PERF_FLAG_FD_ITRACE & MAINLINE_FLAGS);
	EXPECT_EQ(1, __builtin_popcountl(PERF_FLAG_FD_ITRACE));
}

TEST(rlimit_is_free)
{
	EXPECT_LT(MAINLINE_RLIMIT_MAX, RLIMIT_ITRACE);
	EXPECT_EQ(RLIMIT_ITRACE + 1, RLIM_NLIMITS);
}

TEST(note_type_is_free)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mainline_nt); i++)
		EXPECT_NE(mainline_nt[i], NT_ITRACE)
			TH_LOG("NT_ITRACE is mainline's %#x", mainline_nt[i]);
	/* and the owner is ours, not CORE or LINUX */
	EXPECT_STRNE("CORE", ITRACE_NOTE_NAME);
	EXPECT_STRNE("LINUX", ITRACE_NOTE_NAME);
}

TEST_HARNESS_MAIN
