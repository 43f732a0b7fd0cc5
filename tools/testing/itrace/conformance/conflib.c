// SPDX-License-Identifier: GPL-2.0
/* libconflib.so: a shared library the plt program calls through its PLT. */
long conflib_twice(long v)
{
	return 2 * v;
}

long conflib_apply(long (*fn)(long), long v, int n)
{
	while (n--)
		v = fn(v);
	return v;
}
