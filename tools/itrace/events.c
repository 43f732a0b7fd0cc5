// SPDX-License-Identifier: GPL-2.0
/* record -e EVENT: perf's event names into attr fields (events.h). */
#include <ctype.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void itrace_attr_set_sample(union itrace_attr *u, uint32_t pmu_type, uint64_t config,
			    uint32_t bytes)
{
	u->a.size = ITRACE_ATTR_SIZE_VER10;
	u->a.sample_type |= PERF_SAMPLE_ITRACE;
	memset(u->raw + ITRACE_ATTR_CONFIG4, 0, 8);
	memcpy(u->raw + ITRACE_ATTR_CONFIG, &config, 8);
	memcpy(u->raw + ITRACE_ATTR_TYPE, &pmu_type, 4);
	memcpy(u->raw + ITRACE_ATTR_SIZE, &bytes, 4);
}

uint32_t itrace_attr_sample_size(const uint8_t *attr, size_t size)
{
	uint32_t v;

	if (!attr || size < ITRACE_ATTR_SIZE_VER10)
		return 0;
	memcpy(&v, attr + ITRACE_ATTR_SIZE, 4);
	return v;
}

static const struct {
	const char	*name;
	uint32_t	type;
	uint64_t	config;
	unsigned int	freq;		/* perf samples these by frequency */
} names[] = {
	{ "cpu-clock",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000 },
	{ "task-clock",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000 },
	{ "page-faults",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0 },
	{ "faults",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0 },
	{ "minor-faults",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 0 },
	{ "major-faults",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0 },
	{ "context-switches",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0 },
	{ "cs",			PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0 },
	{ "cpu-migrations",	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0 },
	{ "migrations",		PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0 },
	{ "cycles",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000 },
	{ "cpu-cycles",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000 },
	{ "instructions",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1000 },
	{ "branches",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1000 },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1000 },
	{ "branch-misses",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 1000 },
	{ "cache-references",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1000 },
	{ "cache-misses",	PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1000 },
	{ "bus-cycles",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, 1000 },
	{ "ref-cycles",		PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 1000 },
};

/* mem:ADDR|SYMBOL[:ACCESS][/LEN], perf's breakpoint syntax */
static int parse_mem(const char *spec, struct evspec *e, char *err, size_t errlen)
{
	const char *p = spec + 4, *colon, *slash, *end;
	char *num_end;
	size_t n;

	e->kind = EV_BREAKPOINT;
	e->type = PERF_TYPE_BREAKPOINT;
	e->bp_type = HW_BREAKPOINT_X;
	e->bp_len = sizeof(long);
	colon = strchr(p, ':');
	slash = strchr(p, '/');
	end = colon ? colon : slash ? slash : p + strlen(p);
	n = end - p;
	if (!n || n >= sizeof(e->sym))
		return fail(err, errlen, "-e %s: expected mem:ADDR or mem:SYMBOL[:x|r|w|rw][/LEN]",
			    spec);
	if (isdigit((unsigned char)*p)) {
		errno = 0;
		e->bp_addr = strtoull(p, &num_end, 0);
		if (errno || num_end != end)
			return fail(err, errlen, "-e %s: '%.*s' is not an address", spec,
				    (int)n, p);
	} else {
		memcpy(e->sym, p, n);
		e->sym[n] = 0;
	}
	if (colon) {
		const char *a = colon + 1, *ae = slash && slash > colon ? slash : a + strlen(a);
		size_t an = ae - a;

		if (an == 1 && *a == 'x')
			e->bp_type = HW_BREAKPOINT_X;
		else if (an == 1 && *a == 'r')
			e->bp_type = HW_BREAKPOINT_R;
		else if (an == 1 && *a == 'w')
			e->bp_type = HW_BREAKPOINT_W;
		else if (an == 2 && (!strncmp(a, "rw", 2) || !strncmp(a, "wr", 2)))
			e->bp_type = HW_BREAKPOINT_RW;
		else
			return fail(err, errlen, "-e %s: access '%.*s': x, r, w or rw", spec,
				    (int)an, a);
	}
	if (slash) {
		unsigned long len = strtoul(slash + 1, &num_end, 0);

		if (*num_end || (len != 1 && len != 2 && len != 4 && len != 8))
			return fail(err, errlen, "-e %s: length '%s': 1, 2, 4 or 8", spec,
				    slash + 1);
		if (e->bp_type == HW_BREAKPOINT_X && len != sizeof(long))
			return fail(err, errlen, "-e %s: an execute breakpoint has length %zu",
				    spec, sizeof(long));
		e->bp_len = len;
	}
	return 0;
}

int evspec_parse(const char *spec, struct evspec *e, char *err, size_t errlen)
{
	const char *colon;
	size_t i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(spec, names[i].name)) {
			e->type = names[i].type;
			e->config = names[i].config;
			e->def_freq = names[i].freq;
			return 0;
		}
	if (!strncmp(spec, "mem:", 4))
		return parse_mem(spec, e, err, errlen);
	if (spec[0] == 'r' && spec[1] && strspn(spec + 1, "0123456789abcdefABCDEF") ==
	    strlen(spec + 1) && strlen(spec + 1) <= 16) {
		e->type = PERF_TYPE_RAW;
		e->config = strtoull(spec + 1, NULL, 16);
		e->def_freq = 1000;
		return 0;
	}
	colon = strchr(spec, ':');
	if (colon && colon != spec && colon[1] && !strchr(colon + 1, ':') &&
	    strspn(spec, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") ==
	    strlen(spec) && strlen(spec) < sizeof(e->tp)) {
		e->kind = EV_TRACEPOINT;
		e->type = PERF_TYPE_TRACEPOINT;
		snprintf(e->tp, sizeof(e->tp), "%.*s/%s", (int)(colon - spec), spec, colon + 1);
		return 0;
	}
	return fail(err, errlen,
		    "-e %s: unknown event (cpu-clock, task-clock, page-faults, instructions, cycles, branches, rHEX, mem:ADDR|SYMBOL:x, SUBSYS:TRACEPOINT ...)",
		    spec);
}

int evspec_tracepoint_id(const char *tp, uint64_t *id, char *err, size_t errlen)
{
	static const char * const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(roots); i++) {
		unsigned long long v;
		FILE *f;
		int ok;

		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], tp);
		f = fopen(path, "r");
		if (!f)
			return fail(err, errlen, "tracepoint %s: %s: %s", tp, path,
				    strerror(errno));
		ok = fscanf(f, "%llu", &v) == 1;
		fclose(f);
		if (!ok)
			return fail(err, errlen, "tracepoint %s: %s holds no id", tp, path);
		*id = v;
		return 0;
	}
	return fail(err, errlen,
		    "tracepoint %s: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)",
		    tp);
}
