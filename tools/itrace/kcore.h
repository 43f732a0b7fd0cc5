/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ITRACE_KCORE_H
#define ITRACE_KCORE_H

#include <stddef.h>

/*
 * Copy the running kernel's text from /proc/kcore into DIR/kcore_dir/kcore
 * (and /proc/kallsyms into DIR/kcore_dir/kallsyms), perf record --kcore's
 * layout.  0, or -1 with a message in err.
 */
int kcore_copy(const char *dir, char *err, size_t errlen);

#endif
