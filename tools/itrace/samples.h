/* SPDX-License-Identifier: GPL-2.0 */
/* itrace report of samples with trace (record -e, samples.c). */
#ifndef ITRACE_SAMPLES_H
#define ITRACE_SAMPLES_H

#include <stdio.h>

struct itrace_data;
struct decode_opts;

/* 0, or EXIT_DECODE_ERRORS when samples could not be read or decoded. */
int itrace_report_samples(struct itrace_data *d, const struct decode_opts *o, FILE *out);

#endif
