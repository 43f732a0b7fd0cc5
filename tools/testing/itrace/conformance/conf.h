/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the conformance programs.  Each is single-stepped in the guest
 * (about 6 ms a step under TCG with the debug kernel), so they are small:
 * a few thousand instructions from main to its return, and they report
 * with write(2), not printf (whose first call alone is ~3000 instructions).
 * The exit status says whether the program saw what it expected.
 */
#ifndef CONF_H
#define CONF_H
#include <string.h>
#include <unistd.h>

#define KNOWN	__attribute__((noinline, noclone, used))

static inline void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(99);
}
#endif
