// SPDX-License-Identifier: GPL-2.0
/*
 * Signals and sigreturn, all synchronous so that every run takes the same
 * path: raise() and kill() of ourselves (delivered on the way out of the
 * system call), a handler on an alternate stack, and SIGSEGV from a
 * faulting load, left with siglongjmp(); then a fault the handler repairs
 * (mprotect) so that sigreturn restarts the faulting instruction.
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include "conf.h"

static volatile int usr1, usr2, segv;
static sigjmp_buf env;
static char *page;
static char altstack[65536];

KNOWN void on_usr1(int sig)
{
	usr1 += sig == SIGUSR1;
}

KNOWN void on_usr2(int sig)
{
	usr2 += sig == SIGUSR2;
}

KNOWN void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	segv++;
	if (si->si_addr == page) {
		mprotect(page, 4096, PROT_READ | PROT_WRITE);
		return;		/* sigreturn: the store runs again */
	}
	siglongjmp(env, sig);
}

KNOWN int load(volatile int *p)
{
	return *p;
}

int main(void)
{
	struct sigaction sa;
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	volatile int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigaltstack(&ss, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	for (i = 0; i < 3; i++) {
		raise(SIGUSR1);
		kill(getpid(), SIGUSR2);
	}
	for (i = 0; i < 2; i++)
		if (!sigsetjmp(env, 1))
			load((volatile int *)16);
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	page[0] = 1;
	say("signal\n");
	return !(usr1 == 3 && usr2 == 3 && segv == 3 && page[0] == 1);
}
