// SPDX-License-Identifier: GPL-2.0
/*
 * Bare-metal (multiboot, 32-bit, no paging) check of the emulated Branch
 * Trace Store (tools/testing/itrace/qemu/target/i386/tcg/sysemu/bts.c)
 * against the Intel SDM (Vol. 3B "Debug Store", "Branch Trace Store",
 * "IA32_DEBUGCTL MSR"): CPUID.1 DS, DTES64 and DS-CPL; IA32_MISC_ENABLE
 * bits 11 and 12, read-only; IA32_DEBUGCTL and IA32_DS_AREA, their reset
 * values and the #GP on each reserved bit and a non-canonical address;
 * the records of near JMP (direct, indirect), CALL, RET, a taken Jcc, a
 * far JMP, and none for a Jcc not taken; at CPL 3 and 0, an exception
 * (UD2), IRET, SYSENTER, SYSEXIT and INT n, with each CPL filter; the
 * circular buffer; with BTINT, exactly one PMI, when the index in memory
 * has reached the threshold, no IA32_PERF_GLOBAL_STATUS bit, and no
 * record past the absolute maximum.  Prints TAP on COM1; exits through
 * isa-debug-exit.  Needs "-cpu ...,+ds".
 */
#include <stdint.h>

#include "baremetal.h"

#define MSR_MISC_ENABLE		0x1a0
#define MSR_DEBUGCTL		0x1d9
#define MSR_DS_AREA		0x600
#define MSR_GLOBAL_STATUS	0x38e
#define MSR_SYSENTER_CS		0x174
#define MSR_SYSENTER_ESP	0x175
#define MSR_SYSENTER_EIP	0x176

#define TR		(1u << 6)
#define BTS		(1u << 7)
#define BTINT		(1u << 8)
#define OFF_OS		(1u << 9)
#define OFF_USR		(1u << 10)
/* LBR, BTF, 6-14 */
#define DEBUGCTL_VALID	0x7fc3u

#define APIC_SVR	0xf0
#define APIC_LVTPC	0x340
#define LVT_NMI		(4u << 8)
#define LVT_MASKED	(1u << 16)

asm(".text\n"
    ".globl _start\n"
    "_start:\n"
    "	mov $stack_top, %esp\n"
    "	push %ebx\n"
    "	call main\n"
    "1:	hlt\n"
    "	jmp 1b\n"
    /*
     * The BTS PMI: no branch before the IRET.  Saves the index in memory
     * and IA32_PERF_GLOBAL_STATUS, re-arms the LVT entry (delivery
     * masked it), so that a second PMI would be counted too.
     */
    "nmi_entry:\n"
    "	pusha\n"
    "	incl nmi_count\n"
    "	mov ds_area + 8, %eax\n"
    "	mov %eax, nmi_index\n"
    "	mov $0x38e, %ecx\n"
    "	rdmsr\n"
    "	mov %eax, nmi_status\n"
    "	mov %edx, nmi_status + 4\n"
    "	movl $0x400, 0xfee00340\n"
    "	popa\n"
    "nmi_iret:\n"
    "	iret\n"
    "gp_entry:\n"
    "	incl gp_count\n"
    "	add $4, %esp\n"
    "	addl $2, (%esp)\n"
    "	iret\n"
    /* #UD: count it, skip the UD2 */
    "ud_entry:\n"
    "	incl ud_count\n"
    "	addl $2, (%esp)\n"
    "ud_iret:\n"
    "	iret\n"
    "bad_entry:\n"
    "	call bad_exception\n"
    /*
     * bts_run_user(fn): BTS on with DEBUGCTL = bts_ctl, then IRET to fn
     * at CPL 3; its INT $0x80 comes back to user_return, which turns BTS
     * off first.
     */
    "bts_run_user:\n"
    "	push %ebp\n"
    "	push %ebx\n"
    "	push %esi\n"
    "	push %edi\n"
    "	mov %esp, kernel_esp\n"
    "	mov 20(%esp), %ebx\n"
    "	push $0x23\n"
    "	push $user_stack_top\n"
    "	pushf\n"
    "	push $0x1b\n"
    "	push %ebx\n"
    "	mov $0x1d9, %ecx\n"
    "	mov bts_ctl, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "run_user_iret:\n"
    "	iret\n"
    "user_return:\n"
    "	mov $0x1d9, %ecx\n"
    "	xor %eax, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "	mov kernel_esp, %esp\n"
    "	pop %edi\n"
    "	pop %esi\n"
    "	pop %ebx\n"
    "	pop %ebp\n"
    "	ret\n"
    /* SYSENTER from user_bts: back with SYSEXIT to EDX, ESP = ECX. */
    "sysenter_entry:\n"
    "	mov $u_after_sysexit, %edx\n"
    "k_sysexit:\n"
    "	sysexit\n"
    ".globl gp_entry, ud_entry, ud_iret, nmi_entry, nmi_iret, bad_entry\n"
    ".globl bts_run_user, run_user_iret, user_return\n"
    ".globl sysenter_entry, k_sysexit\n");

/*
 * Ring-3 code: a JMP, a UD2 (#UD, skipped by its handler), SYSENTER and
 * SYSEXIT back, INT $0x80 to ring 0.
 */
asm(".text\n"
    ".globl user_bts, u_jmp, u_jmp_t, u_ud, u_after_ud, u_sysenter\n"
    ".globl u_after_sysexit, u_int\n"
    "user_bts:\n"
    "u_jmp:\n"
    "	jmp u_jmp_t\n"
    "	nop\n"
    "u_jmp_t:\n"
    "u_ud:\n"
    "	ud2\n"
    "u_after_ud:\n"
    "	mov %esp, %ecx\n"
    "u_sysenter:\n"
    "	sysenter\n"
    "u_after_sysexit:\n"
    "	nop\n"
    "u_int:\n"
    "	int $0x80\n");

/*
 * Ring-0 sequences, each entered with ECX = IA32_DEBUGCTL, EDX:EAX its
 * value: WRMSR turns BTS on, WRMSR of 0 turns it off before the RET.
 *
 * bts_near: direct JMP, CALL, RET, Jcc not taken, Jcc taken, indirect
 * JMP, far JMP: 6 records.
 */
asm(".text\n"
    ".globl bts_near, n_jmp, n_jmp_t, n_call, n_sub, n_ret, n_after\n"
    ".globl n_jnz, n_jz, n_jz_t, n_ijmp, n_ijmp_t, n_ljmp, n_ljmp_t\n"
    "bts_near:\n"
    "	push %ebx\n"
    "	wrmsr\n"
    "n_jmp:\n"
    "	jmp n_jmp_t\n"
    "	nop\n"
    "n_jmp_t:\n"
    "n_call:\n"
    "	call n_sub\n"
    "n_after:\n"
    "	xor %eax, %eax\n"
    "n_jnz:\n"
    "	jnz n_jz_t\n"
    "n_jz:\n"
    "	jz n_jz_t\n"
    "	nop\n"
    "n_jz_t:\n"
    "	mov $n_ijmp_t, %ebx\n"
    "n_ijmp:\n"
    "	jmp *%ebx\n"
    "	nop\n"
    "n_ijmp_t:\n"
    "n_ljmp:\n"
    "	ljmp $0x08, $n_ljmp_t\n"
    "n_ljmp_t:\n"
    "	xor %eax, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "	pop %ebx\n"
    "	ret\n"
    "n_sub:\n"
    "n_ret:\n"
    "	ret\n"
    /* bts_jmps: 6 JMPs in a row, j1 to j6, then BTS off. */
    ".globl bts_jmps, j1, j2, j3, j4, j5, j6, j_end\n"
    "bts_jmps:\n"
    "	wrmsr\n"
    "j1:	jmp 1f\n"
    "1:\n"
    "j2:	jmp 1f\n"
    "1:\n"
    "j3:	jmp 1f\n"
    "1:\n"
    "j4:	jmp 1f\n"
    "1:\n"
    "j5:	jmp 1f\n"
    "1:\n"
    "j6:	jmp j_end\n"
    "j_end:\n"
    "	xor %eax, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "	ret\n"
    /*
     * bts_spin ("migrate"): JE taken until an NMI (the host's) counts,
     * then DEBUGCTL as it is into mig_debugctl, and BTS off.
     */
    ".globl bts_spin, m_top, m_je\n"
    "bts_spin:\n"
    "	wrmsr\n"
    "m_top:\n"
    "	cmpl $0, nmi_count\n"
    "m_je:\n"
    "	je m_top\n"
    "	rdmsr\n"
    "	mov %eax, mig_debugctl\n"
    "	xor %eax, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "	ret\n"
    /* bts_loop: JNZ taken loop_n - 1 times, then BTS off. */
    ".globl bts_loop, l_jnz, l_top\n"
    "bts_loop:\n"
    "	push %ebx\n"
    "	mov loop_n, %ebx\n"
    "	wrmsr\n"
    "l_top:\n"
    "	dec %ebx\n"
    "l_jnz:\n"
    "	jnz l_top\n"
    "	xor %eax, %eax\n"
    "	xor %edx, %edx\n"
    "	wrmsr\n"
    "	pop %ebx\n"
    "	ret\n");

char stack[16384] __attribute__((aligned(16)));
char tss_stack[8192] __attribute__((aligned(16)));
char user_stack[4096] __attribute__((aligned(16)));
char sysenter_stack[4096] __attribute__((aligned(16)));
asm(".globl stack_top, user_stack_top\n"
    ".set stack_top, stack + 16384\n"
    ".set user_stack_top, user_stack + 4096\n");

/* The 64-bit DS save area and a BTS buffer of 64 records (and a guard). */
#define NREC	512	/* 12 KiB: records cross pages */
volatile uint64_t ds_area[8] __attribute__((aligned(64)));
volatile uint64_t bts_buf[(NREC + 4) * 3] __attribute__((aligned(64)));

volatile unsigned int gp_count, ud_count, nmi_count, nmi_index;
volatile uint64_t nmi_status;
volatile uint32_t kernel_esp, bts_ctl, loop_n, mig_debugctl;
static uint32_t tss[26];
static uint64_t gdt[6] = {
	0, 0x00cf9a000000ffffULL, 0x00cf92000000ffffULL,
	0x00cffa000000ffffULL, 0x00cff2000000ffffULL, 0,
};
static uint64_t idt[256];

extern void bts_run_user(void (*fn)(void));
extern void user_bts(void);
/* regparm(3): EAX = ctl, EDX = 0, ECX = IA32_DEBUGCTL, for WRMSR. */
extern void bts_near(uint32_t ctl, uint32_t hi, uint32_t msr)
	__attribute__((regparm(3)));
extern void bts_jmps(uint32_t ctl, uint32_t hi, uint32_t msr)
	__attribute__((regparm(3)));
extern char run_user_iret[], user_return[], ud_entry[], ud_iret[];
extern char sysenter_entry[], k_sysexit[], nmi_entry[];
extern char u_jmp[], u_jmp_t[], u_ud[], u_after_ud[], u_sysenter[];
extern char u_after_sysexit[], u_int[];
extern char n_jmp[], n_jmp_t[], n_call[], n_sub[], n_ret[], n_after[];
extern char n_jz[], n_jz_t[], n_ijmp[], n_ijmp_t[], n_ljmp[], n_ljmp_t[];
extern char j1[], j2[], j3[], j4[], j5[], j6[], j_end[];
extern char l_jnz[], l_top[], m_top[], m_je[], nmi_iret[];
extern void bts_spin(uint32_t ctl, uint32_t hi, uint32_t msr)
	__attribute__((regparm(3)));
extern void bts_loop(uint32_t ctl, uint32_t hi, uint32_t msr)
	__attribute__((regparm(3)));

static void putx(uint64_t v)
{
	char buf[20];
	int i = 0;

	do {
		buf[i++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	puts_("0x");
	while (i)
		outb(0x3f8, buf[--i]);
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
	extern char gp_entry[], bad_entry[];
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
	set_gate(0x80, user_return, 3);
	d.lim = sizeof(idt) - 1;
	d.base = (uint32_t)idt;
	asm volatile("lidt %0" : : "m" (d));
	*apic_reg(APIC_SVR) = 0x1ff;
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	/* The 8259s off: no timer interrupt among the records. */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	wrmsr_gp(MSR_SYSENTER_CS, 0x08);
	wrmsr_gp(MSR_SYSENTER_ESP, (uint32_t)sysenter_stack +
		 sizeof(sysenter_stack));
	wrmsr_gp(MSR_SYSENTER_EIP, (uint32_t)sysenter_entry);
}

/* A buffer of @nrec records, threshold after @thresh records. */
static void ds_setup(int nrec, uint32_t thresh)
{
	uint32_t base = (uint32_t)bts_buf;
	int i;

	for (i = 0; i < (NREC + 4) * 3; i++)
		bts_buf[i] = 0;
	ds_area[0] = base;
	ds_area[1] = base;
	ds_area[2] = base + nrec * 24;
	ds_area[3] = base + thresh * 24;
	ok(!wrmsr_gp(MSR_DS_AREA, (uint32_t)ds_area), "DS_AREA set");
}

static unsigned int nrecords(void)
{
	return (ds_area[1] - ds_area[0]) / 24;
}

/* Record @i is {from, to, 0}. */
static int rec_is(int i, void *from, void *to)
{
	const volatile uint64_t *r = &bts_buf[i * 3];
	int good = r[0] == (uint32_t)from && r[1] == (uint32_t)to && !r[2];

	if (!good) {
		puts_("# record ");
		putu(i);
		puts_(": ");
		putx(r[0]);
		puts_(" -> ");
		putx(r[1]);
		puts_(" flags ");
		putx(r[2]);
		puts_(", expected ");
		putx((uint32_t)from);
		puts_(" -> ");
		putx((uint32_t)to);
		puts_("\n");
	}
	return good;
}

static void cpuid_msr_tests(void)
{
	uint32_t r[4];
	uint64_t v, misc;
	int i, gp_all = 1, gp;

	cpuid(1, r);
	ok(r[3] & (1u << 21), "CPUID.1:EDX.DS");
	ok(r[2] & (1u << 2), "CPUID.1:ECX.DTES64");
	ok(r[2] & (1u << 4), "CPUID.1:ECX.DS-CPL");

	misc = rdmsr(MSR_MISC_ENABLE);
	ok(!(misc & (1u << 11)), "MISC_ENABLE bit 11 (BTS unavailable) clear");
	ok(misc & (1u << 12), "MISC_ENABLE bit 12 (PEBS unavailable) set");
	gp = wrmsr_gp(MSR_MISC_ENABLE, (misc | (1u << 11)) & ~(1ULL << 12));
	v = rdmsr(MSR_MISC_ENABLE);
	ok(!gp && v == misc, "MISC_ENABLE bits 11 and 12 read-only");

	ok(rdmsr(MSR_DEBUGCTL) == 0, "DEBUGCTL is 0 at reset");
	ok(rdmsr(MSR_DS_AREA) == 0, "DS_AREA is 0 at reset");

	for (i = 0; i < 64; i++) {
		if (DEBUGCTL_VALID & (1ULL << i))
			continue;
		if (!wrmsr_gp(MSR_DEBUGCTL, 1ULL << i)) {
			gp_all = 0;
			puts_("# DEBUGCTL bit ");
			putu(i);
			puts_(" accepted\n");
		}
	}
	ok(gp_all, "DEBUGCTL: #GP on each reserved bit (2-5, 15-63)");
	ok(rdmsr(MSR_DEBUGCTL) == 0, "DEBUGCTL unchanged by the #GPs");
	/* Every defined bit but TR and BTS (nothing is recorded). */
	v = DEBUGCTL_VALID & ~(TR | BTS);
	ok(!wrmsr_gp(MSR_DEBUGCTL, v) && rdmsr(MSR_DEBUGCTL) == v,
	   "DEBUGCTL stores its defined bits");
	ok(!wrmsr_gp(MSR_DEBUGCTL, 0) && rdmsr(MSR_DEBUGCTL) == 0,
	   "DEBUGCTL cleared");

	ok(wrmsr_gp(MSR_DS_AREA, 0x0000800000000000ULL),
	   "DS_AREA: #GP on a non-canonical address");
	ok(!wrmsr_gp(MSR_DS_AREA, 0xffff800000001000ULL) &&
	   rdmsr(MSR_DS_AREA) == 0xffff800000001000ULL,
	   "DS_AREA holds a canonical kernel address");
	ok(!wrmsr_gp(MSR_DS_AREA, 0) && rdmsr(MSR_DS_AREA) == 0,
	   "DS_AREA cleared");
}

static void near_tests(void)
{
	int n;

	ds_setup(NREC, NREC + 1);
	bts_near(TR | BTS, 0, MSR_DEBUGCTL);
	n = nrecords();
	if (n != 6) {
		puts_("# records: ");
		putu(n);
		puts_("\n");
	}
	ok(n == 6, "near: 6 records (Jcc not taken: none), index += 24 each");
	ok(rec_is(0, n_jmp, n_jmp_t), "near: direct JMP");
	ok(rec_is(1, n_call, n_sub), "near: CALL");
	ok(rec_is(2, n_ret, n_after), "near: RET");
	ok(rec_is(3, n_jz, n_jz_t), "near: Jcc taken");
	ok(rec_is(4, n_ijmp, n_ijmp_t), "near: indirect JMP");
	ok(rec_is(5, n_ljmp, n_ljmp_t), "near: far JMP");
	ok(rdmsr(MSR_DEBUGCTL) == 0, "near: BTS off");
}

/* One trip to CPL 3 and back with DEBUGCTL = @ctl. */
static int user_trip(uint32_t ctl)
{
	unsigned int ud = ud_count;

	ds_setup(NREC, NREC + 1);
	bts_ctl = ctl;
	bts_run_user(user_bts);
	return ud_count == ud + 1;
}

static void user_tests(void)
{
	int n;

	ok(user_trip(TR | BTS), "all CPLs: the trip ran");
	n = nrecords();
	ok(n == 7, "all CPLs: 7 records");
	ok(rec_is(0, run_user_iret, user_bts), "all CPLs: IRET to CPL 3");
	ok(rec_is(1, u_jmp, u_jmp_t), "all CPLs: JMP at CPL 3");
	ok(rec_is(2, u_ud, ud_entry),
	   "all CPLs: exception from the faulting instruction");
	ok(rec_is(3, ud_iret, u_after_ud), "all CPLs: IRET from the handler");
	ok(rec_is(4, u_sysenter, sysenter_entry), "all CPLs: SYSENTER");
	ok(rec_is(5, k_sysexit, u_after_sysexit), "all CPLs: SYSEXIT");
	ok(rec_is(6, u_int, user_return), "all CPLs: INT n");

	ok(user_trip(TR | BTS | OFF_OS), "BTS_OFF_OS: the trip ran");
	n = nrecords();
	ok(n == 4, "BTS_OFF_OS: 4 records, those from CPL 3");
	ok(rec_is(0, u_jmp, u_jmp_t), "BTS_OFF_OS: JMP");
	ok(rec_is(1, u_ud, ud_entry), "BTS_OFF_OS: exception to CPL 0");
	ok(rec_is(2, u_sysenter, sysenter_entry), "BTS_OFF_OS: SYSENTER");
	ok(rec_is(3, u_int, user_return), "BTS_OFF_OS: INT n");

	ok(user_trip(TR | BTS | OFF_USR), "BTS_OFF_USR: the trip ran");
	n = nrecords();
	ok(n == 3, "BTS_OFF_USR: 3 records, those from CPL 0");
	ok(rec_is(0, run_user_iret, user_bts), "BTS_OFF_USR: IRET to CPL 3");
	ok(rec_is(1, ud_iret, u_after_ud), "BTS_OFF_USR: IRET from #UD");
	ok(rec_is(2, k_sysexit, u_after_sysexit), "BTS_OFF_USR: SYSEXIT");

	ok(user_trip(TR | BTS | OFF_OS | OFF_USR) && nrecords() == 0,
	   "both filters: no record");
	ok(user_trip(TR) && nrecords() == 0, "TR without BTS: no record");
}

/* BTINT clear: 6 JMPs into 4 slots wrap around. */
static void wrap_tests(void)
{
	ds_setup(4, 5);
	bts_jmps(TR | BTS, 0, MSR_DEBUGCTL);
	ok(nrecords() == 2, "circular: index at the third slot after 6 records");
	ok(rec_is(0, j5, j6), "circular: slot 0 = record 5");
	ok(rec_is(1, j6, j_end), "circular: slot 1 = record 6");
	ok(rec_is(2, j3, j4), "circular: slot 2 = record 3");
	ok(rec_is(3, j4, j5), "circular: slot 3 = record 4");
	ok(bts_buf[4 * 3] == 0 && bts_buf[4 * 3 + 1] == 0,
	   "circular: nothing past the absolute maximum");
	ok(nmi_count == 0, "circular: no PMI");
}

/*
 * BTINT set: threshold after 3 records, absolute maximum after 5: the
 * PMI comes right after j3, the index in memory already at the threshold;
 * the NMI's record (from j4, the next instruction) and its IRET's fill
 * the buffer, and j4 to j6 are dropped.
 */
static void pmi_tests(void)
{
	ds_setup(5, 3);
	nmi_count = 0;
	nmi_status = ~0ULL;
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	bts_jmps(TR | BTS | BTINT, 0, MSR_DEBUGCTL);
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	ok(nmi_count == 1, "BTINT: exactly one PMI");
	puts_("# PMIs ");
	putu(nmi_count);
	puts_(", index at the PMI ");
	putu((nmi_index - (uint32_t)bts_buf) / 24);
	puts_(" records\n");
	ok(nmi_index >= (uint32_t)ds_area[3],
	   "BTINT: the index in memory reached the threshold at the PMI");
	ok(nmi_status == 0, "BTINT: no IA32_PERF_GLOBAL_STATUS bit");
	ok(rec_is(0, j1, j2) && rec_is(1, j2, j3) && rec_is(2, j3, j4),
	   "BTINT: records 1-3");
	ok(rec_is(3, j4, nmi_entry),
	   "BTINT: the PMI's record from the next instruction");
	ok(nrecords() == 5, "BTINT: the index stops at the absolute maximum");
	ok(bts_buf[5 * 3] == 0 && bts_buf[5 * 3 + 1] == 0,
	   "BTINT: nothing past the absolute maximum");
}

/* Records @from..@to-1 all l_jnz -> l_top. */
static int loop_recs(int from, int to)
{
	int i;

	for (i = from; i < to; i++)
		if (!rec_is(i, l_jnz, l_top))
			return 0;
	return 1;
}

/*
 * Long runs of records, which the TBs store themselves between the
 * helper's (page crossings, the wrap, the threshold): every record and
 * the index exact.
 */
static void loop_tests(void)
{
	ds_setup(NREC, NREC + 1);
	loop_n = 400;
	bts_loop(TR | BTS, 0, MSR_DEBUGCTL);
	ok(nrecords() == 399 && loop_recs(0, 399),
	   "loop: 399 records, across 3 pages, each exact");

	ds_setup(NREC, NREC + 1);
	loop_n = 1200;
	bts_loop(TR | BTS, 0, MSR_DEBUGCTL);
	ok(nrecords() == 1199 - 2 * NREC && loop_recs(0, NREC),
	   "loop: 1199 records round 512 slots twice: index at 175");

	ds_setup(NREC, 300);
	nmi_count = 0;
	nmi_status = ~0ULL;
	*apic_reg(APIC_LVTPC) = LVT_NMI;
	loop_n = 1200;
	bts_loop(TR | BTS | BTINT, 0, MSR_DEBUGCTL);
	*apic_reg(APIC_LVTPC) = LVT_NMI | LVT_MASKED;
	ok(nmi_count == 1 && nmi_status == 0, "loop: BTINT: one PMI");
	ok((nmi_index - (uint32_t)bts_buf) / 24 == 301,
	   "loop: BTINT: the PMI after the 300th record, its own the 301st");
	ok(loop_recs(0, 300) && rec_is(300, l_top, nmi_entry),
	   "loop: BTINT: records up to the PMI, its own from the next instruction");
	ok(nrecords() == NREC && bts_buf[NREC * 3] == 0,
	   "loop: BTINT: stop at the absolute maximum");
}

/*
 * "migrate": BTS on (CPL 0, circular) while a loop spins; bts-test.sh
 * migrates the VM, then sends an NMI, which ends the loop.  IA32_DEBUGCTL
 * and IA32_DS_AREA came along, the index in memory too, and the
 * destination went on recording where the source stopped: the last
 * records are the loop's JE, the NMI's and its IRET's.
 */
static void migrate_run(void)
{
	unsigned int idx, i;

	ds_setup(NREC, NREC + 1);
	nmi_count = 0;
	puts_("BTS-MIGRATE-READY\n");
	bts_spin(TR | BTS, 0, MSR_DEBUGCTL);
	ok(mig_debugctl == (TR | BTS), "migrate: DEBUGCTL migrated");
	ok(rdmsr(MSR_DS_AREA) == (uint32_t)ds_area, "migrate: DS_AREA migrated");
	idx = nrecords();
	puts_("# migrate: index at ");
	putu(idx);
	puts_(" records\n");
	/* slot i-k, modulo the buffer */
#define SLOT(k)	((idx + NREC - (k)) % NREC)
	ok(rec_is(SLOT(1), nmi_iret, (char *)(uint32_t)bts_buf[SLOT(2) * 3]),
	   "migrate: last record: the NMI handler's IRET back");
	ok(bts_buf[SLOT(2) * 3 + 1] == (uint32_t)nmi_entry,
	   "migrate: the one before: the NMI");
	for (i = 3; i < 40; i++)
		if (!rec_is(SLOT(i), m_je, m_top))
			break;
	ok(i == 40, "migrate: before them, the loop's JE, 37 times");
	finish();
}

/* "nods": the CPU model without "+ds" has neither DS nor its MSRs. */
static void nods_tests(void)
{
	uint32_t r[4];

	cpuid(1, r);
	ok(!(r[3] & (1u << 21)) && !(r[2] & (1u << 2)) && !(r[2] & (1u << 4)),
	   "without +ds: no CPUID DS, DTES64, DS-CPL");
	ok(!wrmsr_gp(MSR_DEBUGCTL, TR | BTS) && rdmsr(MSR_DEBUGCTL) == 0,
	   "without +ds: DEBUGCTL ignored, as before");
	finish();
}

int main(const uint32_t *mbi)
{
	setup_cpu();
	if (cmdline_has(mbi, "nods"))
		nods_tests();
	if (cmdline_has(mbi, "migrate"))
		migrate_run();
	cpuid_msr_tests();
	near_tests();
	user_tests();
	wrap_tests();
	pmi_tests();
	loop_tests();
	finish();
	return 0;
}
