// SPDX-License-Identifier: GPL-2.0
/* NULL dereference at the end of a known call chain: main, level1, level2, level3. */
#include "crash.h"

KNOWN void level3(int *p)
{
	*p = 42;		/* p is NULL: SIGSEGV here */
}

KNOWN void level2(int *p)
{
	level3(p);
}

KNOWN void level1(int *p)
{
	level2(p);
}

int main(void)
{
	crash_setup();
	level1(crash_null);
	return 0;
}
