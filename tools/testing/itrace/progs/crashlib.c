// SPDX-License-Identifier: GPL-2.0
/* libcrashlib.so: crashplt calls lib_entry through the PLT. */
#include "progs.h"

/* static: called directly, not through the library's own PLT */
static KNOWN void lib_inner(int *p)
{
	*p = 7;			/* p is NULL: SIGSEGV here */
}

KNOWN void lib_entry(int *p)
{
	lib_inner(p);
}
