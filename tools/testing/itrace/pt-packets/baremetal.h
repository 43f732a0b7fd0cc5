/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bare-metal tests of the emulated CPU (msr-test.c, pmu-test.c,
 * bts-test.c) share: 32-bit, freestanding, booted by QEMU's multiboot
 * loader; TAP on COM1 and the exit status through isa-debug-exit (port
 * 0xf4); MSR access that counts #GP in gp_count, which the including
 * program defines and its #GP handler increments.
 */
#ifndef BAREMETAL_H
#define BAREMETAL_H

#include <stdint.h>

#define APIC_BASE	0xfee00000u

/*
 * The multiboot header (flags 0: an ELF), first in .text: the loader looks
 * for it in the first 8 KiB of the file (the programs build with
 * -fno-toplevel-reorder, so this comes before their code).
 */
asm(".text\n"
    ".align 4\n"
    ".long 0x1badb002, 0, -0x1badb002\n");

/* Not inline (called from hundreds of checks), maybe unused by a program */
#define BM_FN	static __attribute__((unused))

extern volatile unsigned int gp_count;

static int test_n, test_fail;

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a" (v), "Nd" (port));
}

BM_FN void puts_(const char *s)
{
	while (*s)
		outb(0x3f8, *s++);
}

/* @v in decimal, or in hex if @hex (no 64-bit division by a variable: no libgcc) */
BM_FN void putu_base(uint64_t v, int hex)
{
	char buf[24];
	int i = 0;

	do {
		buf[i++] = "0123456789abcdef"[hex ? v & 15 : v % 10];
		v = hex ? v >> 4 : v / 10;
	} while (v);
	while (i)
		outb(0x3f8, buf[--i]);
}

static inline void putu(uint64_t v)
{
	putu_base(v, 0);
}

BM_FN void ok(int cond, const char *name)
{
	test_n++;
	if (!cond) {
		test_fail++;
		puts_("not ");
	}
	puts_("ok ");
	putu(test_n);
	puts_(" ");
	puts_(name);
	puts_("\n");
}

/* The TAP plan, then QEMU exits with status 1 (all passed) or 3 */
BM_FN void finish(void)
{
	puts_("1..");
	putu(test_n);
	puts_("\n");
	outb(0xf4, test_fail ? 1 : 0);
	for (;;)
		asm volatile("hlt");
}

/* Called by the programs' catch-all exception entry */
void bad_exception(void)
{
	ok(0, "unexpected exception");
	finish();
}

static inline void cpuid_sub(uint32_t leaf, uint32_t sub, uint32_t *r)
{
	asm volatile("cpuid" : "=a" (r[0]), "=b" (r[1]), "=c" (r[2]), "=d" (r[3])
		     : "a" (leaf), "c" (sub));
}

static inline void cpuid(uint32_t leaf, uint32_t *r)
{
	cpuid_sub(leaf, 0, r);
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a" (lo), "=d" (hi) : "c" (msr));
	return lo | (uint64_t)hi << 32;
}

/* Returns 1 if the WRMSR raised #GP. */
static inline int wrmsr_gp(uint32_t msr, uint64_t val)
{
	unsigned int before = gp_count;

	asm volatile("wrmsr" : : "c" (msr), "a" ((uint32_t)val),
		     "d" ((uint32_t)(val >> 32)) : "memory");
	return gp_count != before;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a" (lo), "=d" (hi));
	return lo | (uint64_t)hi << 32;
}

static inline volatile uint32_t *apic_reg(uint32_t reg)
{
	return (volatile uint32_t *)(APIC_BASE + reg);
}

/* Does the multiboot command line (-append) hold @word? */
static inline int cmdline_has(const uint32_t *mbi, const char *word)
{
	const char *c, *w;

	if (!mbi || !(mbi[0] & 4))
		return 0;
	for (c = (const char *)mbi[4]; *c; c++) {
		for (w = word; *w && c[w - word] == *w; w++)
			;
		if (!*w && (c[w - word] == 0 || c[w - word] == ' '))
			return 1;
	}
	return 0;
}

#endif
