// SPDX-License-Identifier: GPL-2.0
/*
 * Bare-metal (multiboot, 32-bit, CPL0) check of the emulated Intel PT
 * programming interface: CPUID, IA32_RTIT_* MSRs and their #GP rules,
 * ToPA output with END, INT and STOP and malformed tables, the perfmon
 * MSRs (CPUID leaf 0xA, counter MSRs, IA32_PERF_GLOBAL_*; pmu-test.c
 * checks that the counters count) and the ToPA
 * PMI through the local APIC's LVT.  Prints TAP on COM1, then the first
 * trace it produced in hex between PT-HEX-BEGIN/END for the host to parse
 * with libipt.  Run with -kernel; exits through isa-debug-exit.
 *
 * With "ovf" on the command line (-append ovf) it only traces a HLT
 * instead, prints PT-OVF-HALTED and waits there for an NMI: migrate.sh
 * migrates it while it waits, and sends the NMI to the migrated VM.
 */
#include <stdint.h>

#include "baremetal.h"

#define MSR_PLATFORM_INFO	0xce
#define RTIT_OUTPUT_BASE	0x560
#define RTIT_OUTPUT_MASK	0x561
#define RTIT_CTL		0x570
#define RTIT_STATUS		0x571
#define RTIT_CR3_MATCH		0x572
#define RTIT_ADDR0_A		0x580
#define RTIT_ADDR0_B		0x581
#define RTIT_ADDR1_A		0x582
#define RTIT_ADDR1_B		0x583

#define CTL_TRACEEN	(1ULL << 0)
#define CTL_CYCEN	(1ULL << 1)
#define CTL_MTCEN	(1ULL << 9)
#define CTL_MTCFREQ(n)	((uint64_t)(n) << 14)
#define CTL_CYCTHRESH(n) ((uint64_t)(n) << 19)
#define CTL_PSBFREQ(n)	((uint64_t)(n) << 24)
#define CTL_OS		(1ULL << 2)
#define CTL_USER	(1ULL << 3)
#define CTL_CR3FILTER	(1ULL << 7)
#define CTL_TOPA	(1ULL << 8)
#define CTL_TSCEN	(1ULL << 10)
#define CTL_DISRETC	(1ULL << 11)
#define CTL_BRANCHEN	(1ULL << 13)
#define CTL_ADDR_CFG(n, v) ((uint64_t)(v) << (32 + 4 * (n)))

#define TOPA_TABLE	0x200000u
#define REGION		0x300000u	/* first run, dumped at the end */
#define REGION2		0x400000u	/* STOP run */
#define TOPA_TABLE3	0x210000u
#define REGION3		0x500000u	/* CR3 filter run, dumped too */
#define TOPA_TABLE4	0x220000u
#define REGION4		0x600000u	/* benchmark, wraps */
#define TOPA_TABLE5	0x230000u	/* PMI and error runs */
#define REGION5		0x700000u
#define TOPA_TABLE6	0x240000u	/* timing run, dumped too */
#define REGION6		0x800000u
#define TOPA_TABLE7	0x250000u	/* IP filter run, dumped too */
#define REGION7		0x900000u
#define TOPA_TABLE8	0x260000u	/* TraceStop run, dumped too */
#define REGION8		0xa00000u
#define TOPA_TABLE9	0x270000u	/* 16-bit mode run, dumped too */
#define REGION9		0xb00000u
#define TOPA_TABLE10	0x280000u	/* "ovf": the HLT run, dumped */
#define REGION10	0xc00000u
#define CODE16		0x8000u		/* the 16-bit code, copied here */

#define MSR_PERFCTR0		0xc1
#define MSR_EVNTSEL0		0x186
#define MSR_FIXED_CTR0		0x309
#define MSR_FIXED_CTR_CTRL	0x38d
#define MSR_GLOBAL_STATUS	0x38e
#define MSR_GLOBAL_CTRL		0x38f
#define MSR_GLOBAL_OVF_CTRL	0x390
#define GLOBAL_TOPA_PMI		(1ULL << 55)

#define APIC_SVR	0xf0
#define APIC_LVTPC	0x340
#define LVT_NMI		(4u << 8)
#define LVT_MASKED	(1u << 16)

asm(".text\n"
    ".globl _start\n"
    "_start:\n"
    "	mov $stack_top, %esp\n"
    "	push %ebx\n"			/* the multiboot information */
    "	call main\n"
    "1:	hlt\n"
    "	jmp 1b\n"
    "nmi_entry:\n"			/* NMI (the PMI): nmi_handler() */
    "	pusha\n"
    "	call nmi_handler\n"
    "	popa\n"
    "	iret\n"
    "gp_entry:\n"			/* #GP: count it, skip the 2-byte insn */
    "	incl gp_count\n"
    "	add $4, %esp\n"
    "	addl $2, (%esp)\n"
    "	iret\n"
    "bad_entry:\n"
    "	call bad_exception\n"
    ".globl gp_entry, bad_entry, nmi_entry\n");

char stack[16384] __attribute__((aligned(16)));
asm(".globl stack_top\n.set stack_top, stack + 16384");

volatile unsigned int gp_count;
/* Null, 32-bit code (0x08), data (0x10), 16-bit code at 0, 64K (0x18). */
static uint64_t gdt[4] = {
	0, 0x00cf9a000000ffffULL, 0x00cf92000000ffffULL,
	0x00009a000000ffffULL,
};

/*
 * 16-bit code (for the 0x18 segment, copied to CODE16): a loop of 5
 * iterations (DEC CX is 0x49, as in 32-bit mode, but the operand is 16
 * bits), then a far jump back to the 32-bit segment at mode16_back.
 */
asm(".text\n"
    ".globl code16_start, code16_end\n"
    "code16_start:\n"
    ".code16\n"
    "	mov $5, %cx\n"
    "1:	dec %cx\n"
    "	jnz 1b\n"
    "	ljmpl $0x08, $mode16_back\n"
    ".code32\n"
    "code16_end:\n");

static uint64_t idt[32];

static void set_gate(int vec, void *fn)
{
	uint32_t a = (uint32_t)fn;

	idt[vec] = (a & 0xffff) | (0x08u << 16) |
		   ((uint64_t)0x8e00 << 32) | ((uint64_t)(a >> 16) << 48);
}

static void setup_cpu(void)
{
	extern char gp_entry[], bad_entry[], nmi_entry[];
	struct { uint16_t lim; uint32_t base; } __attribute__((packed)) d;
	int i;

	d.lim = sizeof(gdt) - 1;
	d.base = (uint32_t)gdt;
	asm volatile("lgdt %0\n"
		     "ljmp $0x08, $1f\n"
		     "1: mov $0x10, %%ax\n"
		     "mov %%ax, %%ds\nmov %%ax, %%es\nmov %%ax, %%ss\n"
		     : : "m" (d) : "eax", "memory");
	for (i = 0; i < 32; i++)
		set_gate(i, bad_entry);
	set_gate(13, gp_entry);
	set_gate(2, nmi_entry);
	d.lim = sizeof(idt) - 1;
	d.base = (uint32_t)idt;
	asm volatile("lidt %0" : : "m" (d));
}

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf_fn(unsigned long i)
{
	sink += i;
}

/* Follows leaf_fn (-fno-toplevel-reorder): leaf_fn ends where it starts. */
__attribute__((noinline)) void leaf_fn_end(void)
{
	sink = 0;
}

/* The TraceStop range. */
__attribute__((noinline)) void stop_fn(void)
{
	sink++;
}

static void (*volatile fnptr)(unsigned long) = leaf_fn;

/* Code with conditional branches, calls, returns and indirect calls. */
__attribute__((noinline)) static void traced_work(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		if (i % 3 == 0)
			fnptr(i);
		else
			leaf_fn(i);
	}
}

/*
 * The same work with tracing off and on (OS, ToPA wrapping around one
 * 64K region), timed with the TSC: prints the ratio for the benchmarks.
 */
static void bench(uint64_t ctl)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE4;
	uint32_t off_time = ~0u, on_time = ~0u, d;
	uint64_t t0;
	int i;

	t[0] = REGION4 | (4 << 6);
	t[1] = TOPA_TABLE4 | 1;
	wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE4);
	wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f);
	/* Side by side, best of five each: the host is shared and noisy. */
	for (i = 0; i < 5; i++) {
		t0 = rdtsc();
		traced_work(100000);
		d = (rdtsc() - t0) >> 10;
		if (i && d < off_time)
			off_time = d;
		wrmsr_gp(RTIT_CTL, ctl);
		t0 = rdtsc();
		traced_work(100000);
		d = (rdtsc() - t0) >> 10;
		wrmsr_gp(RTIT_CTL, ctl & ~CTL_TRACEEN);
		if (i && d < on_time)
			on_time = d;
	}
	wrmsr_gp(RTIT_CTL, 0);
	ok(off_time > 0 && on_time > 0, "bench ran");
	puts_("# bench pt_on_vs_off_baremetal = ");
	putu(on_time / off_time);
	puts_(".");
	putu(on_time * 100 / off_time % 100 / 10);
	putu(on_time * 100 / off_time % 10);
	puts_(" x\n");
}

static void set_cr3(uint32_t v)
{
	asm volatile("mov %0, %%cr3" : : "r" (v) : "memory");
}

static void dump(const char *tag, const uint8_t *p, uint64_t len)
{
	unsigned int i;

	puts_(tag);
	puts_("-BEGIN\n");
	for (i = 0; i < len; i++) {
		outb(0x3f8, "0123456789abcdef"[p[i] >> 4]);
		outb(0x3f8, "0123456789abcdef"[p[i] & 15]);
		if (i % 32 == 31)
			outb(0x3f8, '\n');
	}
	puts_("\n");
	puts_(tag);
	puts_("-END\n");
}

static void topa_setup(int stop)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE;

	if (stop) {
		t[0] = REGION2;				/* 4K */
		t[1] = (REGION2 + 0x1000) | (1 << 4);	/* 4K, STOP */
		t[2] = TOPA_TABLE | 1;			/* END */
	} else {
		t[0] = REGION | (4 << 6);		/* 64K */
		t[1] = TOPA_TABLE | 1;			/* END */
	}
}

volatile unsigned int nmi_count, nmi_rearm;
volatile uint64_t nmi_status;
volatile uint64_t nmi_output_mask;	/* OUTPUT_MASK_PTRS at the first NMI */

/*
 * The PMI handler, as Linux's does it: read IA32_PERF_GLOBAL_STATUS,
 * acknowledge through GLOBAL_OVF_CTRL, re-arm the LVT entry (delivery
 * masked it) if nmi_rearm.
 */
void nmi_handler(void)
{
	uint64_t st = rdmsr(MSR_GLOBAL_STATUS);

	if (!nmi_count)
		nmi_output_mask = rdmsr(RTIT_OUTPUT_MASK);
	nmi_count++;
	nmi_status |= st;
	wrmsr_gp(MSR_GLOBAL_OVF_CTRL, st);
	if (nmi_rearm)
		*apic_reg(APIC_LVTPC) = LVT_NMI;
}

/*
 * Trace ITERS iterations of traced_work into the ToPA table at
 * TOPA_TABLE5 (entries already written), from a clean STATUS; returns
 * IA32_RTIT_STATUS after clearing TraceEn.
 */
static uint64_t topa_run(uint64_t ctl, unsigned long iters)
{
	uint64_t st;

	wrmsr_gp(RTIT_CTL, 0);
	wrmsr_gp(RTIT_STATUS, 0);
	wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE5);
	wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f);
	wrmsr_gp(RTIT_CTL, ctl);
	traced_work(iters);
	st = rdmsr(RTIT_STATUS);
	wrmsr_gp(RTIT_CTL, 0);
	return st;
}

/* CPUID leaf 0xA, the counter MSRs, IA32_PERF_GLOBAL_*. */
static void perfmon_tests(void)
{
	uint32_t r[4];

	cpuid_sub(0xa, 0, r);
	ok(r[0] == (2 | 4 << 8 | 48 << 16 | 7 << 24),
	   "CPUID.0A:EAX = version 2, 4 counters, 48 bits, 7 events");
	ok(r[1] == 0x18, "CPUID.0A:EBX = 0x18 (LLC references and misses are not available; pmu-test counts the rest)");
	ok(r[3] == (3 | 48 << 5), "CPUID.0A:EDX = 3 fixed counters, 48 bits");
	cpuid_sub(1, 0, r);
	ok(!(r[2] & (1u << 15)), "CPUID.1:ECX.PDCM = 0 (no PERF_CAPABILITIES)");
	ok(!wrmsr_gp(MSR_PERFCTR0, 0xabcd) && rdmsr(MSR_PERFCTR0) == 0xabcd &&
	   !wrmsr_gp(MSR_PERFCTR0 + 3, 0x1234) &&
	   rdmsr(MSR_PERFCTR0 + 3) == 0x1234, "PERFCTR0/3 read back");
	ok(!wrmsr_gp(MSR_PERFCTR0 + 1, 0x80000000ULL) &&
	   rdmsr(MSR_PERFCTR0 + 1) == 0xffff80000000ULL,
	   "PERFCTR write sign-extends bit 31 to 48 bits");
	ok(!wrmsr_gp(MSR_EVNTSEL0 + 2, 0x53003c) &&
	   rdmsr(MSR_EVNTSEL0 + 2) == 0x53003c &&
	   rdmsr(MSR_PERFCTR0) == 0xabcd, "EVNTSEL2 reads back; PMC0, not enabled, keeps its value");
	ok(wrmsr_gp(MSR_EVNTSEL0, 1ULL << 32), "#GP: EVNTSEL reserved bit 32");
	ok(!wrmsr_gp(MSR_FIXED_CTR0 + 2, 0x123456789aULL) &&
	   rdmsr(MSR_FIXED_CTR0 + 2) == 0x123456789aULL &&
	   !wrmsr_gp(MSR_FIXED_CTR_CTRL, 0xbbb) &&
	   rdmsr(MSR_FIXED_CTR_CTRL) == 0xbbb, "fixed counters and FIXED_CTR_CTRL read back");
	ok(!wrmsr_gp(MSR_GLOBAL_CTRL, 0x70000000fULL) &&
	   rdmsr(MSR_GLOBAL_CTRL) == 0x70000000fULL, "GLOBAL_CTRL reads back");
	ok(wrmsr_gp(MSR_GLOBAL_CTRL, 1ULL << 4), "#GP: GLOBAL_CTRL bit 4 (no 5th counter)");
	ok(wrmsr_gp(MSR_GLOBAL_STATUS, 0), "#GP: GLOBAL_STATUS is read-only");
	ok(rdmsr(MSR_GLOBAL_STATUS) == 0 && rdmsr(MSR_GLOBAL_OVF_CTRL) == 0,
	   "GLOBAL_STATUS and OVF_CTRL read 0");
	wrmsr_gp(MSR_GLOBAL_CTRL, 0);
	wrmsr_gp(MSR_FIXED_CTR_CTRL, 0);
	wrmsr_gp(MSR_EVNTSEL0 + 2, 0);
}

/* ToPA INT: GLOBAL_STATUS bit 55 and the LVT performance-counter NMI. */
static void pmi_tests(uint64_t ctl)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE5;
	uint64_t st;

	*apic_reg(APIC_SVR) = 0x1ff;
	/* INT on both 4K regions, STOP on the second. */
	t[0] = REGION5 | (1 << 2);
	t[1] = (REGION5 + 0x1000) | (1 << 2) | (1 << 4);
	t[2] = TOPA_TABLE5 | 1;

	/* Masked: bit 55 set, no NMI; OVF_CTRL clears the bit. */
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	nmi_count = 0;
	st = topa_run(ctl, 200000);
	ok(st & (1 << 5), "INT+STOP run stopped");
	ok(rdmsr(MSR_GLOBAL_STATUS) == GLOBAL_TOPA_PMI,
	   "GLOBAL_STATUS bit 55 set by a full INT region");
	ok(nmi_count == 0, "no NMI while LVTPC is masked");
	ok(!wrmsr_gp(MSR_GLOBAL_OVF_CTRL, GLOBAL_TOPA_PMI) &&
	   rdmsr(MSR_GLOBAL_STATUS) == 0, "OVF_CTRL bit 55 clears it");

	/* Unmasked, handler re-arms: one NMI per INT region crossed. */
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	nmi_count = 0;
	nmi_status = 0;
	nmi_rearm = 1;
	st = topa_run(ctl, 200000);
	ok(st & (1 << 5), "INT+STOP run stopped again");
	ok(nmi_count == 2, "two INT regions filled: two NMIs");
	ok(nmi_status == GLOBAL_TOPA_PMI, "the handler saw GLOBAL_STATUS = bit 55");
	ok(rdmsr(MSR_GLOBAL_STATUS) == 0, "handler's OVF_CTRL write cleared it");
	ok(*apic_reg(APIC_LVTPC) == LVT_NMI, "LVTPC unmasked (re-armed)");

	/* Handler does not re-arm: delivery masks LVTPC, one NMI only. */
	nmi_count = 0;
	nmi_rearm = 0;
	st = topa_run(ctl, 200000);
	ok(nmi_count == 1, "delivery masks LVTPC: one NMI for two INT regions");
	ok(*apic_reg(APIC_LVTPC) == (LVT_NMI | LVT_MASKED), "LVTPC masked after delivery");
	ok(rdmsr(MSR_GLOBAL_STATUS) == GLOBAL_TOPA_PMI,
	   "second INT region: bit 55 set again, no NMI");
	wrmsr_gp(MSR_GLOBAL_OVF_CTRL, GLOBAL_TOPA_PMI);

	/* No INT: no bit 55, no NMI. */
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	t[0] = REGION5;
	t[1] = (REGION5 + 0x1000) | (1 << 4);
	nmi_count = 0;
	st = topa_run(ctl, 200000);
	ok(st & (1 << 5) && nmi_count == 0 && rdmsr(MSR_GLOBAL_STATUS) == 0,
	   "STOP without INT: stopped, no PMI");
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
}

/*
 * Timing packets: TSC, MTC (MTCFreq 3) with TMA, CYC (CycThresh 2), CBR,
 * PSB+ every 4K (PSBFreq 1) in one 64K region; the host checks the
 * packets against this RTIT_CTL value (msr-test.sh).
 */
#define TIMING_CTL	(CTL_MTCEN | CTL_MTCFREQ(3) | CTL_CYCEN | \
			 CTL_CYCTHRESH(2) | CTL_PSBFREQ(1))

/*
 * IP filtering: ADDR0 = [leaf_fn, leaf_fn_end - 1] as a FilterEn range;
 * traced_work(N) enters it N times (by CALL and by indirect CALL) and
 * leaves it by RET, so the trace holds leaf_fn's instructions only, each
 * run between a TIP.PGE and a TIP.PGD (msr-test.sh decodes it).
 */
static void filter_run(uint64_t ctl, uint64_t *len)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE7;
	uint32_t a = (uint32_t)leaf_fn, b = (uint32_t)leaf_fn_end - 1;
	uint64_t st, st_in;

	t[0] = REGION7 | (4 << 6);
	t[1] = TOPA_TABLE7 | 1;
	wrmsr_gp(RTIT_CTL, 0);
	ok(b > a && b - a < 64, "leaf_fn_end follows leaf_fn");
	ok(!wrmsr_gp(RTIT_ADDR0_A, a) && !wrmsr_gp(RTIT_ADDR0_B, b) &&
	   rdmsr(RTIT_ADDR0_A) == a && rdmsr(RTIT_ADDR0_B) == b,
	   "ADDR0_A/B hold leaf_fn's range");
	ok(!wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE7) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) &&
	   !wrmsr_gp(RTIT_CTL, ctl | CTL_ADDR_CFG(0, 1)),
	   "enable TraceEn with ADDR0_CFG = 1 (FilterEn)");
	st = rdmsr(RTIT_STATUS);
	ok(wrmsr_gp(RTIT_ADDR0_A, a), "#GP: ADDR0_A while TraceEn");
	ok(wrmsr_gp(RTIT_ADDR1_B, 0), "#GP: ADDR1_B while TraceEn");
	traced_work(500);
	/* FilterEn as of the last branch: the RET out of leaf_fn. */
	st_in = rdmsr(RTIT_STATUS);
	wrmsr_gp(RTIT_CTL, 0);
	ok((st & 0xb) == 0xa, "STATUS: FilterEn clear outside the range, "
	   "ContextEn and TriggerEn set");
	ok((st_in & 0xb) == 0xa, "STATUS: FilterEn clear after leaving it");
	*len = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	ok(*len > 100 && *len < 0x10000, "IP filter run produced output");
	wrmsr_gp(RTIT_ADDR0_A, 0);
	wrmsr_gp(RTIT_ADDR0_B, 0);
}

/*
 * TraceStop: ADDR1 = [stop_fn, stop_fn] as a TraceStop range; tracing
 * stops at the CALL to stop_fn after leaf_fn ran STOP_AFTER + 1 times:
 * TIP.PGD and TraceStop, STATUS.Stopped, nothing after.
 */
#define STOP_AFTER	150

static void tracestop_run(uint64_t ctl, uint64_t *len)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE8;
	const uint8_t *p = (const uint8_t *)REGION8;
	uint64_t st, len2;
	unsigned long i;

	t[0] = REGION8 | (4 << 6);
	t[1] = TOPA_TABLE8 | 1;
	wrmsr_gp(RTIT_CTL, 0);
	wrmsr_gp(RTIT_STATUS, 0);
	ok(!wrmsr_gp(RTIT_ADDR1_A, (uint32_t)stop_fn) &&
	   !wrmsr_gp(RTIT_ADDR1_B, (uint32_t)stop_fn) &&
	   !wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE8) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) &&
	   !wrmsr_gp(RTIT_CTL, ctl | CTL_ADDR_CFG(1, 2)),
	   "enable TraceEn with ADDR1_CFG = 2 (TraceStop)");
	ok((rdmsr(RTIT_STATUS) & 0x2b) == 0xb,
	   "STATUS: FilterEn set without a FilterEn range, not Stopped");
	for (i = 0; i < 300; i++) {
		leaf_fn(i);
		if (i == STOP_AFTER)
			stop_fn();
	}
	st = rdmsr(RTIT_STATUS);
	*len = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	traced_work(100);
	len2 = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	wrmsr_gp(RTIT_CTL, 0);
	ok((st & 0x28) == 0x20, "STATUS.Stopped set, TriggerEn clear on "
	   "entering the TraceStop range");
	ok(*len > 100 && *len < 0x10000 && len2 == *len,
	   "no output after TraceStop");
	ok(*len >= 4 && p[*len - 2] == 0x02 && p[*len - 1] == 0x83,
	   "the trace ends with a TraceStop packet");
	/* TIP.PGD, IPBytes 1: stop_fn[15:0] (the last IP shares 63:16). */
	ok(*len >= 5 && p[*len - 5] == 0x21 &&
	   (p[*len - 4] | p[*len - 3] << 8) == ((uint32_t)stop_fn & 0xffff),
	   "TIP.PGD with stop_fn's IP before it");
	wrmsr_gp(RTIT_STATUS, 0);
	wrmsr_gp(RTIT_ADDR1_A, 0);
	wrmsr_gp(RTIT_ADDR1_B, 0);
}

/*
 * MODE.Exec 16-bit: a far jump to the 16-bit code segment (CS.D = 0,
 * CS.L = 0) and back, traced: MODE.Exec 16-bit, TIP to CODE16 (an
 * effective address: the segment's offset), TNT of the loop, MODE.Exec
 * 32-bit, TIP to mode16_back (msr-test.sh checks the packets).
 */
__attribute__((noinline)) static void mode16_run(uint64_t ctl, uint64_t *len)
{
	extern char code16_start[], code16_end[];
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE9;
	uint8_t *dst = (uint8_t *)CODE16;
	int i;

	for (i = 0; i < code16_end - code16_start; i++)
		dst[i] = code16_start[i];
	t[0] = REGION9 | (4 << 6);
	t[1] = TOPA_TABLE9 | 1;
	wrmsr_gp(RTIT_CTL, 0);
	ok(!wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE9) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) && !wrmsr_gp(RTIT_CTL, ctl),
	   "enable TraceEn for the 16-bit mode run");
	asm volatile("ljmp $0x18, $" "0x8000" "\n"
		     ".globl mode16_back\n"
		     "mode16_back:\n"
		     : : : "ecx", "memory", "cc");
	wrmsr_gp(RTIT_CTL, 0);
	*len = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	ok(*len > 20 && *len < 0x10000, "16-bit mode run produced output");
}

/*
 * "ovf": trace a HLT that waits for an NMI.  migrate.sh migrates the VM
 * meanwhile; the emulator's state does not migrate, so the trace must
 * carry OVF and a FUP (full IP) with the IP after the HLT, then the NMI:
 * FUP there again and TIP to nmi_entry.
 */
__attribute__((noinline)) static void ovf_run(uint64_t ctl)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE10;
	uint64_t len;

	t[0] = REGION10 | (4 << 6);
	t[1] = TOPA_TABLE10 | 1;
	ok(!wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE10) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) && !wrmsr_gp(RTIT_CTL, ctl),
	   "ovf: enable TraceEn");
	/* Reading an RTIT MSR writes out what is staged: PSB+, TIP.PGE. */
	ok(rdmsr(RTIT_OUTPUT_MASK) >> 32 > 16, "ovf: PSB+ written out");
	puts_("PT-OVF-HALTED\n");
	while (!nmi_count)
		asm volatile("hlt" : : : "memory");
	wrmsr_gp(RTIT_CTL, 0);
	len = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	ok(nmi_count == 1, "ovf: woken by one NMI");
	ok(len > 20 && len < 0x10000, "ovf: the trace is in the region");
	dump("PT-HEXOVF", (const uint8_t *)REGION10, len);
	finish();
}

static void timing_run(uint64_t ctl, uint64_t *len)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE6;

	t[0] = REGION6 | (4 << 6);
	t[1] = TOPA_TABLE6 | 1;
	uint64_t t0, t1;

	wrmsr_gp(RTIT_CTL, 0);
	t0 = rdtsc();
	ok(!wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE6) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) &&
	   !wrmsr_gp(RTIT_CTL, ctl | TIMING_CTL),
	   "enable TraceEn with MTC, CYC, PSBFreq");
	traced_work(3000);
	wrmsr_gp(RTIT_CTL, 0);
	t1 = rdtsc();
	puts_("# PT-CTL6 ");
	putu_base((unsigned long)(ctl | TIMING_CTL), 1);
	puts_("\n");
	/* RDTSC before and after: every TSC packet must lie in between. */
	puts_("# PT-TSC6 ");
	putu_base((unsigned long)(t0 >> 32), 1);
	puts_(" ");
	putu_base((unsigned long)t0, 1);
	puts_(" ");
	putu_base((unsigned long)(t1 >> 32), 1);
	puts_(" ");
	putu_base((unsigned long)t1, 1);
	puts_("\n");
	*len = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	ok((rdmsr(RTIT_OUTPUT_MASK) & 0xffffffff) == 0x7f &&
	   *len > 8192 && *len < 0x10000,
	   "timing run: more than two PSB periods, within the region");
}

/* Enable and at once disable tracing, output at @mask; OUTPUT_MASK_PTRS. */
static uint64_t enable_disable(uint64_t ctl, uint64_t mask)
{
	wrmsr_gp(RTIT_CTL, 0);
	wrmsr_gp(RTIT_STATUS, 0);
	wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE5);
	wrmsr_gp(RTIT_OUTPUT_MASK, mask);
	wrmsr_gp(RTIT_CTL, ctl);
	wrmsr_gp(RTIT_CTL, 0);
	return rdmsr(RTIT_OUTPUT_MASK);
}

/*
 * A region that fills is left at once for the next entry (SDM "Table of
 * Physical Addresses (ToPA)"), through an END to its table: an enable and
 * disable write the same S bytes each time, so started S bytes before the
 * end of a region they leave the pointers at the next entry, offset 0.
 * The offset equals the region size only after a ToPA stop, and going on
 * from there with Stopped clear is an operational error ("ToPA STOP",
 * "ToPA Errors").
 */
static void topa_fill_tests(uint64_t ctl)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE5;
	uint64_t m, m2, s, st;

	t[0] = REGION5;
	t[1] = REGION5 + 0x1000;
	t[2] = TOPA_TABLE5 | 1;
	m = enable_disable(ctl, 0x7f);
	m2 = enable_disable(ctl, 0x7f);
	s = m >> 32;
	ok((m & 0xffffffff) == 0x7f && s > 16 && s < 0x1000 && m2 == m,
	   "enable + disable write the same bytes each time");
	puts_("# enable + disable: ");
	putu(s);
	puts_(" bytes\n");
	m = enable_disable(ctl, ((0x1000 - s) << 32) | 0x7f);
	ok(m == ((1 << 7) | 0x7f) && !(rdmsr(RTIT_STATUS) & 0x30),
	   "a region filled to its last byte is left at once: entry 1, offset 0");
	t[1] = TOPA_TABLE5 | 1;
	m = enable_disable(ctl, ((0x1000 - s) << 32) | 0x7f);
	ok(m == 0x7f && !(rdmsr(RTIT_STATUS) & 0x30),
	   "... and through an END: entry 0 of its table, offset 0");

	t[0] = REGION5 | (1 << 4);
	st = topa_run(ctl, 200000);
	m = rdmsr(RTIT_OUTPUT_MASK);
	ok((st & (1 << 5)) && m == ((0x1000ULL << 32) | 0x7f),
	   "ToPA stop: Stopped, offset = region size");
	wrmsr_gp(RTIT_STATUS, 0);
	wrmsr_gp(RTIT_CTL, ctl);
	traced_work(2000);
	st = rdmsr(RTIT_STATUS);
	wrmsr_gp(RTIT_CTL, 0);
	ok((st & (1 << 4)) && !(st & (1 << 5)) && !(st & (1 << 3)) &&
	   rdmsr(RTIT_OUTPUT_MASK) == m,
	   "going on from there with Stopped clear: STATUS.Error, TriggerEn clear, pointers kept");
	wrmsr_gp(RTIT_STATUS, 0);
}

/* Malformed ToPA tables and output outside memory set STATUS.Error. */
static void topa_error_tests(uint64_t ctl)
{
	static const struct {
		uint64_t e0, e1;
		uint32_t idx;		/* entry at fault */
		const char *name;
		uint32_t table;		/* its table, if not TOPA_TABLE5 */
	} bad[] = {
		{ REGION5 | (1 << 1), TOPA_TABLE5 | 1, 0, "reserved bit 1" },
		{ REGION5 | (1ULL << 10), TOPA_TABLE5 | 1, 0, "reserved bit 10" },
		{ REGION5 | (1ULL << 52), TOPA_TABLE5 | 1, 0, "base above MAXPHYADDR" },
		{ (REGION5 + 0x1000) | (1 << 6), TOPA_TABLE5 | 1, 0,
		  "8K region not 8K-aligned" },
		{ TOPA_TABLE5 | 1, REGION5, 0, "END in entry 0" },
		{ REGION5, TOPA_TABLE5 | 1 | (1 << 2), 1, "INT on an END entry" },
		{ REGION5, TOPA_TABLE5 | 1 | (1 << 4), 1, "STOP on an END entry" },
		{ 0xc0000000u, TOPA_TABLE5 | 1, 0, "region outside RAM" },
		{ REGION5, 0xc0000000u | 1, 0, "END to a table outside RAM",
		  0xc0000000u },
	};
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE5;
	uint64_t st, mask;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t[0] = bad[i].e0;
		t[1] = bad[i].e1;
		st = topa_run(ctl, 20000);
		mask = rdmsr(RTIT_OUTPUT_MASK);
		test_n++;
		if (!(st & (1 << 4)) || (st & (1 << 3)) ||
		    ((mask >> 7) & 0x1ffffff) != bad[i].idx ||
		    rdmsr(RTIT_OUTPUT_BASE) !=
		    (bad[i].table ? bad[i].table : TOPA_TABLE5)) {
			test_fail++;
			puts_("not ");
		}
		puts_("ok ");
		putu(test_n);
		puts_(" ToPA error: ");
		puts_(bad[i].name);
		puts_(" -> STATUS.Error, TriggerEn clear, pointer at the entry\n");
	}
	wrmsr_gp(RTIT_STATUS, 0);
	/* A valid table wraps forever, without Error. */
	t[0] = REGION5;
	t[1] = TOPA_TABLE5 | 1;
	st = topa_run(ctl, 200000);
	ok(!(st & 0x30) && (st & (1 << 3)), "4K region wrapping: no Error, no Stop");
	wrmsr_gp(RTIT_STATUS, 0);
}

/*
 * "single": a CPU with ToPA tables of one output entry
 * (-cpu ...,intel-pt-topa-multi=off; SDM "Single Output Region ToPA
 * Implementation"): CPUID.14.0:ECX[1] = 0; entry 1 must be an END back to
 * the table, anything else there is a ToPA error; the PMI of an INT region
 * comes before the region is full. Only these run, then msr-test ends.
 */
static void single_entry_run(uint64_t ctl)
{
	volatile uint64_t *t = (uint64_t *)TOPA_TABLE5;
	uint64_t st, off;
	uint32_t r[4];

	cpuid_sub(0x14, 0, r);
	ok(r[2] == 5, "single: CPUID.14.0:ECX = 5 (ToPA, single-range; one entry per table)");

	*apic_reg(APIC_SVR) = 0x1ff;
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	nmi_rearm = 1;

	/* One 4K region and an END back to the table: wraps in place. */
	t[0] = REGION5;
	t[1] = TOPA_TABLE5 | 1;
	st = topa_run(ctl, 200000);
	off = rdmsr(RTIT_OUTPUT_MASK);
	ok(!(st & 0x30) && (st & (1 << 3)) &&
	   rdmsr(RTIT_OUTPUT_BASE) == TOPA_TABLE5 && !((off >> 7) & 0x1ffffff),
	   "single: one entry, END back to the table: wraps, no Error, no Stop");
	wrmsr_gp(RTIT_STATUS, 0);

	/* INT and STOP: the PMI before the region is full, then the stop. */
	t[0] = REGION5 | (1 << 2) | (1 << 4);
	nmi_count = 0;
	nmi_status = 0;
	st = topa_run(ctl, 200000);
	off = nmi_output_mask >> 32;
	ok(st & (1 << 5), "single: INT+STOP region stopped");
	ok(nmi_count == 1 && nmi_status == GLOBAL_TOPA_PMI,
	   "single: one PMI, GLOBAL_STATUS bit 55");
	puts_("# single: output offset at the PMI ");
	putu(off);
	puts_(" of 4096\n");
	ok(off >= 4096 - 512 && off <= 4096 - 256,
	   "single: the PMI came before the region was full, 256 to 512 bytes before");
	ok((rdmsr(RTIT_OUTPUT_MASK) >> 32) == 4096, "single: stopped with the region full");
	wrmsr_gp(RTIT_STATUS, 0);

	/* Entry 1: anything but an END back to the table is a ToPA error. */
	t[0] = REGION5;
	t[1] = REGION5 + 0x1000;
	st = topa_run(ctl, 20000);
	ok((st & (1 << 4)) && !(st & (1 << 3)),
	   "single: ToPA error: a second output entry");
	wrmsr_gp(RTIT_STATUS, 0);
	t[1] = TOPA_TABLE4 | 1;
	st = topa_run(ctl, 20000);
	ok((st & (1 << 4)) && !(st & (1 << 3)),
	   "single: ToPA error: entry 1's END points to another table");
	wrmsr_gp(RTIT_STATUS, 0);

	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	finish();
}

int main(const uint32_t *mbi)
{
	uint64_t ctl = CTL_TRACEEN | CTL_OS | CTL_TOPA | CTL_BRANCHEN |
		       CTL_TSCEN;
	uint32_t r[4];
	uint64_t v, off, v6, v7, v8, v9;
	const uint8_t *p;

	setup_cpu();
	if (cmdline_has(mbi, "ovf"))
		ovf_run(ctl);
	if (cmdline_has(mbi, "single"))
		single_entry_run(ctl);

	cpuid_sub(0, 0, r);
	ok(r[0] >= 0x16 && r[1] == 0x756e6547, "GenuineIntel, CPUID level >= 0x16");
	cpuid_sub(1, 0, r);
	ok(((r[0] >> 8) & 0xf) == 6 && (((r[0] >> 12) & 0xf0) | ((r[0] >> 4) & 0xf)) == 158,
	   "family 6 model 158");
	cpuid_sub(7, 0, r);
	ok(r[1] & (1u << 25), "CPUID.7.0:EBX[25] intel-pt");
	cpuid_sub(0x14, 0, r);
	ok(r[0] == 1 && r[1] == 0xf && r[2] == 7 && r[3] == 0,
	   "CPUID.14.0 = {1, cr3 filter+psb/cyc+ip filter+mtc, topa+multi+single}");
	cpuid_sub(0x14, 1, r);
	ok(r[0] == 0x02490002 && r[1] == 0x003f3fff && !r[2] && !r[3],
	   "CPUID.14.1 = {MTC periods 0/3/6/9, 2 ranges; CYC 0-13, PSB 2K-64K}");
	cpuid_sub(0x15, 0, r);
	ok(r[0] == 2 && r[1] == 300 && r[2] == 0,
	   "CPUID.15 = {2, 300, ECX 0}: TSC/CTC = 150");
	cpuid_sub(0x16, 0, r);
	ok(r[0] == 3600 && r[1] == 3600 && r[2] == 100,
	   "CPUID.16 = {3600, 3600, 100} MHz");
	ok(((rdmsr(MSR_PLATFORM_INFO) >> 8) & 0xff) == 36,
	   "MSR_PLATFORM_INFO[15:8] = 36");

	ok(wrmsr_gp(RTIT_CTL, 1ULL << 4), "#GP: CTL.PwrEvtEn");
	ok(wrmsr_gp(RTIT_CTL, 1ULL << 5), "#GP: CTL.FUPonPTW");
	ok(wrmsr_gp(RTIT_CTL, 1ULL << 6), "#GP: CTL.FabricEn");
	ok(wrmsr_gp(RTIT_CTL, 1ULL << 12), "#GP: CTL.PTWEn");
	ok(wrmsr_gp(RTIT_CTL, CTL_MTCEN | CTL_MTCFREQ(1)),
	   "#GP: CTL.MTCFreq 1 (not in CPUID.14.1:EAX[31:16])");
	ok(wrmsr_gp(RTIT_CTL, CTL_MTCFREQ(10)), "#GP: CTL.MTCFreq 10");
	ok(wrmsr_gp(RTIT_CTL, CTL_CYCEN | CTL_CYCTHRESH(14)),
	   "#GP: CTL.CycThresh 14 (not in CPUID.14.1:EBX[15:0])");
	ok(wrmsr_gp(RTIT_CTL, CTL_PSBFREQ(6)),
	   "#GP: CTL.PSBFreq 6 (not in CPUID.14.1:EBX[31:16])");
	ok(wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(0, 3)), "#GP: CTL.ADDR0_CFG 3");
	ok(wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(0, 15)), "#GP: CTL.ADDR0_CFG 15");
	ok(wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(1, 3)), "#GP: CTL.ADDR1_CFG 3");
	ok(wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(2, 1)),
	   "#GP: CTL.ADDR2_CFG 1 (2 ranges)");
	ok(wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(3, 2)),
	   "#GP: CTL.ADDR3_CFG 2 (2 ranges)");
	ok(!wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(0, 1) | CTL_ADDR_CFG(1, 2)) &&
	   rdmsr(RTIT_CTL) == (CTL_ADDR_CFG(0, 1) | CTL_ADDR_CFG(1, 2)) &&
	   !wrmsr_gp(RTIT_CTL, CTL_ADDR_CFG(0, 2) | CTL_ADDR_CFG(1, 1)) &&
	   !wrmsr_gp(RTIT_CTL, 0), "no #GP: ADDR0_CFG, ADDR1_CFG 1 and 2");
	ok(!wrmsr_gp(RTIT_ADDR0_A, 0xffff800000001000ULL) &&
	   rdmsr(RTIT_ADDR0_A) == 0xffff800000001000ULL &&
	   !wrmsr_gp(RTIT_ADDR0_B, 0x00007fffffffffffULL) &&
	   rdmsr(RTIT_ADDR0_B) == 0x00007fffffffffffULL &&
	   !wrmsr_gp(RTIT_ADDR1_A, 0x1234) && rdmsr(RTIT_ADDR1_A) == 0x1234 &&
	   !wrmsr_gp(RTIT_ADDR1_B, 0x5678) && rdmsr(RTIT_ADDR1_B) == 0x5678,
	   "ADDR0_A/B, ADDR1_A/B read back canonical addresses");
	ok(wrmsr_gp(RTIT_ADDR0_A, 0x0000800000000000ULL),
	   "#GP: ADDR0_A not canonical");
	ok(wrmsr_gp(RTIT_ADDR1_B, 0x8000000000000000ULL),
	   "#GP: ADDR1_B not canonical");
	wrmsr_gp(RTIT_ADDR0_A, 0);
	wrmsr_gp(RTIT_ADDR0_B, 0);
	wrmsr_gp(RTIT_ADDR1_A, 0);
	wrmsr_gp(RTIT_ADDR1_B, 0);
	ok(wrmsr_gp(RTIT_CTL, 1ULL << 55), "#GP: CTL.DisTNT");
	ok(wrmsr_gp(RTIT_CTL, 1ULL << 63), "#GP: CTL reserved bit 63");
	ok(!wrmsr_gp(RTIT_CTL, CTL_OS | CTL_USER | CTL_CR3FILTER | CTL_TOPA |
		     CTL_TSCEN | CTL_DISRETC | CTL_BRANCHEN | CTL_CYCEN |
		     CTL_MTCEN | CTL_MTCFREQ(9) | CTL_CYCTHRESH(13) |
		     CTL_PSBFREQ(5)) &&
	   !wrmsr_gp(RTIT_CTL, CTL_MTCFREQ(3)) &&
	   !wrmsr_gp(RTIT_CTL, CTL_MTCFREQ(6)) &&
	   !wrmsr_gp(RTIT_CTL, CTL_CYCTHRESH(1)) &&
	   !wrmsr_gp(RTIT_CTL, 0), "no #GP: every enumerated CTL bit and value");
	ok(wrmsr_gp(RTIT_OUTPUT_BASE, 0x40), "#GP: OUTPUT_BASE[6:0]");
	ok(wrmsr_gp(RTIT_OUTPUT_BASE, 1ULL << 52), "#GP: OUTPUT_BASE above MAXPHYADDR");
	ok(wrmsr_gp(RTIT_CR3_MATCH, 0x10), "#GP: CR3_MATCH[4:0]");
	ok(!wrmsr_gp(RTIT_CR3_MATCH, 0x1000) && rdmsr(RTIT_CR3_MATCH) == 0x1000,
	   "CR3_MATCH reads back");
	ok(wrmsr_gp(RTIT_STATUS, 1ULL << 8), "#GP: STATUS reserved bit");
	ok(!wrmsr_gp(RTIT_STATUS, 1ULL << 5) && rdmsr(RTIT_STATUS) == 1ULL << 5 &&
	   !wrmsr_gp(RTIT_STATUS, 0), "STATUS.Stopped writable");

	/* Trace 2000 iterations into a 64K region. */
	topa_setup(0);
	ok(!wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) && !wrmsr_gp(RTIT_CTL, ctl),
	   "enable TraceEn with ToPA");
	v = rdmsr(RTIT_STATUS);
	ok((v & 0xb) == 0xb, "STATUS: FilterEn, ContextEn, TriggerEn while tracing");
	ok(wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE), "#GP: OUTPUT_BASE while TraceEn");
	ok(wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f), "#GP: OUTPUT_MASK_PTRS while TraceEn");
	ok(wrmsr_gp(RTIT_STATUS, 0), "#GP: STATUS while TraceEn");
	ok(wrmsr_gp(RTIT_CR3_MATCH, 0), "#GP: CR3_MATCH while TraceEn");
	ok(wrmsr_gp(RTIT_CTL, ctl | CTL_USER), "#GP: CTL change keeping TraceEn");
	ok(!wrmsr_gp(RTIT_CTL, ctl), "no #GP: CTL rewritten unchanged");
	traced_work(2000);
	ok(!wrmsr_gp(RTIT_CTL, (ctl & ~CTL_TRACEEN) | CTL_USER),
	   "no #GP: clearing TraceEn while changing other bits");
	v = rdmsr(RTIT_OUTPUT_MASK);
	off = v >> 32;
	ok((v & 0xffffffff) == 0x7f && off > 1000 && off < 0x10000,
	   "OUTPUT_MASK_PTRS: entry 0, offset of the data");
	p = (const uint8_t *)REGION;
	ok(p[0] == 0x02 && p[1] == 0x82 && p[14] == 0x02 && p[15] == 0x82,
	   "output starts with PSB");
	ok(rdmsr(RTIT_STATUS) == 0, "STATUS clean after the run");

	/* STOP: two 4K regions, the second marked STOP. */
	topa_setup(1);
	wrmsr_gp(RTIT_CTL, 0);
	ok(!wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) && !wrmsr_gp(RTIT_CTL, ctl),
	   "enable TraceEn with a STOP entry");
	traced_work(200000);
	v = rdmsr(RTIT_STATUS);
	ok(v & (1 << 5), "STATUS.Stopped once the STOP region is full");
	ok(!(v & (1 << 3)), "TriggerEn clear once stopped");
	v = rdmsr(RTIT_OUTPUT_MASK);
	ok(v == ((0x1000ULL << 32) | (1 << 7) | 0x7f),
	   "OUTPUT_MASK_PTRS: entry 1, offset = region size");
	ok(rdmsr(RTIT_OUTPUT_BASE) == TOPA_TABLE, "OUTPUT_BASE: same table");
	wrmsr_gp(RTIT_CTL, 0);
	ok(!wrmsr_gp(RTIT_STATUS, 0), "STATUS cleared after stopping");

	/*
	 * CR3 filter: only the 300 iterations run with CR3 == CR3_MATCH are
	 * traced (TIP.PGE and TIP.PGD at the MOV CR3s, PIP in between).
	 */
	((volatile uint64_t *)TOPA_TABLE3)[0] = REGION3 | (4 << 6);
	((volatile uint64_t *)TOPA_TABLE3)[1] = TOPA_TABLE3 | 1;
	set_cr3(0x2000);
	ok(!wrmsr_gp(RTIT_CR3_MATCH, 0x1000) &&
	   !wrmsr_gp(RTIT_OUTPUT_BASE, TOPA_TABLE3) &&
	   !wrmsr_gp(RTIT_OUTPUT_MASK, 0x7f) &&
	   !wrmsr_gp(RTIT_CTL, ctl | CTL_CR3FILTER), "enable with CR3Filter");
	ok(!(rdmsr(RTIT_STATUS) & 2), "ContextEn clear while CR3 != CR3_MATCH");
	traced_work(100);
	set_cr3(0x1000);
	traced_work(300);
	set_cr3(0x1000);
	set_cr3(0x2000);
	traced_work(100);
	wrmsr_gp(RTIT_CTL, 0);
	set_cr3(0);
	v = rdmsr(RTIT_OUTPUT_MASK) >> 32;
	ok(v > 100 && v < 0x10000, "CR3 filter run produced output");

	timing_run(ctl, &v6);
	filter_run(ctl, &v7);
	tracestop_run(ctl, &v8);
	mode16_run(ctl, &v9);

	perfmon_tests();
	pmi_tests(ctl);
	topa_fill_tests(ctl);
	topa_error_tests(ctl);

	bench(ctl);
	dump("PT-HEX", p, off);
	dump("PT-HEX3", (const uint8_t *)REGION3, v);
	dump("PT-HEX6", (const uint8_t *)REGION6, v6);
	dump("PT-HEX7", (const uint8_t *)REGION7, v7);
	dump("PT-HEX8", (const uint8_t *)REGION8, v8);
	dump("PT-HEX9", (const uint8_t *)REGION9, v9);
	finish();
	return 0;
}
