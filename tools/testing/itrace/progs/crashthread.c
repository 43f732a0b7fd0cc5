// SPDX-License-Identifier: GPL-2.0
/*
 * One thread of three crashes: main starts a waiter and a crasher; the
 * crasher calls t_level1, t_level2 and dereferences NULL while the waiter
 * blocks on a pipe and main in pthread_join().
 */
#include <pthread.h>
#include "crash.h"

static int fds[2];

KNOWN void t_level2(int *p)
{
	*p = 1;			/* NULL: SIGSEGV here */
}

KNOWN void t_level1(int *p)
{
	t_level2(p);
}

KNOWN void *waiter(void *arg)
{
	char c;

	(void)arg;
	if (read(fds[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

KNOWN void *crasher(void *arg)
{
	usleep(100000);		/* let the others block first */
	t_level1(arg);
	return NULL;
}

int main(void)
{
	pthread_t w, c;

	crash_setup();
	if (pipe(fds) || pthread_create(&w, NULL, waiter, NULL) ||
	    pthread_create(&c, NULL, crasher, crash_null))
		return 1;
	pthread_join(c, NULL);
	pthread_join(w, NULL);
	return 0;
}
