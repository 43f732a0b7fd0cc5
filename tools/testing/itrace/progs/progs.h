/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Programs with known control flow for the itrace end-to-end tests.  Every
 * function the expectation names is kept out of line and unclonable, so
 * its calls and branches in the trace are exactly those of the source.
 */
#ifndef ITRACE_PROGS_H
#define ITRACE_PROGS_H

#define KNOWN	__attribute__((noinline, noclone, used))

#endif
