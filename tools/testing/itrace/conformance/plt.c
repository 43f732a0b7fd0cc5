// SPDX-License-Identifier: GPL-2.0
/*
 * Calls through the PLT into a shared library of our own (lazily bound:
 * the first call of each goes through the dynamic linker's resolver), a
 * library calling back into the program through a function pointer, and
 * libc's qsort() calling our comparator.
 */
#include <stdlib.h>
#include "conf.h"

long conflib_twice(long v);
long conflib_apply(long (*fn)(long), long v, int n);

KNOWN long plus3(long v)
{
	return v + 3;
}

KNOWN int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	long a[8], s = 0;
	int i;

	for (i = 0; i < 8; i++)
		a[i] = (i * 3) % 8;
	qsort(a, 8, sizeof(a[0]), cmp);
	for (i = 0; i < 8; i++)
		s += conflib_twice(a[i]);
	s = conflib_apply(plus3, s, 20);
	/* no say(): each first call of a libc function is a lazy binding */
	return !(s == 56 + 60 && a[7] == 7);
}
