// SPDX-License-Identifier: GPL-2.0
/*
 * Bare-metal (multiboot, 32-bit) check of the emulated CPU's performance
 * counters (tools/testing/itrace/qemu/target/i386/tcg/sysemu/pmu.c),
 * against the Intel SDM (Vol. 3B "Architectural Performance Monitoring",
 * Vol. 2B RDPMC): CPUID leaf 0xA, RDPMC of every counter at CPL 0 and 3,
 * its #GP cases, counter widths, the enable and USR/OS bits, exact
 * instruction and branch counts of known code at CPL 3 and CPL 0 (with
 * instructions that fault, which do not retire), a REP string
 * instruction, the cycle counters against the TSC and HLT, and overflows:
 * the status bit, exactly one PMI through the LVT, taken right after the
 * instruction that overflowed the counter.  Prints TAP on COM1; exits
 * through isa-debug-exit.
 *
 * With "migrate" on the command line it runs a long counted loop,
 * printing PMU-MIGRATE-READY before it, and checks the exact counts and
 * one overflow PMI after it: pmu-test.sh migrates the VM meanwhile.
 */
#include <stdint.h>

#include "baremetal.h"

#define MSR_PMC0		0xc1
#define MSR_EVNTSEL0		0x186
#define MSR_FIXED_CTR0		0x309
#define MSR_FIXED_CTR_CTRL	0x38d
#define MSR_GLOBAL_STATUS	0x38e
#define MSR_GLOBAL_CTRL		0x38f
#define MSR_GLOBAL_OVF_CTRL	0x390

#define EVTSEL_USR		(1u << 16)
#define EVTSEL_OS		(1u << 17)
#define EVTSEL_INT		(1u << 20)
#define EVTSEL_EN		(1u << 22)
#define EV_INSNS		0x00c0
#define EV_BRANCHES		0x00c4
#define EV_MISPREDICTS		0x00c5
#define EV_CYCLES		0x003c
#define EV_XCLK			0x013c
#define FIX_OS			0x1
#define FIX_USR			0x2
#define FIX_PMI			0x8
#define FIXED(n)		(1ULL << (32 + (n)))
#define ALL_COUNTERS		(0xfULL | FIXED(0) | FIXED(1) | FIXED(2))
#define MASK48			0xffffffffffffULL

#define APIC_SVR	0xf0
#define APIC_EOI	0xb0
#define APIC_LVTT	0x320
#define APIC_LVTPC	0x340
#define APIC_TMICT	0x380
#define APIC_TDCR	0x3e0
#define LVT_NMI		(4u << 8)
#define LVT_MASKED	(1u << 16)
#define TIMER_VECTOR	0x40

#define CR4_PCE		(1u << 8)

/*
 * Segments: null, ring-0 code (0x08) and data (0x10), ring-3 code (0x1b)
 * and data (0x23), all flat; the TSS (0x28) gives ring 0's stack for
 * interrupts from ring 3.
 */
asm(".text\n"
    ".globl _start\n"
    "_start:\n"
    "	mov $stack_top, %esp\n"
    "	push %ebx\n"
    "	call main\n"
    "1:	hlt\n"
    "	jmp 1b\n"
    /* NMI (the PMI): nmi_handler(saved EIP) */
    "nmi_entry:\n"
    "	pusha\n"
    "	push 32(%esp)\n"
    "	call nmi_handler\n"
    "	add $4, %esp\n"
    "	popa\n"
    "	iret\n"
    /* #GP, #UD: count it, skip the 2-byte instruction */
    "gp_entry:\n"
    "	incl gp_count\n"
    "	add $4, %esp\n"
    "	addl $2, (%esp)\n"
    "	iret\n"
    "ud_entry:\n"
    "	incl ud_count\n"
    "	addl $2, (%esp)\n"
    "	iret\n"
    "timer_entry:\n"
    "	incl timer_count\n"
    "	movl $0, 0xfee000b0\n"
    "	iret\n"
    "bad_entry:\n"
    "	call bad_exception\n"
    /* run_user(fn): iret to fn at CPL 3; its INT $0x80 comes back here */
    "run_user:\n"
    "	push %ebp\n"
    "	push %ebx\n"
    "	push %esi\n"
    "	push %edi\n"
    "	mov %esp, kernel_esp\n"
    "	mov 20(%esp), %eax\n"
    "	push $0x23\n"
    "	push $user_stack_top\n"
    "	pushf\n"
    "	push $0x1b\n"
    "	push %eax\n"
    "	iret\n"
    "user_return:\n"
    "	mov kernel_esp, %esp\n"
    "	pop %edi\n"
    "	pop %esi\n"
    "	pop %ebx\n"
    "	pop %ebp\n"
    "	ret\n"
    ".globl gp_entry, ud_entry, nmi_entry, timer_entry, bad_entry\n"
    ".globl run_user, user_return\n");

/*
 * Ring-3 code, with known counts.  user_loop: ESI iterations of 4
 * instructions, 1 branch each; 1 + 4 * ESI + 1 instructions (the INT
 * $0x80 back to ring 0 included), ESI + 1 branches.
 */
#define K_SMALL	10
#define K_BIG	1000
asm(".text\n"
    ".globl user_loop_small, user_loop_big, user_loop, user_faults\n"
    ".globl user_rdpmc, user_rep, user_spin\n"
    "user_loop_small:\n"
    "	mov $10, %esi\n"
    "	jmp user_loop\n"
    "user_loop_big:\n"
    "	mov $1000, %esi\n"
    "user_loop:\n"
    "1:	nop\n"
    "	nop\n"
    "	dec %esi\n"
    "	jnz 1b\n"
    "	int $0x80\n"
    /*
     * Instructions that fault do not retire: RDPMC with CR4.PCE clear
     * (#GP), UD2 (#UD), INT $0x81 through a DPL-0 gate (#GP).  Counted:
     * mov, nop, int $0x80 (3 instructions, 1 branch).
     */
    "user_faults:\n"
    "	mov $0x40000000, %ecx\n"
    "	rdpmc\n"
    "	ud2\n"
    "	int $0x81\n"
    "	nop\n"
    "	int $0x80\n"
    /* RDPMC of IA32_FIXED_CTR0 after 3 counted instructions. */
    "user_rdpmc:\n"
    "	mov $0x40000000, %ecx\n"
    "	nop\n"
    "	nop\n"
    "	rdpmc\n"
    "	mov %eax, user_val\n"
    "	mov %edx, user_val + 4\n"
    "	int $0x80\n"
    /* REP MOVSB of 100 bytes: one instruction.  6 instructions. */
    "user_rep:\n"
    "	mov $user_buf, %esi\n"
    "	lea 100(%esi), %edi\n"
    "	mov $100, %ecx\n"
    "	cld\n"
    "	rep movsb\n"
    "	int $0x80\n"
    /*
     * "migrate": spin until mig_stop, 11 instructions and 1 branch an
     * iteration; 11 * n + 3 instructions, n + 1 branches in all.
     */
    "user_spin:\n"
    "	xor %esi, %esi\n"
    "1:	inc %esi\n"
    "	.rept 8\n"
    "	nop\n"
    "	.endr\n"
    "	cmpl $0, mig_stop\n"
    "	je 1b\n"
    "	mov %esi, user_iters\n"
    "	int $0x80\n");

char stack[16384] __attribute__((aligned(16)));
char tss_stack[8192] __attribute__((aligned(16)));
char user_stack[4096] __attribute__((aligned(16)));
char user_buf[256];
asm(".globl stack_top, user_stack_top\n"
    ".set stack_top, stack + 16384\n"
    ".set user_stack_top, user_stack + 4096\n");

volatile unsigned int gp_count, ud_count, timer_count, nmi_count, nmi_rearm;
volatile unsigned int mig_mode, mig_stop, mig_pmis, user_iters;
volatile uint64_t nmi_status, user_val;
volatile uint32_t nmi_eip, kernel_esp;
static uint32_t tss[26];
static uint64_t gdt[6] = {
	0, 0x00cf9a000000ffffULL, 0x00cf92000000ffffULL,
	0x00cffa000000ffffULL, 0x00cff2000000ffffULL, 0,
};
static uint64_t idt[256];

extern void run_user(void (*fn)(void));
extern void user_loop_small(void), user_loop_big(void), user_faults(void);
extern void user_rdpmc(void), user_rep(void), user_spin(void);

/* A figure the host log shows: "# NAME VALUE". */
static void note(const char *name, uint64_t v)
{
	puts_("# ");
	puts_(name);
	puts_(" ");
	putu(v);
	puts_("\n");
}

/* RDPMC; returns 1 if it raised #GP. */
static int rdpmc_gp(uint32_t ecx, uint64_t *val)
{
	unsigned int before = gp_count;
	uint32_t lo = 0, hi = 0;

	asm volatile("rdpmc" : "+a" (lo), "+d" (hi) : "c" (ecx) : "memory");
	*val = lo | (uint64_t)hi << 32;
	return gp_count != before;
}

static void set_gate(int vec, void *fn, int dpl)
{
	uint32_t a = (uint32_t)fn;

	idt[vec] = (a & 0xffff) | (0x08u << 16) |
		   ((uint64_t)(0x8e00 | dpl << 13) << 32) |
		   ((uint64_t)(a >> 16) << 48);
}

static void setup_cpu(void)
{
	extern char gp_entry[], ud_entry[], nmi_entry[], timer_entry[];
	extern char bad_entry[], user_return[];
	struct { uint16_t lim; uint32_t base; } __attribute__((packed)) d;
	uint32_t t = (uint32_t)tss;
	int i;

	tss[1] = (uint32_t)tss_stack + sizeof(tss_stack);	/* ESP0 */
	tss[2] = 0x10;						/* SS0 */
	gdt[5] = (sizeof(tss) - 1) | ((uint64_t)(t & 0xffffff) << 16) |
		 (0x89ULL << 40) | ((uint64_t)(t >> 24) << 56);
	d.lim = sizeof(gdt) - 1;
	d.base = (uint32_t)gdt;
	asm volatile("lgdt %0\n"
		     "ljmp $0x08, $1f\n"
		     "1: mov $0x10, %%ax\n"
		     "mov %%ax, %%ss\n"
		     "mov $0x23, %%ax\n"
		     "mov %%ax, %%ds\nmov %%ax, %%es\n"
		     "mov $0x28, %%ax\n"
		     "ltr %%ax\n"
		     : : "m" (d) : "eax", "memory");
	for (i = 0; i < 256; i++)
		set_gate(i, bad_entry, 0);
	set_gate(2, nmi_entry, 0);
	set_gate(6, ud_entry, 0);
	set_gate(13, gp_entry, 0);
	set_gate(TIMER_VECTOR, timer_entry, 0);
	set_gate(0x80, user_return, 3);
	/* 0x81 stays a DPL-0 gate: INT $0x81 at CPL 3 is #GP. */
	d.lim = sizeof(idt) - 1;
	d.base = (uint32_t)idt;
	asm volatile("lidt %0" : : "m" (d));
	*apic_reg(APIC_SVR) = 0x1ff;
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	/* The 8259s off: the BIOS's timer (IRQ 0) stays out of the HLT test. */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

static void set_cr4_pce(int on)
{
	uint32_t cr4;

	asm volatile("mov %%cr4, %0" : "=r" (cr4));
	cr4 = on ? cr4 | CR4_PCE : cr4 & ~CR4_PCE;
	asm volatile("mov %0, %%cr4" : : "r" (cr4));
}

/*
 * The PMI handler, as Linux's: read IA32_PERF_GLOBAL_STATUS, acknowledge
 * it through GLOBAL_OVF_CTRL, re-arm the LVT entry (delivery masked it)
 * if nmi_rearm.  @eip: where the NMI interrupted.
 */
#define MIG_PERIOD	1000000u
void nmi_handler(uint32_t eip)
{
	uint64_t st = rdmsr(MSR_GLOBAL_STATUS);

	if (mig_mode) {
		/* "migrate": an NMI without status is the host's. */
		if (!st)
			mig_stop = 1;
		if (st & 4) {
			mig_pmis++;
			wrmsr_gp(MSR_PMC0 + 2, (uint32_t)-MIG_PERIOD);
		}
	}

	if (!nmi_count)
		nmi_eip = eip;
	nmi_count++;
	nmi_status |= st;
	wrmsr_gp(MSR_GLOBAL_OVF_CTRL, st);
	if (nmi_rearm)
		*apic_reg(APIC_LVTPC) = LVT_NMI;
}

/* Stop and zero every counter; clear overflow status. */
static void pmu_reset(void)
{
	int i;

	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	wrmsr_gp(MSR_FIXED_CTR_CTRL, 0);
	for (i = 0; i < 4; i++) {
		wrmsr_gp(MSR_EVNTSEL0 + i, 0);
		wrmsr_gp(MSR_PMC0 + i, 0);
	}
	for (i = 0; i < 3; i++)
		wrmsr_gp(MSR_FIXED_CTR0 + i, 0);
	wrmsr_gp(MSR_GLOBAL_OVF_CTRL, rdmsr(MSR_GLOBAL_STATUS));
}

/*
 * Counters: FIXED_CTR0 (instructions), PMC0 instructions, PMC1
 * branches, PMC2 branch mispredicts, all at @usr/@os; run @fn at CPL 3.  Global enable and
 * disable around run_user() at CPL 0.
 */
struct counts {
	uint64_t fixed0, insns, branches, mispredicts;
};

static void count_user(void (*fn)(void), int usr, int os, struct counts *c)
{
	uint32_t sel = (usr ? EVTSEL_USR : 0) | (os ? EVTSEL_OS : 0) | EVTSEL_EN;

	pmu_reset();
	wrmsr_gp(MSR_FIXED_CTR_CTRL, (usr ? FIX_USR : 0) | (os ? FIX_OS : 0));
	wrmsr_gp(MSR_EVNTSEL0, sel | EV_INSNS);
	wrmsr_gp(MSR_EVNTSEL0 + 1, sel | EV_BRANCHES);
	wrmsr_gp(MSR_EVNTSEL0 + 2, sel | EV_MISPREDICTS);
	wrmsr_gp(MSR_GLOBAL_CTRL, 0x7 | FIXED(0));
	run_user(fn);
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	c->fixed0 = rdmsr(MSR_FIXED_CTR0);
	c->insns = rdmsr(MSR_PMC0);
	c->branches = rdmsr(MSR_PMC0 + 1);
	c->mispredicts = rdmsr(MSR_PMC0 + 2);
}

static void cpuid_tests(void)
{
	uint32_t r[4];

	cpuid(0xa, r);
	ok(r[0] == (2 | 4 << 8 | 48 << 16 | 7 << 24),
	   "CPUID.0A:EAX = version 2, 4 counters, 48 bits, 7 events");
	ok(r[1] == ((1 << 3) | (1 << 4)),
	   "CPUID.0A:EBX: cycles, instructions, ref cycles, branches, branch misses available; LLC references and misses not");
	ok(r[3] == (3 | 48 << 5), "CPUID.0A:EDX = 3 fixed counters, 48 bits");
	cpuid(1, r);
	ok(!(r[2] & (1u << 15)), "CPUID.1:ECX.PDCM = 0: no PERF_CAPABILITIES, no full-width writes, no FREEZE_PERFMON_ON_PMI");
}

/* RDPMC at CPL 0: every counter, invalid encodings, widths. */
static void rdpmc_tests(void)
{
	static const uint32_t bad[] = {
		4, 0xff, 0x100, 0x40000003, 0x40000020, 0x80000000, 0x20000000,
		0x00010000, 0xc0000000,
	};
	uint64_t v, w;
	int i, good = 1;

	pmu_reset();
	for (i = 0; i < 4; i++)
		wrmsr_gp(MSR_PMC0 + i, 0x1000 + i);
	for (i = 0; i < 3; i++)
		wrmsr_gp(MSR_FIXED_CTR0 + i, 0x123456789000ULL + i);
	for (i = 0; i < 4; i++)
		good &= !rdpmc_gp(i, &v) && v == 0x1000u + i;
	ok(good, "RDPMC 0-3: IA32_PMC0-3");
	good = 1;
	for (i = 0; i < 3; i++)
		good &= !rdpmc_gp(0x40000000 + i, &v) && v == 0x123456789000ULL + i;
	ok(good, "RDPMC 0x40000000-2: IA32_FIXED_CTR0-2, all 48 bits");
	good = 1;
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
		good &= rdpmc_gp(bad[i], &v);
	ok(good, "#GP: RDPMC 4, 0xff, 0x100, 0x40000003, 0x40000020, fast-read bit 31, type 0x2000, type 1, 0xc0000000");

	ok(!wrmsr_gp(MSR_PMC0, 0xffffffffULL) && rdmsr(MSR_PMC0) == MASK48 &&
	   !rdpmc_gp(0, &v) && v == MASK48,
	   "PMC write 0xffffffff: bit 31 sign-extends to 48 bits (RDMSR, RDPMC)");
	ok(!wrmsr_gp(MSR_PMC0, 0x17fffffffULL) && rdmsr(MSR_PMC0) == 0x7fffffff,
	   "PMC write: bits 63:32 ignored (no full-width writes)");
	ok(!wrmsr_gp(MSR_FIXED_CTR0 + 1, MASK48) && rdmsr(MSR_FIXED_CTR0 + 1) == MASK48,
	   "FIXED_CTR1 takes all 48 bits");
	ok(wrmsr_gp(MSR_FIXED_CTR0, 1ULL << 48), "#GP: FIXED_CTR0 bit 48");
	ok(wrmsr_gp(MSR_EVNTSEL0, 1ULL << 32), "#GP: EVNTSEL bit 32");
	ok(wrmsr_gp(MSR_EVNTSEL0 + 3, 1ULL << 21), "#GP: EVNTSEL AnyThread (version 3)");
	ok(!wrmsr_gp(MSR_EVNTSEL0 + 3, 0xff9fffffULL) &&
	   rdmsr(MSR_EVNTSEL0 + 3) == 0xff9fffffULL,
	   "EVNTSEL: every other bit of 31:0 reads back");
	ok(wrmsr_gp(MSR_FIXED_CTR_CTRL, 0x4), "#GP: FIXED_CTR_CTRL AnyThread (version 3)");
	ok(wrmsr_gp(MSR_FIXED_CTR_CTRL, 1 << 12), "#GP: FIXED_CTR_CTRL bit 12 (3 counters)");
	ok(!wrmsr_gp(MSR_FIXED_CTR_CTRL, 0xbbb) && rdmsr(MSR_FIXED_CTR_CTRL) == 0xbbb,
	   "FIXED_CTR_CTRL 0xbbb reads back");
	ok(wrmsr_gp(MSR_GLOBAL_CTRL, 1ULL << 4) && wrmsr_gp(MSR_GLOBAL_CTRL, FIXED(3)),
	   "#GP: GLOBAL_CTRL bits 4 and 35 (no such counter)");
	ok(wrmsr_gp(MSR_GLOBAL_STATUS, 0), "#GP: GLOBAL_STATUS is read-only");
	ok(wrmsr_gp(MSR_GLOBAL_OVF_CTRL, 1ULL << 4), "#GP: GLOBAL_OVF_CTRL bit 4");
	pmu_reset();
	/* Nothing enabled: nothing counts. */
	wrmsr_gp(MSR_EVNTSEL0, EVTSEL_OS | EVTSEL_USR | EV_INSNS);
	wrmsr_gp(MSR_FIXED_CTR_CTRL, FIX_OS | FIX_USR);
	wrmsr_gp(MSR_GLOBAL_CTRL, FIXED(1));
	for (i = 0; i < 1000; i++)
		asm volatile("nop");
	v = rdmsr(MSR_PMC0);
	w = rdmsr(MSR_FIXED_CTR0);
	ok(v == 0 && w == 0, "enable bits: EVNTSEL.EN clear, GLOBAL_CTRL bit clear: nothing counts");
	pmu_reset();
}

/* Exact counts of known ring-3 code; the USR and OS bits. */
static void count_tests(void)
{
	struct counts s, b, k1, k2, all;
	uint64_t v;

	count_user(user_loop_small, 1, 0, &s);
	count_user(user_loop_big, 1, 0, &b);
	note("user_loop_big insns", b.insns);
	ok(s.fixed0 == 2 + 4 * K_SMALL + 1 && s.insns == s.fixed0,
	   "USR: instructions of a 10-iteration loop at CPL 3: 43 (FIXED_CTR0 and PMC 0xc0)");
	ok(b.fixed0 == 2 + 4 * K_BIG && b.insns == b.fixed0,
	   "USR: instructions of a 1000-iteration loop at CPL 3: 4002");
	ok(s.branches == K_SMALL + 2 && b.branches == K_BIG + 1,
	   "USR: branches: the JMP, the JNZs taken and not taken, the INT: 12 and 1001");
	count_user(user_loop_small, 0, 1, &k1);
	count_user(user_loop_big, 0, 1, &k2);
	note("OS insns around run_user", k1.fixed0);
	ok(k1.fixed0 > 10 && k1.fixed0 == k2.fixed0 && k1.insns == k1.fixed0 &&
	   k1.branches == k2.branches && k1.branches > 0,
	   "OS: ring-0 instructions and branches only, the same for both loops");
	count_user(user_loop_big, 1, 1, &all);
	ok(all.fixed0 == k2.fixed0 + b.fixed0 && all.branches == k2.branches + b.branches,
	   "USR+OS = USR + OS");
	ok(all.mispredicts == 0 && s.mispredicts == 0 && k1.mispredicts == 0 &&
	   all.branches > 1000,
	   "branch mispredicts retired (0xc5): 0, USR, OS and both, of > 1000 branches");

	gp_count = 0;
	ud_count = 0;
	count_user(user_faults, 1, 0, &s);
	ok(gp_count == 2 && ud_count == 1, "user_faults: #GP (RDPMC, INT $0x81) and #UD (UD2) taken");
	note("user_faults insns", s.insns);
	ok(s.fixed0 == 3 && s.insns == 3 && s.branches == 1,
	   "faulting RDPMC, UD2 and INT $0x81 do not retire: 3 instructions, 1 branch");

	count_user(user_rep, 1, 0, &s);
	ok(s.fixed0 == 6 && s.branches == 1, "REP MOVSB of 100 bytes: one instruction");

	/* RDPMC at CPL 3 with CR4.PCE: the count before it. */
	set_cr4_pce(1);
	user_val = ~0ULL;
	count_user(user_rdpmc, 1, 0, &s);
	ok(user_val == 3, "CPL 3, CR4.PCE set: RDPMC of FIXED_CTR0 = the 3 instructions before it");
	ok(s.fixed0 == 7, "... and the block retires 7 instructions");
	set_cr4_pce(0);
	gp_count = 0;
	run_user(user_rdpmc);
	ok(gp_count == 1, "CPL 3, CR4.PCE clear: RDPMC #GP");

	/* CPL 0: a REP and a branch-free block between two WRMSRs. */
	pmu_reset();
	wrmsr_gp(MSR_FIXED_CTR_CTRL, FIX_OS);
	{
		uint32_t c = MSR_GLOBAL_CTRL, a = 0, d = 1;

		asm volatile("wrmsr\n"		/* enables: counts */
			     "mov $500, %%esi\n"
			     "1: nop\n"
			     "nop\n"
			     "dec %%esi\n"
			     "jnz 1b\n"
			     "mov $0x38f, %%ecx\n"
			     "xor %%eax, %%eax\n"
			     "xor %%edx, %%edx\n"
			     "wrmsr\n"		/* disables: does not */
			     : "+c" (c), "+a" (a), "+d" (d) : : "esi", "memory");
	}
	v = rdmsr(MSR_FIXED_CTR0);
	ok(v == 1 + 1 + 4 * 500 + 3, "OS: WRMSR enabling, 2004 instructions, WRMSR disabling: 2005");
	pmu_reset();
}

/* Overflow: GLOBAL_STATUS, one PMI, where it is taken. */
extern char nops[];
static void overflow_tests(void)
{
	uint64_t v;

	pmu_reset();
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	nmi_count = 0;
	nmi_status = 0;
	nmi_rearm = 0;
	/*
	 * PMC0 at -100, instructions at CPL 0 with INT: the enabling WRMSR
	 * is event 1, nops 0-98 events 2-100; the 100th overflows the
	 * counter, the PMI comes before nops[99].
	 */
	wrmsr_gp(MSR_PMC0, (uint32_t)-100);
	wrmsr_gp(MSR_EVNTSEL0, EVTSEL_OS | EVTSEL_INT | EVTSEL_EN | EV_INSNS);
	asm volatile("wrmsr\n"
		     ".globl nops\n"
		     "nops:\n"
		     ".rept 300\n"
		     "nop\n"
		     ".endr\n"
		     : : "c" (MSR_GLOBAL_CTRL), "a" (1), "d" (0) : "memory");
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	ok(nmi_count == 1, "PMC0 overflow, INT: exactly one PMI");
	ok(nmi_status == 1, "the handler saw GLOBAL_STATUS = bit 0");
	note("PMI EIP - nops", nmi_eip - (uint32_t)nops);
	ok(nmi_eip == (uint32_t)nops + 99,
	   "the PMI comes right after the instruction that overflowed the counter (before nops[99])");
	v = rdmsr(MSR_PMC0);
	ok(v > 200 && v < 100000, "PMC0 wrapped and kept counting");
	ok(*apic_reg(APIC_LVTPC) == (LVT_NMI | LVT_MASKED), "delivery masked LVTPC");
	ok(rdmsr(MSR_GLOBAL_STATUS) == 0, "the handler's OVF_CTRL write cleared the status");

	/* Without INT: the status bit, no PMI. */
	pmu_reset();
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	nmi_count = 0;
	wrmsr_gp(MSR_FIXED_CTR0, MASK48 - 10);
	wrmsr_gp(MSR_FIXED_CTR_CTRL, FIX_OS);
	wrmsr_gp(MSR_GLOBAL_CTRL, FIXED(0));
	asm volatile(".rept 50\nnop\n.endr");
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	ok(nmi_count == 0 && rdmsr(MSR_GLOBAL_STATUS) == FIXED(0),
	   "FIXED_CTR0 overflow without PMI: status bit 32, no PMI");
	ok(!wrmsr_gp(MSR_GLOBAL_OVF_CTRL, FIXED(0)) && rdmsr(MSR_GLOBAL_STATUS) == 0,
	   "GLOBAL_OVF_CTRL bit 32 clears it");

	/* Branches: PMC1 at -5, the PMI after the 5th branch, at CPL 3. */
	pmu_reset();
	nmi_count = 0;
	nmi_status = 0;
	nmi_rearm = 1;
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	wrmsr_gp(MSR_PMC0 + 1, (uint32_t)-5);
	wrmsr_gp(MSR_EVNTSEL0 + 1, EVTSEL_USR | EVTSEL_INT | EVTSEL_EN | EV_BRANCHES);
	wrmsr_gp(MSR_GLOBAL_CTRL, 2);
	run_user(user_loop_small);
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	ok(nmi_count == 1 && nmi_status == 2, "PMC1 branches overflow at CPL 3: one PMI, status bit 1");
	{
		extern char user_loop[];

		ok(nmi_eip == (uint32_t)user_loop,
		   "... taken at the target of the 5th branch (the loop head)");
	}
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	pmu_reset();
}

/* Cycles against the TSC; no cycles while halted; a cycles PMI. */
static void cycle_tests(void)
{
	uint64_t t0, t1, c1, c2, p2, p3;
	int i;

	pmu_reset();
	wrmsr_gp(MSR_FIXED_CTR_CTRL, (FIX_OS << 4) | (FIX_OS << 8));
	wrmsr_gp(MSR_EVNTSEL0 + 2, EVTSEL_OS | EVTSEL_EN | EV_CYCLES);
	wrmsr_gp(MSR_EVNTSEL0 + 3, EVTSEL_OS | EVTSEL_EN | EV_XCLK);
	t0 = rdtsc();
	wrmsr_gp(MSR_GLOBAL_CTRL, FIXED(1) | FIXED(2) | 0xc);
	for (i = 0; i < 200000; i++)
		asm volatile("");
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	t1 = rdtsc();
	c1 = rdmsr(MSR_FIXED_CTR0 + 1);
	c2 = rdmsr(MSR_FIXED_CTR0 + 2);
	p2 = rdmsr(MSR_PMC0 + 2);
	p3 = rdmsr(MSR_PMC0 + 3);
	note("TSC ticks", t1 - t0);
	note("core cycles", c1);
	note("crystal clocks", p3);
	ok(c1 > 0 && c1 <= t1 - t0, "core cycles (FIXED_CTR1): nonzero, at most the TSC ticks around them");
	ok(c2 == c1 && p2 == c1, "FIXED_CTR2 (TSC rate) and PMC 0x3c equal FIXED_CTR1 (CBR 36: one cycle per TSC tick)");
	ok(p3 + 1 >= c1 / 150 && p3 <= c1 / 150 + 1, "PMC 0x013c: core crystal clock, TSC / 150 (CPUID 0x15)");

	/*
	 * HLT for 20 ms of virtual time (APIC timer, 24 MHz): at least 10 ms
	 * of it are not counted, however late the HLT comes on a loaded host.
	 */
	pmu_reset();
	wrmsr_gp(MSR_FIXED_CTR_CTRL, FIX_OS << 4);
	*apic_reg(APIC_TDCR) = 0xb;			/* divide by 1 */
	*apic_reg(APIC_LVTT) = TIMER_VECTOR;		/* one-shot */
	timer_count = 0;
	t0 = rdtsc();
	wrmsr_gp(MSR_GLOBAL_CTRL, FIXED(1));
	*apic_reg(APIC_TMICT) = 480000;
	asm volatile("sti; hlt; cli");
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	t1 = rdtsc();
	c1 = rdmsr(MSR_FIXED_CTR0 + 1);
	note("TSC ticks around HLT", t1 - t0);
	note("core cycles around HLT", c1);
	ok(timer_count == 1 && t1 - t0 >= 72000000, "HLT woken by the APIC timer after 20 ms");
	ok(c1 + 36000000 <= t1 - t0, "no core cycles while halted (10 ms and more not counted)");

	/* A PMI from a cycle counter, by time: PMC2 1 ms before overflow. */
	pmu_reset();
	nmi_count = 0;
	nmi_status = 0;
	nmi_rearm = 0;
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	wrmsr_gp(MSR_PMC0 + 2, (uint32_t)-3600000);
	wrmsr_gp(MSR_EVNTSEL0 + 2, EVTSEL_OS | EVTSEL_INT | EVTSEL_EN | EV_CYCLES);
	t0 = rdtsc();
	wrmsr_gp(MSR_GLOBAL_CTRL, 4);
	while (!nmi_count && rdtsc() - t0 < 3600000000ULL)
		asm volatile("pause");
	t1 = rdtsc();
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	note("TSC ticks to the cycles PMI", t1 - t0);
	ok(nmi_count == 1 && nmi_status == 4, "PMC2 cycles overflow: one PMI, status bit 2");
	ok(t1 - t0 >= 3600000, "... not before 3600000 cycles");
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	pmu_reset();
}

/*
 * "migrate": user_spin at CPL 3 until the host's NMI, counting its
 * instructions and branches, with a PMI every MIG_PERIOD branches (the
 * handler re-arms PMC2); pmu-test.sh migrates the VM while it spins and
 * sends the NMI to the destination.  The counts must match the
 * iterations exactly, and the PMIs the branches.
 */
static void migrate_run(void)
{
	uint64_t insns, branches;

	pmu_reset();
	nmi_count = 0;
	nmi_rearm = 1;
	mig_pmis = 0;
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	wrmsr_gp(MSR_FIXED_CTR_CTRL, FIX_USR);
	wrmsr_gp(MSR_EVNTSEL0 + 1, EVTSEL_USR | EVTSEL_EN | EV_BRANCHES);
	wrmsr_gp(MSR_PMC0 + 2, (uint32_t)-MIG_PERIOD);
	wrmsr_gp(MSR_EVNTSEL0 + 2, EVTSEL_USR | EVTSEL_INT | EVTSEL_EN | EV_BRANCHES);
	wrmsr_gp(MSR_GLOBAL_CTRL, FIXED(0) | 6);
	mig_mode = 1;
	puts_("PMU-MIGRATE-READY\n");
	run_user(user_spin);
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	mig_mode = 0;
	insns = rdmsr(MSR_FIXED_CTR0);
	branches = rdmsr(MSR_PMC0 + 1);
	/*
	 * user_iters is %esi, n modulo 2^32: a late NMI (pmu-test.sh sends
	 * it again after 5 s) may let the loop run past 2^32 iterations.  The
	 * branches counted give n whole; its low 32 bits must be user_iters.
	 */
	note("migrate: iterations (modulo 2^32)", user_iters);
	note("migrate: instructions", insns);
	note("migrate: branches", branches);
	note("migrate: PMIs", mig_pmis);
	ok(branches > 10 * MIG_PERIOD, "migrate: spun for more than 10 PMI periods");
	ok(branches && insns == 11ULL * (branches - 1) + 3,
	   "migrate: instructions across the migration, exact (11 n + 3)");
	ok(branches && (uint32_t)(branches - 1) == user_iters,
	   "migrate: branches, exact (n + 1)");
	ok((uint64_t)mig_pmis * MIG_PERIOD <= branches &&
	   (uint64_t)(mig_pmis + 1) * MIG_PERIOD > branches,
	   "migrate: one PMI every 1000000 branches");
	finish();
}

int main(const uint32_t *mbi)
{
	setup_cpu();
	if (cmdline_has(mbi, "migrate"))
		migrate_run();
	cpuid_tests();
	rdpmc_tests();
	count_tests();
	overflow_tests();
	cycle_tests();
	finish();
	return 0;
}
