// SPDX-License-Identifier: GPL-2.0
/* A crash in a shared library called through the PLT: main, lib_entry@plt, lib_entry, lib_inner. */
#include "crash.h"

void lib_entry(int *p);

int main(void)
{
	crash_setup();
	lib_entry(crash_null);
	return 0;
}
