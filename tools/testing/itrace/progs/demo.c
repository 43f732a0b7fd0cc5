// SPDX-License-Identifier: GPL-2.0
/*
 * The "make run" demo: a loop, calls through function pointers, recursion
 * and a system call in the middle.  Expectation: demo.expect.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include "progs.h"

long total;

KNOWN void on_even(long i) { total += i; }
KNOWN void on_odd(long i) { total -= i; }

void (*handler[2])(long) = { on_even, on_odd };
void (* volatile *handlers)(long) = handler;

/* recursion: fact(10) calls itself down to fact(1) */
KNOWN long fact(long n)
{
	if (n <= 1)
		return 1;
	return n * fact(n - 1);
}

/* one raw system call, visible as a syscall instruction in the trace */
KNOWN long do_getpid(void)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "0"((long)SYS_getpid)
		     : "rcx", "r11", "memory");
	return ret;
}

int main(void)
{
	long i, pid, f;

	for (i = 0; i < 10; i++)		/* loop + pointer calls */
		handlers[i & 1](i);
	pid = do_getpid();			/* the syscall in the middle */
	f = fact(10);				/* recursion */
	for (i = 10; i < 20; i++)
		handlers[i & 1](i);
	printf("demo: total %ld, fact(10) %ld, pid %s\n", total, f,
	       pid > 0 ? "ok" : "bad");
	return 0;
}
