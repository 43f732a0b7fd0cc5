// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit program in compat mode (CS.D=1, CS.L=0 under a 64-bit kernel):
 * its trace switches between MODE.Exec 32-bit (user mode) and 64-bit (the
 * kernel, and user-only tracing's TIP.PGE after each system call).  No C
 * library (Debian has no 32-bit libc for the host's gcc -m32 here):
 * its own _start and int $0x80 system calls.  Built with
 *   gcc -m32 -static -nostdlib -ffreestanding -fno-pic
 * Loops, calls and returns, recursion, an indirect call through a table, a
 * jump table, one-byte inc/dec (REX prefixes in 64-bit mode), write(2) and
 * exit(2); the exit status says whether the
 * results were right.
 */
#define KNOWN	__attribute__((noinline, noclone, used))

#define NR_exit		1
#define NR_write	4
#define NR_getpid	20

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("int $0x80" : "=a"(ret) : "0"(nr), "b"(a), "c"(b), "d"(c)
		     : "memory");
	return ret;
}

KNOWN int add(int a, int b)
{
	return a + b;
}

KNOWN int sub(int a, int b)
{
	return a - b;
}

KNOWN int mul(int a, int b)
{
	return a * b;
}

static int (*const ops[])(int, int) = { add, sub, mul };

KNOWN int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* dense enough for a jump table (jmp *table(,%eax,4)) */
KNOWN int pick(int v)
{
	switch (v) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 35;
	case 3: return 47;
	case 4: return 59;
	case 5: return 61;
	case 6: return 73;
	default: return 0;
	}
}

/*
 * inc and dec of a register: one byte each (0x40+r, 0x48+r) in 32-bit
 * mode, REX prefixes in 64-bit mode -- a decoder in the wrong mode would
 * split these instructions differently from sstep.
 */
KNOWN int count(int n)
{
	int c = 0;

	while (n) {
		asm volatile("inc %0" : "+r"(c));
		asm volatile("dec %0" : "+r"(n));
	}
	return c;
}

KNOWN int length(const char *s)
{
	int n = 0;

	while (s[n])
		n++;
	return n;
}

KNOWN void say(const char *s)
{
	if (sys3(NR_write, 1, (long)s, length(s)) != length(s))
		sys3(NR_exit, 99, 0, 0);
}

KNOWN int run(void)
{
	int i, acc = 0, bad = 0;

	for (i = 0; i < 12; i++)
		acc = ops[i % 3](acc, i);		/* indirect calls */
	bad |= acc != -1419;
	bad |= fib(7) != 13;
	for (i = 0, acc = 0; i < 9; i++)
		acc += pick(i);
	bad |= acc != 309;
	bad |= count(5) != 5;
	bad |= sys3(NR_getpid, 0, 0, 0) <= 0;
	return bad;
}

void __attribute__((noreturn, used)) _start(void)
{
	int bad = run();

	say(bad ? "compat32: wrong results\n" : "compat32: ok\n");
	sys3(NR_exit, bad, 0, 0);
	__builtin_unreachable();
}
