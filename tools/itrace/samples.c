// SPDX-License-Identifier: GPL-2.0
/*
 * itrace report of a recording of samples with trace (record -e EVENT,
 * PERF_SAMPLE_ITRACE): each sample's trace decoded on its own with libipt,
 * from its first PSB, in the address space of its process at the sample's
 * time (the sideband, timeline.c), giving
 *  - per sample (--samples): ip, tid, time, the last N branches, where the
 *    trace ends and the calls it saw not returned;
 *  - the sampled locations, the most frequent paths into each (the last
 *    --path branches) and the call chains the traces show.
 * A sample whose trace is missing (no PERF_SAMPLE_ITRACE field, size 0),
 * holds no PSB or cannot be decoded is counted and said, never dropped.
 *
 * A recording of record --pmu intel_bts -e EVENT (ITRACE_FLAG_BTS with
 * ITRACE_FLAG_SAMPLES) has Intel BTS records in its samples: the newest
 * whole 24-byte records, oldest first, then zeros (bts.h).  They are walked
 * with bts_record() in the same address space, into the same outputs; a
 * trace of zeros only is "empty", a record cut short or with an address
 * that is not canonical is said on stderr and makes the exit status 3.
 */
#include <intel-pt.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bts.h"
#include "events.h"
#include "itrace.h"
#include "itrace-file.h"
#include "json.h"
#include "perf-event.h"
#include "samples.h"
#include "sym.h"
#include "timeline.h"

#define MAX_STACK	64

enum bkind { B_CALL, B_RET, B_JMP, B_JCC, B_SYSCALL, B_FAR };

static const char * const bkind_name[] = {
	[B_CALL] = "call", [B_RET] = "ret", [B_JMP] = "jmp", [B_JCC] = "jcc",
	[B_SYSCALL] = "syscall", [B_FAR] = "far",
};

struct branch {
	enum bkind	kind;
	uint64_t	from, to;	/* to 0: unknown */
	uint8_t		size;
};

enum sstatus { S_DECODED, S_MISSING, S_EMPTY, S_NO_PSB, S_ERROR };

static const char * const status_name[] = {
	[S_DECODED] = "decoded", [S_MISSING] = "missing", [S_EMPTY] = "empty",
	[S_NO_PSB] = "no PSB", [S_ERROR] = "undecodable",
};

static const char * const status_key[] = {
	[S_DECODED] = "decoded", [S_MISSING] = "missing", [S_EMPTY] = "empty",
	[S_NO_PSB] = "no_psb", [S_ERROR] = "undecodable",
};

struct sample {
	struct pev_sample ps;
	struct tl_aspace *as;
	enum sstatus	status;
	uint64_t	insns, errors;
	char		errmsg[160];
	bool		have_end;
	uint64_t	end;		/* where the trace ends */
	struct branch	*br;		/* ring of the last n */
	uint64_t	nr_br;
	bool		pend;
	struct branch	pend_br;
	uint64_t	stack[MAX_STACK];	/* call sites not returned, outermost first */
	unsigned int	depth;
	struct pt_insn	last;
	bool		have_last;
	uint64_t	nr_records;	/* BTS: the records (not padding) */
	bool		malformed;	/* BTS: a record cut short or not one */
};

struct agg {
	char		*key;
	char		*loc;		/* the location the key belongs to */
	unsigned long	count;
};

struct srep {
	struct itrace_data	*d;
	const struct decode_opts *o;
	FILE			*out;
	struct timeline		*tl;
	int			vdso_fd;
	char			vdso_path[64];
	const char		*exe;		/* the program's module name */
	struct sample		*cur;
	unsigned long		counts[S_ERROR + 1];
	unsigned long		nr, ends_at_ip, lost_records, bad_records;
	bool			bts;		/* the samples' trace is BTS records */
	bool			user_only;	/* kernel mode traced: decode the user part */
	struct ucut		cut;		/* its memory, reused from sample to sample */
	struct bts_walker	*bw;
	unsigned long		idx;		/* the sample being decoded, from 1 */
	unsigned long		malformed;	/* BTS samples with malformed records */
	void			*locs, *paths, *chains;	/* tsearch trees of struct agg */
	struct agg		**vec;
	size_t			nr_vec, cap_vec;
};

/* ---- address spaces --------------------------------------------------- */

static void s_init_aspace(void *ctx, struct tl_aspace *as)
{
	struct srep *r = ctx;

	sym_set_demangle(as->st, !r->o->no_demangle);
}

static void s_add_map(void *ctx, struct tl_aspace *as, const struct pev *ev)
{
	struct srep *r = ctx;
	char *file = strndup(ev->mmap.name, ev->mmap.name_len), *alt = NULL;
	const char *path = file, *name;
	int err;

	if (!file)
		itrace_oom();
	name = itrace_base_name(file);
	if (!strcmp(file, "[vdso]")) {
		if (!r->d->vdso_size)
			goto out;
		if (r->vdso_fd < 0)
			r->vdso_fd = itrace_mem_image("itrace-vdso", r->d->vdso, r->d->vdso_size,
						      r->vdso_path, sizeof(r->vdso_path));
		if (r->vdso_fd < 0)
			goto out;
		path = r->vdso_path;
	} else if (file[0] != '/') {
		goto out;
	} else if (r->o->exe && !r->exe) {
		path = r->o->exe;
	} else if (r->o->sysroot) {
		if (asprintf(&alt, "%s%s", r->o->sysroot, file) < 0)
			itrace_oom();
		path = alt;
	}
	err = itrace_image_add(&as->im, as->st, name, path, ev->mmap.addr, ev->mmap.len,
			       ev->mmap.pgoff);
	if (err < 0)
		fprintf(stderr, "itrace: warning: %s: %s (code there cannot be decoded)\n", path,
			strerror(-err));
	if (!r->exe && file[0] == '/') {
		r->exe = strdup(name);
		if (!r->exe)
			itrace_oom();
	}
out:
	free(alt);
	free(file);
}

static void s_switch(void *ctx, struct tl_thread *th, struct tl_aspace *as, int cpu) {}
static void s_run(void *ctx, const struct tl_run *run) {}
static void s_end_run(void *ctx, const struct tl_run *run, int walk) {}
static void s_decoder(void *ctx, struct pt_insn_decoder *i, struct pdec *b,
		      const struct tl_run *r)
{
}

/* ---- decoding one sample's trace -------------------------------------- */

static enum bkind kind_of(const struct pt_insn *in, bool *branch)
{
	*branch = true;
	switch (in->iclass) {
	case ptic_call:
		return B_CALL;
	case ptic_return:
		return B_RET;
	case ptic_jump:
		return B_JMP;
	case ptic_cond_jump:
		return B_JCC;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return itrace_is_syscall(in->raw, in->size) ? B_SYSCALL : B_FAR;
	default:
		*branch = false;
		return B_JMP;
	}
}

static void push(struct srep *r, const struct branch *b)
{
	struct sample *s = r->cur;

	s->br[s->nr_br++ % r->o->nbranches] = *b;
}

/* The pending branch went to 'to': a taken branch, or a jcc not taken. */
static void resolve(struct srep *r, uint64_t to)
{
	struct sample *s = r->cur;

	if (!s->pend)
		return;
	s->pend = false;
	if (s->pend_br.kind == B_JCC && to == s->pend_br.from + s->pend_br.size)
		return;
	s->pend_br.to = to;
	push(r, &s->pend_br);
}

static void on_insn(void *ctx, struct pt_insn_decoder *dec, const struct pt_insn *in)
{
	struct srep *r = ctx;
	struct sample *s = r->cur;
	bool branch;
	enum bkind k = kind_of(in, &branch);

	resolve(r, in->ip);
	s->insns++;
	s->last = *in;
	s->have_last = true;
	s->have_end = false;
	if (!branch)
		return;
	if (k == B_CALL) {
		if (s->depth == MAX_STACK) {
			memmove(s->stack, s->stack + 1, (MAX_STACK - 1) * sizeof(s->stack[0]));
			s->depth--;
		}
		s->stack[s->depth++] = in->ip;
	} else if (k == B_RET && s->depth) {
		s->depth--;
	}
	s->pend = true;
	s->pend_br = (struct branch){ .kind = k, .from = in->ip, .size = in->size };
}

static void on_event(void *ctx, struct pt_insn_decoder *dec, const struct pt_event *ev)
{
	struct srep *r = ctx;
	struct sample *s = r->cur;

	switch (ev->type) {
	case ptev_async_disabled:
		/* the interrupt, fault or #DB of the sample: 'at' did not run */
		resolve(r, ev->variant.async_disabled.at);
		s->have_end = true;
		s->end = ev->variant.async_disabled.at;
		break;
	case ptev_overflow:
		s->pend = false;
		s->errors++;
		snprintf(s->errmsg, sizeof(s->errmsg), "trace overflow");
		break;
	default:
		break;
	}
}

static void on_error(void *ctx, struct pt_insn_decoder *dec, int err, uint64_t last_ip)
{
	struct srep *r = ctx;
	struct sample *s = r->cur;
	uint64_t off = 0;

	pt_insn_get_offset(dec, &off);
	s->pend = false;
	if (!s->errors)
		snprintf(s->errmsg, sizeof(s->errmsg),
			 "decode error at trace offset 0x%llx (last ip 0x%llx): %s",
			 (unsigned long long)off, (unsigned long long)last_ip,
			 itrace_errstr(err));
	s->errors++;
}

/* ---- Intel BTS samples: whole records, oldest first, then zeros -------- */

static void bts_insn(void *ctx, const struct pt_insn *in)
{
	on_insn(ctx, NULL, in);
}

/* An entry to the kernel (an interrupt, an exception: the sample's), or the return */
static void bts_kernel(void *ctx, uint64_t off, uint64_t from, uint64_t to, bool entry)
{
	struct srep *r = ctx;
	struct sample *s = r->cur;

	if (!entry) {
		/* back in user mode: the flow goes on at to */
		s->have_end = false;
		return;
	}
	/* the instruction at from did not complete (bts_record() ran none) */
	resolve(r, from);
	s->have_end = true;
	s->end = from;
}

static void bts_gap(void *ctx, uint64_t off, uint64_t last_ip, const char *why)
{
	struct srep *r = ctx;
	struct sample *s = r->cur;

	s->pend = false;
	if (!s->errors)
		snprintf(s->errmsg, sizeof(s->errmsg), "gap at trace offset 0x%llx: %s",
			 (unsigned long long)off, why);
	s->errors++;
}

/*
 * Back from the kernel where BTS does not say (bts.h): no error.  The
 * branch into the kernel (a system call: rt_sigreturn, execve) went
 * where the records do not say: kept, its target unknown.
 */
static void bts_resume(void *ctx, uint64_t off, uint64_t at)
{
	resolve(ctx, 0);
}

/* A canonical x86-64 address: bits 63 to 47 all the same. */
static bool canonical(uint64_t a)
{
	return !(a >> 47) || (a >> 47) == 0x1ffff;
}

/* Bytes that are no BTS record: said on stderr, in the sample, in the exit status. */
static void bts_malformed(struct srep *r, struct sample *s, uint64_t off, const char *why)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "trace offset 0x%llx: %s", (unsigned long long)off, why);
	fprintf(stderr, "itrace: %s: sample %lu (tid %u, time %llu): %s\n", r->o->name, r->idx,
		s->ps.tid, (unsigned long long)s->ps.time, msg);
	if (!s->errors)
		snprintf(s->errmsg, sizeof(s->errmsg), "%s", msg);
	s->errors++;
	s->malformed = true;
}

/*
 * The sample's records with bts_record(): the flow from the first record's
 * branch (when its code is there, else from its target) to the last one.
 */
static void decode_bts_sample(struct srep *r, struct sample *s)
{
	static const struct bts_ops ops = {
		.insn = bts_insn, .kernel = bts_kernel, .gap = bts_gap,
		.resume = bts_resume,
	};
	const uint8_t *p = s->ps.trace;
	uint64_t off, size = s->ps.trace_size;
	struct bts_pos pos = { 0 };
	struct bts_record rec;
	char why[96];
	size_t len;
	uint8_t byte;

	if (!r->bw) {
		r->bw = bts_walker_new(&ops, r);
		if (!r->bw)
			exit(1);
	}
	for (off = 0; off < size; off += len) {
		enum bts_item it = bts_next(p + off, size - off, off, 0, &rec, &len);

		if (it == BTS_ITEM_PAD)
			continue;
		if (it == BTS_ITEM_CUT) {
			snprintf(why, sizeof(why), "a BTS record cut short: %zu of its %d bytes",
				 len, BTS_RECORD_SIZE);
			bts_malformed(r, s, off, why);
			break;
		}
		if (!canonical(rec.from) || !canonical(rec.to)) {
			snprintf(why, sizeof(why),
				 "not a BTS record (from 0x%llx, to 0x%llx: not canonical)",
				 (unsigned long long)rec.from, (unsigned long long)rec.to);
			bts_malformed(r, s, off, why);
			continue;
		}
		/* the first record's branch is the first of the flow, if its code is there */
		if (!s->nr_records++ && rec.from && rec.from < BTS_KERNEL_START &&
		    itrace_image_read(&s->as->im, &byte, 1, rec.from) == 1) {
			pos.ip = rec.from;
			pos.have = true;
		}
		bts_record(r->bw, &s->as->im, &pos, off, &rec);
	}
	/* the last branch went to the last record's target (?: into the kernel) */
	if (s->pend)
		resolve(r, pos.have && !pos.in_kernel ? pos.ip : s->have_end ? s->end : 0);
	if (!s->have_end && pos.have) {
		s->have_end = true;
		s->end = pos.ip;
	}
	if (!s->nr_records && !s->malformed)
		s->status = S_EMPTY;
	else if (!s->nr_records || (!s->insns && s->errors))
		s->status = S_ERROR;
	else
		s->status = S_DECODED;
}

static void decode_sample(struct srep *r, struct sample *s)
{
	static const struct pt_walk_ops ops = {
		.insn = on_insn, .event = on_event, .error = on_error,
	};
	struct itrace_file_header *h = &r->d->hdr;
	const uint8_t *trace = s->ps.trace;
	size_t size = s->ps.trace_size;
	struct pt_config cfg;
	int walk;

	s->br = calloc(r->o->nbranches, sizeof(*s->br));
	if (!s->br)
		itrace_oom();
	if (!s->ps.has_itrace) {
		s->status = S_MISSING;
		return;
	}
	if (!s->ps.trace_size) {
		s->status = S_EMPTY;
		return;
	}
	s->as = tl_aspace_of(r->tl, s->ps.pid, s->ps.time);
	r->cur = s;
	if (r->bts) {
		decode_bts_sample(r, s);
		return;
	}
	/* no kernel code here: its part of the trace is cut out (ucut.c) */
	if (r->user_only) {
		if (ucut_trace(&r->cut, trace, size))
			itrace_oom();
		trace = r->cut.bytes;
		size = r->cut.size;
	}
	itrace_pt_config(&cfg, trace, size, h->cpu_vendor, h->cpu_family, h->cpu_model,
			 h->cpu_stepping);
	tl_pt_config(r->tl, &cfg);
	walk = itrace_pt_walk(&cfg, s->as->im.image, &ops, r);
	if (s->pend)
		resolve(r, s->have_end ? s->end : 0);
	if (!s->have_end && s->have_last) {
		s->have_end = true;
		s->end = s->last.ip + s->last.size;
	}
	if (walk < 0) {
		snprintf(s->errmsg, sizeof(s->errmsg), "%s", pt_errstr(pt_errcode(walk)));
		s->status = S_ERROR;
	} else if (walk == 1) {
		s->status = S_NO_PSB;
	} else if (!s->insns) {
		s->status = S_ERROR;
		if (!s->errmsg[0])
			snprintf(s->errmsg, sizeof(s->errmsg), "no instruction decoded");
	} else {
		s->status = S_DECODED;
	}
}

/* ---- text ------------------------------------------------------------- */

/* "name+0xoff [module]" (module outside the program) into buf */
static const char *symstr(struct srep *r, struct symtab *st, uint64_t ip, char *buf,
			  size_t len)
{
	struct sym_info si;

	if (!st || !ip) {
		snprintf(buf, len, "?");
		return buf;
	}
	sym_lookup(st, ip, &si);
	if (!si.name)
		snprintf(buf, len, "0x%llx [%s]", (unsigned long long)ip, si.module);
	else if (r->exe && !strcmp(si.module, r->exe))
		snprintf(buf, len, "%.*s+0x%llx", sym_name_len(si.name), si.name,
			 (unsigned long long)(ip - si.start));
	else
		snprintf(buf, len, "%.*s+0x%llx [%s]", sym_name_len(si.name), si.name,
			 (unsigned long long)(ip - si.start), si.module);
	return buf;
}

/* the function name alone (or module + address) */
static const char *fnstr(struct srep *r, struct symtab *st, uint64_t ip, char *buf, size_t len)
{
	struct sym_info si;

	if (!st) {
		snprintf(buf, len, "?");
		return buf;
	}
	sym_lookup(st, ip, &si);
	if (si.name)
		snprintf(buf, len, "%.*s", sym_name_len(si.name), si.name);
	else
		snprintf(buf, len, "0x%llx [%s]", (unsigned long long)ip, si.module);
	return buf;
}

static void print_loc(struct srep *r, struct symtab *st, uint64_t ip)
{
	const char *file;
	char b[512];
	int line;

	fprintf(r->out, "0x%llx %s", (unsigned long long)ip, symstr(r, st, ip, b, sizeof(b)));
	if (st && !sym_srcline(st, ip, &file, &line))
		fprintf(r->out, " (%s:%d)", file, line);
}

static void print_sample(struct srep *r, struct sample *s, unsigned long idx)
{
	struct symtab *st = s->as ? s->as->st : tl_aspace_of(r->tl, s->ps.pid, s->ps.time)->st;
	uint64_t i, n, first;

	fprintf(r->out, "sample %lu tid %u pid %u cpu %u time %llu.%09llu period %llu ip ", idx,
		s->ps.tid, s->ps.pid, s->ps.cpu, (unsigned long long)(s->ps.time / 1000000000),
		(unsigned long long)(s->ps.time % 1000000000), (unsigned long long)s->ps.period);
	print_loc(r, st, s->ps.ip);
	fputc('\n', r->out);
	if (s->status == S_MISSING) {
		fprintf(r->out, "  trace: missing (the sample has no PERF_SAMPLE_ITRACE field)\n");
		return;
	}
	if (s->status == S_EMPTY && s->ps.trace_size) {
		fprintf(r->out, "  trace: empty (%llu bytes of zeros: no BTS record)\n",
			(unsigned long long)s->ps.trace_size);
		return;
	}
	if (s->status == S_EMPTY) {
		fprintf(r->out, "  trace: empty (size 0: no trace could be taken)\n");
		return;
	}
	fprintf(r->out, "  trace: %llu bytes", (unsigned long long)s->ps.trace_size);
	if (r->bts)
		fprintf(r->out, " (%llu BTS records)", (unsigned long long)s->nr_records);
	fprintf(r->out, ", %s", status_name[s->status]);
	if (s->status == S_NO_PSB) {
		fprintf(r->out, " (no PSB to start decoding from)\n");
		return;
	}
	fprintf(r->out, ", %llu instructions", (unsigned long long)s->insns);
	if (s->errors || s->status == S_ERROR)
		fprintf(r->out, ", %llu errors: %s", (unsigned long long)s->errors, s->errmsg);
	fputc('\n', r->out);
	if (s->status == S_ERROR)
		return;
	n = s->nr_br < r->o->nbranches ? s->nr_br : r->o->nbranches;
	first = s->nr_br - n;
	fprintf(r->out, "  last %llu branches (oldest first):\n", (unsigned long long)n);
	for (i = first; i < s->nr_br; i++) {
		struct branch *b = &s->br[i % r->o->nbranches];

		fprintf(r->out, "    %-7s ", bkind_name[b->kind]);
		print_loc(r, st, b->from);
		fprintf(r->out, " -> ");
		if (b->to)
			print_loc(r, st, b->to);
		else
			fprintf(r->out, "?");
		fputc('\n', r->out);
	}
	if (s->have_end) {
		fprintf(r->out, "  end: ");
		print_loc(r, st, s->end);
		fprintf(r->out, "%s\n", s->end == s->ps.ip ? "  = sample ip" : "  != sample ip");
	}
	if (s->depth) {
		char b[512];

		fprintf(r->out, "  stack (calls the trace saw, innermost first):");
		for (i = s->depth; i-- > 0;)
			fprintf(r->out, " %s", symstr(r, st, s->stack[i], b, sizeof(b)));
		fputc('\n', r->out);
	}
}

/* ---- aggregation ------------------------------------------------------ */

static int cmp_agg(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;
	int c = strcmp(x->loc, y->loc);

	return c ? c : strcmp(x->key, y->key);
}

static void count(void **tree, const char *loc, const char *key)
{
	struct agg k = { .key = (char *)key, .loc = (char *)loc }, **f, *n;

	f = tfind(&k, tree, cmp_agg);
	if (f) {
		(*f)->count++;
		return;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		itrace_oom();
	n->key = strdup(key);
	n->loc = strdup(loc);
	if (!n->key || !n->loc)
		itrace_oom();
	n->count = 1;
	if (!tsearch(n, tree, cmp_agg))
		itrace_oom();
}

/* A growing string */
struct sbuf {
	char	*s;
	size_t	len, cap;
};

static void sb_add(struct sbuf *b, const char *t)
{
	size_t n = strlen(t);

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			itrace_oom();
	}
	memcpy(b->s + b->len, t, n + 1);
	b->len += n;
}

static void aggregate(struct srep *r, struct sample *s)
{
	struct symtab *st = s->as ? s->as->st : tl_aspace_of(r->tl, s->ps.pid, s->ps.time)->st;
	char loc[512], b[512];
	struct sbuf path = { 0 }, chain = { 0 };
	uint64_t i, n, depth = r->o->path_depth;

	fnstr(r, st, s->ps.ip, loc, sizeof(loc));
	count(&r->locs, "", loc);
	if (s->status != S_DECODED) {
		snprintf(b, sizeof(b), "(trace %s)", status_name[s->status]);
		count(&r->paths, loc, b);
		count(&r->chains, loc, b);
		return;
	}
	n = s->nr_br < depth ? s->nr_br : depth;
	if (n > r->o->nbranches)
		n = r->o->nbranches;
	for (i = s->nr_br - n; i < s->nr_br; i++) {
		struct branch *br = &s->br[i % r->o->nbranches];

		if (path.len)
			sb_add(&path, " ; ");
		sb_add(&path, bkind_name[br->kind]);
		sb_add(&path, " ");
		sb_add(&path, symstr(r, st, br->from, b, sizeof(b)));
		sb_add(&path, " -> ");
		sb_add(&path, br->to ? symstr(r, st, br->to, b, sizeof(b)) : "?");
	}
	count(&r->paths, loc, path.s ? path.s : "(no branch)");
	for (i = 0; i < s->depth; i++) {
		sb_add(&chain, fnstr(r, st, s->stack[i], b, sizeof(b)));
		sb_add(&chain, " -> ");
	}
	sb_add(&chain, loc);
	count(&r->chains, loc, chain.s);
	free(path.s);
	free(chain.s);
}

static struct srep *walk_r;

static void collect(const void *node, VISIT v, int level)
{
	struct srep *r = walk_r;

	if (v != postorder && v != leaf)
		return;
	if (r->nr_vec == r->cap_vec) {
		r->cap_vec = r->cap_vec ? 2 * r->cap_vec : 64;
		r->vec = realloc(r->vec, r->cap_vec * sizeof(*r->vec));
		if (!r->vec)
			itrace_oom();
	}
	r->vec[r->nr_vec++] = *(struct agg * const *)node;
}

static unsigned long loc_total(struct srep *r, const char *loc);

/* Locations with the most samples first, then each one's most frequent keys. */
static int cmp_count(const void *a, const void *b)
{
	const struct agg *x = *(struct agg * const *)a, *y = *(struct agg * const *)b;
	int c = strcmp(x->loc, y->loc);

	if (c) {
		unsigned long tx = loc_total(walk_r, x->loc), ty = loc_total(walk_r, y->loc);

		if (tx != ty)
			return tx > ty ? -1 : 1;
		return c;
	}
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The tree's entries sorted by location, then most frequent first. */
static struct agg **sorted(struct srep *r, void *tree, size_t *nr)
{
	r->nr_vec = 0;
	walk_r = r;
	twalk(tree, collect);
	if (r->nr_vec)
		qsort(r->vec, r->nr_vec, sizeof(*r->vec), cmp_count);
	*nr = r->nr_vec;
	return r->vec;
}

static unsigned long loc_total(struct srep *r, const char *loc)
{
	struct agg k = { .key = (char *)loc, .loc = "" }, **f = tfind(&k, &r->locs, cmp_agg);

	return f ? (*f)->count : 0;
}

static void print_agg(struct srep *r, const char *title, void *tree)
{
	struct agg **v;
	size_t nr, i, shown = 0;
	const char *loc = NULL;

	v = sorted(r, tree, &nr);
	fprintf(r->out, "\n%s\n", title);
	for (i = 0; i < nr; i++) {
		if (!loc || strcmp(loc, v[i]->loc)) {
			loc = v[i]->loc;
			shown = 0;
			fprintf(r->out, "  %s (%lu samples):\n", loc, loc_total(r, loc));
		}
		if (shown++ < r->o->top)
			fprintf(r->out, "    %6lu  %s\n", v[i]->count, v[i]->key);
	}
}

static struct json_object *jagg(struct srep *r, void *tree)
{
	struct json_object *a = json_object_new_array();
	struct agg **v;
	size_t nr, i, shown = 0;
	const char *loc = NULL;

	v = sorted(r, tree, &nr);
	for (i = 0; i < nr; i++) {
		struct json_object *o;

		if (!loc || strcmp(loc, v[i]->loc)) {
			loc = v[i]->loc;
			shown = 0;
		}
		if (shown++ >= r->o->top)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "location", jstr(v[i]->loc));
		json_object_object_add(o, "key", jstr(v[i]->key));
		json_object_object_add(o, "count", json_object_new_uint64(v[i]->count));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *jsample(struct srep *r, struct sample *s)
{
	struct symtab *st = s->as ? s->as->st : tl_aspace_of(r->tl, s->ps.pid, s->ps.time)->st;
	struct json_object *o = json_object_new_object(), *a;
	uint64_t i, n;

	json_object_object_add(o, "tid", json_object_new_uint64(s->ps.tid));
	json_object_object_add(o, "pid", json_object_new_uint64(s->ps.pid));
	json_object_object_add(o, "cpu", json_object_new_uint64(s->ps.cpu));
	json_object_object_add(o, "time", json_object_new_uint64(s->ps.time));
	json_object_object_add(o, "period", json_object_new_uint64(s->ps.period));
	json_object_object_add(o, "ip", jloc(st, s->ps.ip));
	json_object_object_add(o, "trace_size", json_object_new_uint64(s->ps.trace_size));
	json_object_object_add(o, "trace", json_object_new_string(status_key[s->status]));
	json_object_object_add(o, "insns", json_object_new_uint64(s->insns));
	json_object_object_add(o, "errors", json_object_new_uint64(s->errors));
	if (s->errmsg[0])
		json_object_object_add(o, "error", jstr(s->errmsg));
	a = json_object_new_array();
	n = s->nr_br < r->o->nbranches ? s->nr_br : r->o->nbranches;
	for (i = s->nr_br - n; i < s->nr_br && s->status == S_DECODED; i++) {
		struct branch *b = &s->br[i % r->o->nbranches];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "kind", json_object_new_string(bkind_name[b->kind]));
		json_object_object_add(e, "from", jloc(st, b->from));
		json_object_object_add(e, "to", b->to ? jloc(st, b->to) : NULL);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "branches", a);
	if (s->have_end && s->status == S_DECODED) {
		json_object_object_add(o, "end", jloc(st, s->end));
		json_object_object_add(o, "end_is_ip", json_object_new_boolean(s->end == s->ps.ip));
	}
	a = json_object_new_array();
	for (i = s->depth; s->status == S_DECODED && i-- > 0;)
		json_object_array_add(a, jloc(st, s->stack[i]));
	json_object_object_add(o, "stack", a);
	return o;
}

/* A SAMPLE record and its time, for the report in time order across buffers */
struct srec {
	struct pev	ev;
	uint64_t	time;
	size_t		n;
};

static int cmp_srec(const void *a, const void *b)
{
	const struct srec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

static void free_agg(void *p)
{
	struct agg *a = p;

	free(a->key);
	free(a->loc);
	free(a);
}

int itrace_report_samples(struct itrace_data *d, const struct decode_opts *o, FILE *out)
{
	static const struct tl_ops tops = {
		.init_aspace = s_init_aspace, .add_map = s_add_map, .switch_to = s_switch,
		.begin_run = s_run, .end_run = s_end_run, .decoder = s_decoder,
	};
	uint64_t stype = itrace_sample_type(d);
	uint32_t tsize = itrace_attr_sample_size(d->attr, d->attr_size);
	struct srep r = { .d = d, .o = o, .out = out, .vdso_fd = -1,
			  .bts = !!(d->hdr.flags & ITRACE_FLAG_BTS) };
	struct json_object *doc = NULL, *jsamples = NULL, *c;
	struct perf_event_attr attr;
	struct pev_iter it;
	struct pev ev;
	char err[256], ename[64] = "?";
	unsigned long idx = 0;
	int n, ret = 0;
	size_t i, nr_recs = 0, cap_recs = 0;
	struct srec *recs = NULL;

	if (d->event) {
		snprintf(ename, sizeof(ename), "%s", d->event);
	} else if (d->attr_size >= 16) {
		const struct perf_event_attr *a = (const void *)d->attr;

		snprintf(ename, sizeof(ename), "type %u config 0x%llx", a->type,
			 (unsigned long long)a->config);
	}
	if (d->truncated) {
		fprintf(stderr, "itrace: %s: warning: %s: reporting what is there\n", o->name,
			d->truncated_why);
		ret = EXIT_DECODE_ERRORS;
	}
	/*
	 * The trace of a sample is of the modes its event counts
	 * (itrace_sample.c): the kernel's, unless exclude_kernel.
	 */
	r.user_only = !r.bts && itrace_attr(d, &attr) && !attr.exclude_kernel;
	r.tl = tl_new(d, o->name, &tops, &r);
	tl_done(r.tl);
	if (o->json) {
		doc = jdoc("itrace-report-samples");
		jsamples = json_object_new_array();
	} else {
		fprintf(out, "samples of event %s, up to %u bytes of %s each", ename, tsize,
			r.bts ? "BTS records" : "trace");
		if (d->cmdline_size)
			fprintf(out, ", command %s", d->cmdline);
		fputc('\n', out);
	}
	/* the samples of every buffer, in time order (the file has them as drained) */
	pev_iter_init(&it, d->perf, d->perf_size);
	while ((n = pev_next(&it, &ev, err, sizeof(err))) > 0) {
		struct pev_sample ps;
		char e2[8];

		if (ev.type == PERF_RECORD_LOST && !pev_short(&ev)) {
			r.lost_records += ev.lost.lost;
			continue;
		}
		if (ev.type != PERF_RECORD_SAMPLE)
			continue;
		if (nr_recs == cap_recs) {
			cap_recs = cap_recs ? 2 * cap_recs : 256;
			recs = realloc(recs, cap_recs * sizeof(*recs));
			if (!recs)
				itrace_oom();
		}
		recs[nr_recs].ev = ev;
		if (pev_sample_parse(&ev, stype, &ps, e2, sizeof(e2)))
			ps.time = 0;
		recs[nr_recs].time = ps.time;
		recs[nr_recs].n = nr_recs;
		nr_recs++;
	}
	if (n < 0) {
		fprintf(stderr, "itrace: %s: perf stream: %s\n", o->name, err);
		ret = EXIT_DECODE_ERRORS;
	}
	if (nr_recs)
		qsort(recs, nr_recs, sizeof(*recs), cmp_srec);
	for (i = 0; i < nr_recs; i++) {
		struct sample s = { 0 };

		if (pev_sample_parse(&recs[i].ev, stype, &s.ps, err, sizeof(err))) {
			/* counted, said: a sample that cannot be read is not dropped */
			fprintf(stderr, "itrace: %s: %s\n", o->name, err);
			r.bad_records++;
			r.nr++;
			continue;
		}
		r.idx = idx + 1;
		decode_sample(&r, &s);
		r.nr++;
		r.counts[s.status]++;
		r.malformed += s.malformed;
		if (s.status == S_DECODED && s.have_end && s.end == s.ps.ip)
			r.ends_at_ip++;
		idx++;
		if (o->samples && o->json)
			json_object_array_add(jsamples, jsample(&r, &s));
		else if (o->samples)
			print_sample(&r, &s, idx);
		aggregate(&r, &s);
		free(s.br);
	}
	if (r.counts[S_ERROR] || r.bad_records || r.malformed)
		ret = EXIT_DECODE_ERRORS;
	if (o->json) {
		json_object_object_add(doc, "file", jstr(o->name));
		json_object_object_add(doc, "event", jstr(ename));
		json_object_object_add(doc, "sample_trace", json_object_new_uint64(tsize));
		c = json_object_new_object();
		json_object_object_add(c, "samples", json_object_new_uint64(r.nr));
		for (i = 0; i <= S_ERROR; i++)
			json_object_object_add(c, status_key[i],
					       json_object_new_uint64(r.counts[i]));
		json_object_object_add(c, "unreadable", json_object_new_uint64(r.bad_records));
		json_object_object_add(c, "ends_at_ip", json_object_new_uint64(r.ends_at_ip));
		json_object_object_add(c, "lost_records", json_object_new_uint64(r.lost_records));
		json_object_object_add(doc, "counts", c);
		if (o->samples)
			json_object_object_add(doc, "samples", jsamples);
		else
			json_object_put(jsamples);
		json_object_object_add(doc, "locations", jagg(&r, r.locs));
		json_object_object_add(doc, "paths", jagg(&r, r.paths));
		json_object_object_add(doc, "chains", jagg(&r, r.chains));
		jprint(out, doc, 1);
		json_object_put(doc);
	} else {
		struct agg **v;
		size_t nr;

		fprintf(out, "%s%lu samples: %lu decoded, %lu trace missing, %lu trace empty, ",
			o->samples ? "\n" : "", r.nr, r.counts[S_DECODED], r.counts[S_MISSING],
			r.counts[S_EMPTY]);
		fprintf(out, "%lu no PSB, %lu undecodable, %lu unreadable; ", r.counts[S_NO_PSB],
			r.counts[S_ERROR], r.bad_records);
		fprintf(out, "%lu end at the sample ip; %lu records lost\n", r.ends_at_ip,
			r.lost_records);
		v = sorted(&r, r.locs, &nr);
		fprintf(out, "\nsampled locations\n");
		for (i = 0; i < nr; i++)
			fprintf(out, "  %6lu  %s\n", v[i]->count, v[i]->key);
		snprintf(err, sizeof(err), "paths into each location (the last %u branches)",
			 o->path_depth);
		print_agg(&r, err, r.paths);
		print_agg(&r, "call chains from the trace (outermost first)", r.chains);
	}
	free(recs);
	tdestroy(r.locs, free_agg);
	tdestroy(r.paths, free_agg);
	tdestroy(r.chains, free_agg);
	free(r.vec);
	bts_walker_free(r.bw);
	tl_free(r.tl);
	ucut_free(&r.cut);
	if (r.vdso_fd >= 0)
		close(r.vdso_fd);
	free((char *)r.exe);
	return ret;
}
