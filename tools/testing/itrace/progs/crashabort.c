// SPDX-License-Identifier: GPL-2.0
/* abort() from nested calls: main, outer, inner, abort. */
#include "crash.h"

KNOWN void inner(int n)
{
	if (n < 100)
		abort();
}

KNOWN void outer(int n)
{
	inner(n + 1);
}

int main(int argc, char **argv)
{
	(void)argv;
	crash_setup();
	outer(argc);
	return 0;
}
