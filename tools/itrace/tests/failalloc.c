// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failure injection for the host tests.  Linked into
 * itrace-failalloc (the itrace tool, its objects built with ASan and
 * UBSan) with -Wl,--wrap=malloc,... : only the tool's own calls come
 * here; those inside libipt, libdw or json-c do not.
 *
 *   ITRACE_FAILALLOC=K   the first call made from the K-th distinct call
 *                        site, counted in the order the sites are first
 *                        seen, fails as on ENOMEM; every other call
 *                        succeeds.  0: none fails.
 *   ITRACE_FAILALLOC=K:N the N-th call made from the K-th site fails (a
 *                        later step of a growing table, say).
 *   ITRACE_FAIL_THREAD=N the N-th pthread_create() and every later one
 *                        fail with EAGAIN (decode --jobs).
 *   ITRACE_FAIL_WORKER=N the N-th call made by a thread other than the
 *                        process's first fails (decode --jobs: a worker
 *                        that cannot grow its log), the call counted
 *                        whatever its site; the line
 *                        "failalloc: worker call N (FUNC) fails" says so.
 *
 * With ITRACE_FAILALLOC set, three kinds of lines go to stderr:
 *   "failalloc: site K call N (FUNC from +OFF) fails"   when it fails
 *                     (addr2line -e itrace-failalloc OFF names the line),
 *   "failalloc: site K calls C"                   at exit, for each site
 *                     called more than once (C times),
 *   "failalloc: S sites"                          at exit (S seen in all).
 * A sweep (itrace-test.c) runs a command once with 0 to learn S and the
 * counts, then once for each K in 1..S and once for each K:C.  The tool
 * is single-threaded where it decodes; the lock keeps the counts right
 * if a thread allocates.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "failalloc.h"

#define MAX_SITES 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const void *sites[MAX_SITES];
static unsigned long calls[MAX_SITES];
static unsigned int nr_sites;
static long target = -1;	/* -1: not read yet; 0: no failure */
static unsigned long target_call = 1;
static unsigned long worker_target, worker_calls;

static void report(void)
{
	unsigned int i;

	for (i = 0; i < nr_sites; i++)
		if (calls[i] > 1)
			fprintf(stderr, "failalloc: site %u calls %lu\n", i + 1, calls[i]);
	fprintf(stderr, "failalloc: %u sites\n", nr_sites);
}

/* Whether this call, made from @site by @fn, is the one to fail. */
static int fail_here(const char *fn, const void *site)
{
	unsigned int i;
	int fail = 0;

	pthread_mutex_lock(&lock);
	if (target < 0) {
		const char *e = getenv("ITRACE_FAILALLOC");
		char *end = NULL;

		target = e ? strtol(e, &end, 10) : 0;
		if (end && *end == ':')
			target_call = strtoul(end + 1, NULL, 10);
		if (e)
			atexit(report);
		e = getenv("ITRACE_FAIL_WORKER");
		worker_target = e ? strtoul(e, NULL, 10) : 0;
	}
	if (worker_target && gettid() != getpid() && ++worker_calls == worker_target) {
		fprintf(stderr, "failalloc: worker call %lu (%s) fails\n", worker_calls, fn);
		pthread_mutex_unlock(&lock);
		errno = ENOMEM;
		return 1;
	}
	for (i = 0; i < nr_sites; i++)
		if (sites[i] == site)
			break;
	if (i == nr_sites) {
		if (nr_sites == MAX_SITES) {
			pthread_mutex_unlock(&lock);
			return 0;
		}
		sites[nr_sites++] = site;
	}
	if (++calls[i] == target_call && (long)i + 1 == target) {
		fprintf(stderr, "failalloc: site %u call %lu (%s from +0x%lx) fails\n", i + 1,
			calls[i], fn, (unsigned long)((const char *)site - __executable_start));
		fail = 1;
	}
	pthread_mutex_unlock(&lock);
	if (fail)
		errno = ENOMEM;
	return fail;
}

#define FAIL_HERE(fn) fail_here(fn, __builtin_return_address(0))

void *__wrap_malloc(size_t size)
{
	return FAIL_HERE("malloc") ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	return FAIL_HERE("calloc") ? NULL : __real_calloc(nmemb, size);
}

void *__wrap_realloc(void *ptr, size_t size)
{
	return FAIL_HERE("realloc") ? NULL : __real_realloc(ptr, size);
}

void *__wrap_reallocarray(void *ptr, size_t nmemb, size_t size)
{
	return FAIL_HERE("reallocarray") ? NULL : __real_reallocarray(ptr, nmemb, size);
}

char *__wrap_strdup(const char *s)
{
	return FAIL_HERE("strdup") ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return FAIL_HERE("strndup") ? NULL : __real_strndup(s, n);
}

/* asprintf(3): on failure -1, and *strp is undefined (left as it was) */
int __wrap_vasprintf(char **strp, const char *fmt, va_list ap)
{
	if (FAIL_HERE("vasprintf"))
		return -1;
	return __real_vasprintf(strp, fmt, ap);
}

int __wrap_asprintf(char **strp, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (FAIL_HERE("asprintf"))
		return -1;
	va_start(ap, fmt);
	n = __real_vasprintf(strp, fmt, ap);
	va_end(ap);
	return n;
}

FILE *__wrap_open_memstream(char **ptr, size_t *sizeloc)
{
	return FAIL_HERE("open_memstream") ? NULL : __real_open_memstream(ptr, sizeloc);
}

/*
 * ITRACE_FAIL_THREAD=N: the N-th pthread_create() and every later one
 * fail with EAGAIN (as when the user's thread limit is reached); no
 * allocation site is counted for them.
 */
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	static unsigned long nr;
	const char *e = getenv("ITRACE_FAIL_THREAD");
	int err = EAGAIN;	/* pthread_create() returns the error number */
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = ++nr;
	pthread_mutex_unlock(&lock);
	if (!e || !*e || n < strtoul(e, NULL, 10))
		return __real_pthread_create(th, attr, fn, arg);
	fprintf(stderr, "failalloc: pthread_create %lu fails\n", n);
	return err;
}
