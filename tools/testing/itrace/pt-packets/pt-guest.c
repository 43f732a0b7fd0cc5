// SPDX-License-Identifier: GPL-2.0
/*
 * Guest side of the emulated Intel PT check: trace this program's own
 * user-mode execution of a workload with known control flow through the
 * upstream intel_pt PMU (classic AUX area), then print the raw trace on
 * stdout, base64-encoded between marker lines, for the host to decode,
 * after the guest's TSC (RDTSC) before and after tracing.
 *
 * Build static and non-PIE so the host can decode against the same ELF.
 *
 *   pt-guest [LOOPS [noretcomp|notrace|notrace-compat|snapshot|
 *                     kernel|spin|compat|cfg=HEX]]
 *
 * notrace: only run the workload (for tracing it with perf);
 * notrace-compat: the same with the compat-mode trips of "compat".
 * snapshot: a one-page read-only AUX mapping (overwrite mode), which the
 * intel_pt driver serves with single-range output.
 * kernel: trace kernel and user mode.
 * spin: first spin for a while in user mode making few packets (REP STOSB),
 * so the host can migrate the VM while the trace is on.
 * compat: also, LOOPS / 10 times, a far return into a compat-mode (32-bit)
 * code segment, a loop there, and a far jump back to 64-bit mode.
 * cfg=HEX: user mode, intel_pt config HEX (its bits are IA32_RTIT_CTL's:
 * tsc, mtc, mtc_period, cyc, cyc_thresh, psb_period, ...).
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE		4096UL
#define AUX_PAGES	64

#define FIB_N		10

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long add_one(unsigned long x)
{
	return x + 1;
}

__attribute__((noinline)) static unsigned long add_two(unsigned long x)
{
	return x + 2;
}

__attribute__((noinline)) static void spin(long n)
{
	static char page[16 * PAGE];
	long i;

	for (i = 0; i < n; i++) {
		void *d = page;
		unsigned long c = sizeof(page);

		asm volatile("rep stosb" : "+D" (d), "+c" (c) : "a" (0) : "memory");
	}
}

__attribute__((noinline)) static unsigned long fib(unsigned long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/*
 * 64-bit -> compat mode -> 64-bit: LJMP through a m16:32 pointer to
 * Linux's __USER32_CS (0x23), 10 iterations of a 32-bit loop (compat_loop:
 * DEC ECX is 0x49, a REX prefix in 64-bit mode, so only a decoder that
 * follows MODE.Exec counts it right), LJMP back to __USER_CS (0x33).  The
 * 32-bit code touches no stack.  (Not LRETQ: QEMU 7.2's TCG pops a far
 * return with supervisor accesses, which SMAP faults.)
 *
 * The upper 32 bits of every GPR are undefined after a switch to compat
 * mode (SDM Vol. 1, 3.4.1.1), and an interrupt's IRET back to compat mode
 * does lose those of RSP, on QEMU as on some CPUs: RSP and RBP go through
 * compat_regs (the program is single-threaded while it makes trips), the
 * other GPRs are clobbers, saved and restored by the compiler in 64-bit
 * mode.
 */
static unsigned long compat_regs[2] __attribute__((used));

__attribute__((noinline)) void compat_trip(void)
{
	asm volatile("movq %%rsp, compat_regs(%%rip)\n\t"
		     "movq %%rbp, compat_regs+8(%%rip)\n\t"
		     "ljmpl *compat_far(%%rip)\n"
		     ".code32\n"
		     "1:\tmovl $10, %%ecx\n"
		     ".globl compat_loop\n"
		     "compat_loop:\n\t"
		     "decl %%ecx\n\t"
		     "jnz compat_loop\n\t"
		     "ljmp $0x33, $2f\n"
		     ".code64\n"
		     "2:\tmovq compat_regs(%%rip), %%rsp\n\t"
		     "movq compat_regs+8(%%rip), %%rbp\n"
		     ".pushsection .data\n"
		     "compat_far:\t.long 1b\n\t.word 0x23\n"
		     ".popsection\n"
		     : : : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9",
		       "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc");
}

typedef unsigned long (*op_fn)(unsigned long);
op_fn ops[2] = { add_one, add_two };

/*
 * add_one and add_two run LOOPS / 2 times each, fib 177 times; the first
 * write to each of LOOPS / 10 fresh pages takes a page fault in user mode.
 */
__attribute__((noinline)) void workload(int loops, volatile char *pages)
{
	unsigned long acc = 0;
	int i;

	for (i = 0; i < loops / 10; i++)
		pages[i * PAGE] = 1;

	for (i = 0; i < loops; i++) {
		acc = ops[i & 1](acc);
		if (i == loops / 2)
			syscall(SYS_getppid);
	}
	acc += fib(FIB_N);
	sink = acc;
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (!f || fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static void b64_out(const unsigned char *p, size_t n)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;
	int col = 0;

	for (i = 0; i < n; i += 3) {
		unsigned int v = p[i] << 16;
		size_t k = n - i;

		if (k > 1)
			v |= p[i + 1] << 8;
		if (k > 2)
			v |= p[i + 2];
		putchar(t[(v >> 18) & 63]);
		putchar(t[(v >> 12) & 63]);
		putchar(k > 1 ? t[(v >> 6) & 63] : '=');
		putchar(k > 2 ? t[v & 63] : '=');
		if (++col == 19) {
			putchar('\n');
			col = 0;
		}
	}
	if (col)
		putchar('\n');
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *up;
	unsigned char *aux;
	char *pages;
	uint64_t head, t0, t1;
	int type, fd, loops = argc > 1 ? atoi(argv[1]) : 100;
	const char *mode = argc > 2 ? argv[2] : "";
	unsigned long aux_pages = AUX_PAGES;
	int aux_prot = PROT_READ | PROT_WRITE;

	pages = mmap(NULL, (loops / 10 + 1) * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED) {
		perror("PT-GUEST: mmap pages");
		return 1;
	}
	if (!strcmp(mode, "snapshot")) {
		aux_pages = 1;
		aux_prot = PROT_READ;
	}
	if (!strncmp(mode, "notrace", 7)) {
		int i;

		workload(loops, pages);
		/* notrace-compat: with the compat-mode trips. */
		for (i = 0; !strcmp(mode, "notrace-compat") && i < loops / 10; i++)
			compat_trip();
		return 0;
	}

	type = read_int("/sys/bus/event_source/devices/intel_pt/type");
	if (type < 0) {
		printf("PT-GUEST: no intel_pt PMU\n");
		return 1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = 1ULL << 10;		/* tsc */
	if (!strcmp(mode, "noretcomp"))
		attr.config |= 1ULL << 11;
	if (!strncmp(mode, "cfg=", 4))
		attr.config = strtoull(mode + 4, NULL, 16);
	attr.exclude_kernel = strcmp(mode, "kernel") != 0;
	attr.exclude_hv = 1;
	attr.disabled = 1;

	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("PT-GUEST: perf_event_open");
		return 1;
	}
	up = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (up == MAP_FAILED) {
		perror("PT-GUEST: mmap");
		return 1;
	}
	up->aux_offset = 2 * PAGE;
	up->aux_size = aux_pages * PAGE;
	aux = mmap(NULL, aux_pages * PAGE, aux_prot, MAP_SHARED, fd, 2 * PAGE);
	if (aux == MAP_FAILED) {
		perror("PT-GUEST: mmap aux");
		return 1;
	}

	t0 = __builtin_ia32_rdtsc();
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (!strcmp(mode, "spin")) {
		printf("PT-GUEST-SPIN\n");
		fflush(stdout);
		spin(150000);
	}
	workload(loops, pages);
	if (!strcmp(mode, "compat")) {
		int i;

		for (i = 0; i < loops / 10; i++)
			compat_trip();
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	t1 = __builtin_ia32_rdtsc();
	/* Every TSC packet of the trace must lie between these. */
	printf("PT-GUEST-TSC %llx %llx\n", (unsigned long long)t0,
	       (unsigned long long)t1);

	head = __atomic_load_n(&up->aux_head, __ATOMIC_ACQUIRE);
	printf("PT-GUEST: aux_head %llu\n", (unsigned long long)head);
	if (head > aux_pages * PAGE)
		head = aux_pages * PAGE;
	printf("PT-GUEST-BEGIN\n");
	b64_out(aux, head);
	printf("PT-GUEST-END\n");
	fflush(stdout);
	return 0;
}
