// SPDX-License-Identifier: GPL-2.0
/*
 * What exec execs: no C library, so that stepping it whole is cheap -- a
 * few calls, a loop, and the exit system call.
 */
static long __attribute__((noinline, used)) twice(long v)
{
	return 2 * v;
}

void __attribute__((noreturn, used)) _start(void)
{
	long s = 0;
	int i;

	for (i = 0; i < 20; i++)
		s += twice(i);
	asm volatile("syscall" : : "a"(231), "D"(s != 380) : "rcx", "r11", "memory");
	__builtin_unreachable();
}
