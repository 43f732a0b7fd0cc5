// SPDX-License-Identifier: GPL-2.0
/*
 * itrace decode: rebuild the instruction flow of a recording with libipt.
 *
 * The image is built from the executable mappings of the perf stream
 * (MMAP/MMAP2; [vdso] from the bytes saved in the file), through one image
 * section cache.  Every contiguous segment of trace gets its own decoder:
 * the block decoder for the function-level flow (the default view),
 * --stats and --summary, the instruction decoder for the views that look
 * at every instruction (--insn, --time).
 * Decode errors are reported with their trace offset, the decoder
 * resynchronizes at the next PSB and the command exits with
 * EXIT_DECODE_ERRORS: there is never a silent gap.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <intel-pt.h>
#include <search.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "perf-data.h"
#include "samples.h"
#include "json.h"
#include "perf-event.h"
#include "sym.h"
#include "disasm.h"
#include "pdec.h"
#include "timeline.h"

#define NR_KEEP		8	/* flow lines kept for the summary */
#define NR_PROG		40	/* calls into the program kept for it */
#define NR_JSON_ERRORS	100	/* errors listed in a JSON report */
#define NR_FS_CACHE	1024	/* per-function counters by symbol, direct mapped */
#define NR_RECENT	4	/* functions counted to last (block_stats()) */
#define NR_LENS		4096	/* --stats: instruction lengths, direct mapped */

struct blk_len {
	uint64_t	ip;
	int		isid;
	uint8_t		len;	/* 0: empty */
};

#define NR_LINE_CACHE	16384	/* --insn lines by address, direct mapped */

struct fstat {
	char		*key;		/* name, or module:name outside the program */
	char		*module;	/* NULL: the program's */
	char		*sym;		/* NULL: no symbol there */
	uint64_t	insns, calls, taken, not_taken, syscalls;
};

enum pending { P_NONE, P_COND, P_CALL, P_RET, P_JUMP };

/*
 * --insn: the text of an instruction's line after its count ("address
 * symbol+offset bytes  disassembly  # class"), by address.  A loop prints
 * the same lines millions of times, and disassembling and formatting each
 * one anew was most of the view's time.  The key is all that the text
 * depends on: the address; the bytes, mode and class (what capstone and
 * libipt saw); the symbol, whose name and module are pointers that stay
 * valid until the decode ends; and whether the module is the program's
 * (s->exe, set once: the cache is emptied then, add_mapping()).  The
 * texts are in one buffer (struct line_cache), each after LINE_PRE bytes
 * where the count is written before the line is.
 */
struct insn_line {
	uint64_t	ip, start;
	const char	*name, *module;	/* s->cur when the text was made */
	uint32_t	off, len;	/* in the buffer; len 0: an empty slot */
	uint8_t		raw[pt_max_insn_size];
	uint8_t		size, mode, iclass;
};

/* Room before the text of an insn_line for the count: 20 digits and ' '. */
#define LINE_PRE	21
_Static_assert(sizeof(((struct dec_count *)0)->digits) == LINE_PRE - 1,
	       "print_insn() puts the digits of a dec_count before the text");
/* The texts' buffer is emptied, and the cache with it, past this size. */
#define LINE_BUF_MAX	(64 << 20)

struct line_cache {
	struct insn_line lines[NR_LINE_CACHE];
	char		*buf;		/* the texts */
	size_t		used, cap;
	FILE		*m;		/* where a text is made: */
	char		*mbuf;		/* its open_memstream() buffer */
	size_t		mlen;
};

#define NR_LEN_CACHE	64	/* lengths of names by address, direct mapped */
struct len_cache {
	const char	*key[NR_LEN_CACHE];
	size_t		len[NR_LEN_CACHE];
};

struct dstate {
	const struct decode_opts *o;
	FILE		*out;
	struct itrace_data *d;
	struct symtab	*st;
	struct itrace_image im;
	struct disasm	*dis;		/* --insn: capstone, if it is there */
	struct line_cache *lc;		/* --insn */
	bool		no_lines;	/* ITRACE_NO_LINE_CACHE: made every time */
	struct dec_count cnt;		/* s->insns of the last line */
	char		*exe;		/* module name of the program */
	bool		slow_insn;	/* on_insn(): no fast path (skip, --time, --insn) */
	bool		blk_stats;	/* --stats, --summary on the block decoder */
	struct bts_ild	*ild;		/* its lengths of instructions, */
	struct blk_len	*lens;		/* cached, NR_LENS */
	const char	*exe_mod;	/* in_exe(): module pointers seen to be */
	const char	*other_mod;	/* the program's, and one that is not */
	char		*exe_path;	/* its path in the recording */
	int		vdso_fd;
	char		vdso_path[64];

	/* totals */
	uint64_t	insns, cond, taken, not_taken, calls, rets, jumps;
	uint64_t	syscalls, gaps, errors, far;
	uint64_t	kernel_insns;	/* at addresses of the upper half */
	bool		truncated;	/* the file was cut short */

	/* per function: a tsearch() tree by key, and the list */
	struct {
		const char	*name, *module;	/* as sym_lookup() gives them */
		uint64_t	start;
		struct fstat	*f;
	} fs_cache[NR_FS_CACHE];
	void		*fs_tree;
	struct fstat	**fsv;
	size_t		nr_fs, cap_fs;

	/* current function */
	struct sym_info	cur;
	struct fstat	*cur_fs;
	int		have_cur;
	/*
	 * the functions blocks were last counted to, most recent first: a
	 * loop that calls a few functions goes round them (sym_lookup() and
	 * fs_of() only for others); of symbol table st and thread th
	 */
	struct {
		struct sym_info	si;
		struct fstat	*f;
	} recent[NR_RECENT];
	const struct symtab *recent_st;
	const struct dthread *recent_th;

	/* branch waiting for the next IP */
	enum pending	pend;
	uint64_t	pend_next;	/* address of the next instruction */
	struct fstat	*pend_fs;
	struct sym_info	pend_from;
	int		depth;

	/* threads, address spaces, buffers (timeline.c) */
	struct timeline	*tl;
	struct dthread	*th;		/* the thread whose state is loaded */
	int		cpu;		/* the buffer being decoded (-1: one) */
	bool		threads;	/* the recording knows its threads */
	bool		timed;		/* ... and the time of its trace */
	struct len_cache name_lens;	/* fast_flow_line(): sym_name_len() */
	struct len_cache mod_lens;	/* and strlen() of module names */
	uint64_t	time_tsc;	/* cur_time(): the last TSC converted, */
	uint64_t	time_ns;	/* to this perf time (ns) */
	bool		skip;		/* --tid, --time: not this part */
	bool		ctx_shown;	/* the context line of this part printed */
	struct pt_insn_decoder *idec;	/* the decoder of the current run */
	struct pdec	*bdec;
	void		*bid_checked;	/* paths whose build-id was checked */
	bool		kernel_ready;	/* --kernel: add it to new address spaces */

	/* flow lines for the summary (malloc'd) */
	char		*first[NR_KEEP];
	struct kept {			/* the last ones, made into text at the end */
		uint64_t	insns, ip;
		const char	*what;
		int		indent;
		struct sym_info	si;
	}		last[NR_KEEP];
	uint64_t	nr_lines;
	char		*prog[NR_PROG];		/* calls into the program */
	uint64_t	nr_prog;
	const struct tl_run *run;	/* the run being decoded (its offsets) */

	/* JSON */
	struct json_object *jerrors;	/* the report's "errors" */

	/* progress on stderr */
	uint64_t	next_check;
	struct timespec	start, shown;
	bool		progress_shown;
};

/*
 * A thread's part of the state: its function counters, the function it is
 * in, the branch waiting for its target, its call depth.  The timeline
 * switches threads where one's trace ends and another's begins
 * (switch_thread()); the totals of the report are the sums over threads.
 */
struct dthread {
	struct tl_thread *t;
	void		*fs_tree;
	struct fstat	**fsv;
	size_t		nr_fs, cap_fs;
	struct sym_info	cur;
	struct fstat	*cur_fs;
	int		have_cur;
	enum pending	pend;
	uint64_t	pend_next;
	struct fstat	*pend_fs;
	struct sym_info	pend_from;
	int		depth;
	bool		selected;	/* --tid */
	int		last_cpu;
};

/* ---- per-function counters ------------------------------------------- */

static int cmp_fs_key(const void *a, const void *b)
{
	return strcmp(((const struct fstat *)a)->key, ((const struct fstat *)b)->key);
}

static struct fstat *fs_get(struct dstate *s, const char *key, const struct sym_info *si,
			    bool prog)
{
	struct fstat k = { .key = (char *)key }, *f, **found;

	found = tfind(&k, &s->fs_tree, cmp_fs_key);
	if (found)
		return *found;
	f = calloc(1, sizeof(*f));
	if (!f)
		itrace_oom();
	f->key = strdup(key);
	f->module = prog ? NULL : strdup(si->module);
	f->sym = si->name ? strndup(si->name, sym_name_len(si->name)) : NULL;
	if (!f->key || (!prog && !f->module) || (si->name && !f->sym))
		itrace_oom();
	if (!tsearch(f, &s->fs_tree, cmp_fs_key))
		itrace_oom();
	if (s->nr_fs == s->cap_fs) {
		s->cap_fs = s->cap_fs ? 2 * s->cap_fs : 256;
		s->fsv = realloc(s->fsv, s->cap_fs * sizeof(*s->fsv));
		if (!s->fsv)
			itrace_oom();
	}
	s->fsv[s->nr_fs++] = f;
	return f;
}

/*
 * Is si's module the program?  Asked for every flow line: the module
 * names sym_lookup() gives are stable, so the last two pointers compared
 * (the program and the library it calls, typically) answer without a
 * strcmp().
 */
static int in_exe(struct dstate *s, const struct sym_info *si)
{
	if (!s->exe || !si->module)
		return 0;
	if (si->module == s->exe_mod)
		return 1;
	if (si->module == s->other_mod)
		return 0;
	if (!strcmp(si->module, s->exe)) {
		s->exe_mod = si->module;
		return 1;
	}
	s->other_mod = si->module;
	return 0;
}

static struct fstat *fs_of(struct dstate *s, const struct sym_info *si)
{
	uint64_t start = si->name ? si->start : 0;
	unsigned int h = (start ^ (start >> 12) ^ (uintptr_t)si->module) % NR_FS_CACHE;
	struct fstat *f;
	char *key;
	int n;

	/* the names sym_lookup() gives are stable: the pointers identify them */
	if (s->fs_cache[h].f && s->fs_cache[h].start == start &&
	    s->fs_cache[h].name == si->name && s->fs_cache[h].module == si->module)
		return s->fs_cache[h].f;

	if (si->name && in_exe(s, si))
		n = asprintf(&key, "%.*s", sym_name_len(si->name), si->name);
	else if (si->name)
		n = asprintf(&key, "%s:%.*s", si->module, sym_name_len(si->name), si->name);
	else
		n = asprintf(&key, "%s:[unknown]", si->module);
	if (n < 0)
		itrace_oom();
	f = fs_get(s, key, si, si->name && in_exe(s, si));
	free(key);
	s->fs_cache[h].name = si->name;
	s->fs_cache[h].module = si->module;
	s->fs_cache[h].start = start;
	s->fs_cache[h].f = f;
	return f;
}

/* The recent function whose symbol covers ip: its index, NR_RECENT if none. */
static unsigned int recent_find(struct dstate *s, uint64_t ip)
{
	unsigned int i;

	if (s->recent_st != s->st || s->recent_th != s->th) {
		memset(s->recent, 0, sizeof(s->recent));
		s->recent_st = s->st;
		s->recent_th = s->th;
	}
	for (i = 0; i < NR_RECENT && s->recent[i].f; i++) {
		const struct sym_info *si = &s->recent[i].si;

		if (ip - si->start < si->end - si->start)
			return i;
	}
	return NR_RECENT;
}

/*
 * The function of ip, into s->cur and s->cur_fs: one of the recent ones
 * if its symbol covers ip (as s->cur's does for the next instructions),
 * else sym_lookup() and fs_of().
 */
static void recent_cur(struct dstate *s, uint64_t ip)
{
	unsigned int i = recent_find(s, ip);

	if (i == NR_RECENT) {
		i = NR_RECENT - 1;
		sym_lookup(s->st, ip, &s->recent[i].si);
		s->recent[i].f = fs_of(s, &s->recent[i].si);
	}
	s->cur = s->recent[i].si;
	s->cur_fs = s->recent[i].f;
	s->have_cur = 1;
	/* to the front */
	memmove(&s->recent[1], &s->recent[0], i * sizeof(s->recent[0]));
	s->recent[0].si = s->cur;
	s->recent[0].f = s->cur_fs;
}

/* The counters of ip's function, its symbol into *si (s->cur kept). */
static struct fstat *recent_fs(struct dstate *s, uint64_t ip, struct sym_info *si)
{
	unsigned int i = recent_find(s, ip);

	if (i < NR_RECENT) {
		*si = s->recent[i].si;
		return s->recent[i].f;
	}
	sym_lookup(s->st, ip, si);
	return fs_of(s, si);
}

/* ---- output ---------------------------------------------------------- */

/* "name+0xoff [module]": the module only outside the program */
static void print_sym(struct dstate *s, FILE *f, uint64_t ip, const struct sym_info *si)
{
	bool none = in_exe(s, si) || !si->module || !strcmp(si->module, "?");
	const char *mod = none ? "" : si->module;
	const char *sep = *mod ? " [" : "", *end = *mod ? "]" : "";

	if (!si->name)
		fprintf(f, "0x%llx%s%s%s", (unsigned long long)ip, sep, mod, end);
	else if (ip != si->start)
		fprintf(f, "%.*s+0x%llx%s%s%s", sym_name_len(si->name), si->name,
			(unsigned long long)(ip - si->start), sep, mod, end);
	else
		fprintf(f, "%.*s%s%s%s", sym_name_len(si->name), si->name, sep, mod, end);
}

/* v in decimal (right-aligned in width) or hex at p: the length written */
static size_t put_dec(char *p, uint64_t v, int width)
{
	char t[24];
	int n = sizeof(t), i = 0;

	/*
	 * Two digits a 64-bit division: every flow line has one or two
	 * numbers; the 32-bit r / 10 and r % 10 compile to a multiply.
	 */
	while (v >= 100) {
		unsigned int r = v % 100;

		v /= 100;
		t[--n] = '0' + r % 10;
		t[--n] = '0' + r / 10;
	}
	if (v >= 10) {
		t[--n] = '0' + v % 10;
		t[--n] = '0' + v / 10;
	} else {
		t[--n] = '0' + v;
	}
	for (; i < width - (int)sizeof(t) + n; i++)
		p[i] = ' ';
	memcpy(p + i, t + n, sizeof(t) - n);
	return i + sizeof(t) - n;
}

static size_t put_hex(char *p, uint64_t v)
{
	static const char dig[] = "0123456789abcdef";
	char t[16];
	int n = 0, i = 0;

	do {
		t[n++] = dig[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		p[i++] = t[--n];
	return i;
}

/* The perf time (ns) of the decoder's position; 0 when unknown. */
static uint64_t cur_time(struct dstate *s)
{
	uint32_t lost_mtc, lost_cyc;
	uint64_t tsc;
	int r;

	if (!s->timed || (!s->idec && !s->bdec))
		return 0;
	r = s->idec ? pt_insn_time(s->idec, &tsc, &lost_mtc, &lost_cyc) :
		      pdec_time(s->bdec, &tsc, &lost_mtc, &lost_cyc);
	if (r < 0)
		return 0;
	/* most lines are at the time of the line before */
	if (tsc != s->time_tsc) {
		s->time_tsc = tsc;
		s->time_ns = tl_tsc_to_ns(s->tl, tsc);
	}
	return s->time_ns;
}

/* "SECONDS.NANOSECONDS " (a seconds field of at least 5 wide) at p */
static size_t put_time_fmt(char *p, uint64_t ns)
{
	size_t n = put_dec(p, ns / 1000000000, 5);
	uint64_t frac = ns % 1000000000;
	int i;

	p[n++] = '.';
	for (i = 8; i >= 0; i--, frac /= 10)
		p[n + i] = '0' + frac % 10;
	n += 9;
	p[n++] = ' ';
	return n;
}

/*
 * "SECONDS.NANOSECONDS " as perf script prints time, at p, which has room
 * for 32 bytes (20 digits, the point, 9 digits, the space and a spare)
 */
static size_t put_time(char *p, uint64_t ns)
{
	/* timing packets are rarer than lines: most lines repeat the last time */
	static __thread uint64_t last_ns = UINT64_MAX;
	static __thread char last[32];
	static __thread size_t last_n;

	/* p has room for all of last: a copy of a constant size is inline */
	if (ns != last_ns) {
		last_n = put_time_fmt(last, ns);
		last_ns = ns;
	}
	memcpy(p, last, sizeof(last));
	return last_n;
}

/*
 * Before the first line of a thread's part of the trace (text views of a
 * recording that knows its threads): which thread, process, CPU, when.
 */
static void context_line(struct dstate *s)
{
	const struct tl_thread *t;
	char tb[40];
	uint64_t ns;

	if (s->ctx_shown || !s->threads || s->o->json || !s->th)
		return;
	s->ctx_shown = true;
	t = s->th->t;
	ns = cur_time(s);
	tb[put_time(tb, ns) - 1] = 0;
	fprintf(s->out, "[thread %u pid %u", t->tid, t->pid);
	if (s->cpu >= 0)
		fprintf(s->out, " cpu %d", s->cpu);
	if (ns)
		fprintf(s->out, " at %s", tb + strspn(tb, " "));
	fprintf(s->out, "%s%s]\n", t->comm[0] ? " " : "", t->comm);
}

/* tid, cpu and time of a JSON line, when the recording has them */
static void jcontext(struct dstate *s, struct json_object *o)
{
	uint64_t ns = cur_time(s);

	if (s->threads && s->th) {
		json_object_object_add(o, "tid", json_object_new_int64(s->th->t->tid));
		json_object_object_add(o, "pid", json_object_new_int64(s->th->t->pid));
		if (s->cpu >= 0)
			json_object_object_add(o, "cpu", json_object_new_int(s->cpu));
	}
	if (ns)
		json_object_object_add(o, "time", json_object_new_uint64(ns));
}

/* the two digits of 0 to 99 (no NUL) */
static const char dec_pairs[100][2] = {
	"00", "01", "02", "03", "04", "05", "06", "07", "08", "09",
	"10", "11", "12", "13", "14", "15", "16", "17", "18", "19",
	"20", "21", "22", "23", "24", "25", "26", "27", "28", "29",
	"30", "31", "32", "33", "34", "35", "36", "37", "38", "39",
	"40", "41", "42", "43", "44", "45", "46", "47", "48", "49",
	"50", "51", "52", "53", "54", "55", "56", "57", "58", "59",
	"60", "61", "62", "63", "64", "65", "66", "67", "68", "69",
	"70", "71", "72", "73", "74", "75", "76", "77", "78", "79",
	"80", "81", "82", "83", "84", "85", "86", "87", "88", "89",
	"90", "91", "92", "93", "94", "95", "96", "97", "98", "99",
};

/* the two digits of v < 100 at p */
static inline void put2(char *p, unsigned int v)
{
	memcpy(p, dec_pairs[v], 2);
}

/*
 * The digits above the last 4 change only every 10000: until they do,
 * the last 4 are written from a table, two at a time; else the count is
 * converted whole, two digits a step (adding the difference to the last
 * line's digits took as many steps as its carry, which branch prediction
 * cannot know).  The spaces before the digits are rewritten only where
 * the count got shorter than the last.
 */
void dec_count_set(struct dec_count *c, uint64_t v)
{
	char *const end = c->digits + sizeof(c->digits);
	const uint64_t hi = v / 10000;
	const uint32_t lo = v % 10000;
	char *p = end;
	uint64_t x = v;
	int n;

	if (hi && hi == c->v / 10000 && c->n) {
		put2(end - 4, lo / 100);
		put2(end - 2, lo % 100);
		c->v = v;
		return;
	}
	while (x >= 100) {
		p -= 2;
		put2(p, x % 100);
		x /= 100;
	}
	if (x >= 10) {
		p -= 2;
		put2(p, x);
	} else {
		*--p = '0' + x;
	}
	n = end - p;
	if (!c->n)
		memset(c->digits, ' ', sizeof(c->digits) - n);
	else if (n < c->n)
		memset(end - c->n, ' ', c->n - n);
	c->n = n;
	c->v = v;
}

/*
 * The length of a name sym_lookup() gave, by its address: the names are
 * the symbol tables', which live as long as the decode (tl_free()), so the
 * address stands for the text.  Most flow lines name a function a line
 * before them named.
 */
static size_t cached_len(struct len_cache *c, const char *name, bool sym)
{
	unsigned int h = ((uintptr_t)name >> 3) % NR_LEN_CACHE;

	if (c->key[h] != name) {
		c->key[h] = name;
		c->len[h] = sym ? (size_t)sym_name_len(name) : strlen(name);
	}
	return c->len[h];
}

/*
 * A flow line as print_sym() and "%10llu %-7s %*s" would make it, built in
 * a buffer: the default view prints tens of millions of them, and printf's
 * formatting was most of its time.  Names too long for the buffer take the
 * printf path.
 */
static void fast_flow_line(struct dstate *s, const char *what, int indent, uint64_t ip,
			   const struct sym_info *si)
{
	const char *mod = !si->module || in_exe(s, si) ||
			  (si->module[0] == '?' && !si->module[1]) ? "" : si->module;
	size_t nl = si->name ? cached_len(&s->name_lens, si->name, true) : 0;
	size_t ml = *mod ? cached_len(&s->mod_lens, mod, false) : 0, n = 0;
	char buf[512];
	int i;

	context_line(s);
	if (s->timed)
		n = put_time(buf, cur_time(s));
	if (nl + ml + 2 * indent + 100 > sizeof(buf)) {
		fwrite(buf, 1, n, s->out);
		fprintf(s->out, "%10llu %-7s %*s", (unsigned long long)s->insns, what,
			2 * indent, "");
		print_sym(s, s->out, ip, si);
		fputc('\n', s->out);
		return;
	}
	/* "%10llu": a copy of a constant size in the common case */
	dec_count_set(&s->cnt, s->insns);
	if (s->cnt.n <= 10) {
		memcpy(buf + n, s->cnt.digits + sizeof(s->cnt.digits) - 10, 10);
		n += 10;
	} else {
		memcpy(buf + n, s->cnt.digits + sizeof(s->cnt.digits) - s->cnt.n, s->cnt.n);
		n += s->cnt.n;
	}
	buf[n++] = ' ';
	for (i = 0; what[i]; i++)
		buf[n++] = what[i];
	for (; i < 7; i++)
		buf[n++] = ' ';
	buf[n++] = ' ';
	memset(buf + n, ' ', 2 * indent);
	n += 2 * indent;
	if (!si->name) {
		buf[n++] = '0';
		buf[n++] = 'x';
		n += put_hex(buf + n, ip);
	} else {
		memcpy(buf + n, si->name, nl);
		n += nl;
		if (ip != si->start) {
			memcpy(buf + n, "+0x", 3);
			n += 3;
			n += put_hex(buf + n, ip - si->start);
		}
	}
	if (ml) {
		buf[n++] = ' ';
		buf[n++] = '[';
		memcpy(buf + n, mod, ml);
		n += ml;
		buf[n++] = ']';
	}
	buf[n++] = '\n';
	fwrite_unlocked(buf, 1, n, s->out);
}

/* a copy of line into *slot, in place of the one there */
static void keep(char **slot, const char *line)
{
	char *c = strdup(line);

	if (!c)
		itrace_oom();
	free(*slot);
	*slot = c;
}

/* One line of the function-level flow. */
/*
 * A flow line as JSON; an "[error]" line (@msg set) also has the trace
 * offset and libipt's message, as the error report on stderr.
 */
static void flow_json(struct dstate *s, const char *what, uint64_t ip, uint64_t off,
		      const char *msg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string(what));
	json_object_object_add(o, "insns", json_object_new_uint64(s->insns));
	json_object_object_add(o, "depth", json_object_new_int(s->depth));
	json_object_object_add(o, "at", ip ? jloc(s->st, ip) : NULL);
	if (msg) {
		json_object_object_add(o, "offset", json_object_new_uint64(off));
		json_object_object_add(o, "message", jstr(msg));
	}
	jcontext(s, o);
	jprint(s->out, o, 0);
	json_object_put(o);
}

static void flow_line(struct dstate *s, const char *what, uint64_t ip,
		      const struct sym_info *si)
{
	int indent = s->depth < 0 ? 0 : (s->depth > 30 ? 30 : s->depth);
	char *line = NULL;
	size_t len;
	bool prog;
	FILE *m;

	s->nr_lines++;
	if (s->o->mode == DECODE_FLOW && s->o->json) {
		flow_json(s, what, ip, 0, NULL);
		return;
	}
	if (s->o->mode == DECODE_FLOW) {
		fast_flow_line(s, what, indent, ip, si);
		return;
	}
	/* only the summary keeps lines: the other views do not format them */
	if (s->o->mode != DECODE_SUMMARY)
		return;
	/* what a line's text needs, for the last ones (most are not kept) */
	s->last[(s->nr_lines - 1) % NR_KEEP] = (struct kept){
		.insns = s->insns, .ip = ip, .what = what, .indent = indent, .si = *si,
	};
	prog = (!strcmp(what, "call") || !strcmp(what, "syscall")) && in_exe(s, si);
	if (s->nr_lines > NR_KEEP && !(prog && s->nr_prog < NR_PROG)) {
		s->nr_prog += prog;
		return;
	}
	m = open_memstream(&line, &len);
	if (!m)
		itrace_oom();
	fprintf(m, "%10llu %-7s %*s", (unsigned long long)s->insns, what, 2 * indent, "");
	print_sym(s, m, ip, si);
	if (fclose(m))
		itrace_oom();
	if (s->nr_lines <= NR_KEEP)
		keep(&s->first[s->nr_lines - 1], line);
	if (prog) {
		if (s->nr_prog < NR_PROG)
			keep(&s->prog[s->nr_prog], line);
		s->nr_prog++;
	}
	free(line);
}

/* --time: is the decoder's position outside the range? */
static bool time_outside(struct dstate *s)
{
	uint64_t t;

	if (!s->timed)
		return true;	/* no time: nothing is in the range (warned) */
	t = cur_time(s);
	return t < s->o->time_from || (s->o->time_to && t > s->o->time_to);
}

/* The same, inline: without --time, at every instruction or block, a test */
static inline bool out_of_time(struct dstate *s)
{
	return (s->o->time_from || s->o->time_to) && time_outside(s);
}

static void note(struct dstate *s, const char *what, uint64_t ip)
{
	struct sym_info si = { .name = NULL, .module = "", .start = ip };

	if (out_of_time(s))
		return;
	if (ip)
		sym_lookup(s->st, ip, &si);
	flow_line(s, what, ip, &si);
}

static const char *iclass_name(enum pt_insn_class c)
{
	switch (c) {
	case ptic_call:		return "call";
	case ptic_return:	return "ret";
	case ptic_jump:		return "jmp";
	case ptic_cond_jump:	return "jcc";
	case ptic_far_call:	return "far-call";
	case ptic_far_return:	return "far-ret";
	case ptic_far_jump:	return "far-jmp";
	case ptic_ptwrite:	return "ptwrite";
	case ptic_other:	return "";
	default:		return "?";
	}
}

/* The trace offset of the current decoder's offset off. */
static uint64_t trace_off(const struct dstate *s, uint64_t off)
{
	return s->run ? tl_run_offset(s->run, off) : off;
}

/* Progress on stderr, at most twice a second, once decoding took a second. */
static void progress(struct dstate *s, uint64_t off)
{
	struct timespec now;
	double el, done;

	if (!s->o->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	el = now.tv_sec - s->start.tv_sec + (now.tv_nsec - s->start.tv_nsec) / 1e9;
	if (el < 1 || now.tv_sec - s->shown.tv_sec + (now.tv_nsec - s->shown.tv_nsec) / 1e9 < 0.5)
		return;
	s->shown = now;
	done = s->d->trace_size && s->run ?
	       100.0 * (s->run->bytes - s->d->trace + trace_off(s, off) - s->run->offset) /
	       s->d->trace_size : 100;
	fprintf(stderr, "\ritrace: decoding %s: %3.0f%% of %.1f MiB of trace, %llu instructions%s",
		s->o->name, done > 100 ? 100 : done, s->d->trace_size / 1048576.0,
		(unsigned long long)s->insns, "\033[K");
	s->progress_shown = true;
}

static void progress_done(struct dstate *s)
{
	if (s->progress_shown)
		fprintf(stderr, "\r\033[K");
}

/* ---- the instruction flow -------------------------------------------- */

/* The previous instruction was a branch: next_ip tells where it went. */
static void resolve(struct dstate *s, uint64_t next_ip)
{
	struct sym_info t;

	switch (s->pend) {
	case P_NONE:
		return;
	case P_COND:
		if (next_ip == s->pend_next) {
			s->not_taken++;
			if (s->pend_fs)
				s->pend_fs->not_taken++;
		} else {
			s->taken++;
			if (s->pend_fs)
				s->pend_fs->taken++;
		}
		break;
	case P_CALL:
		if (s->o->mode != DECODE_FLOW)
			recent_fs(s, next_ip, &t)->calls++;
		else
			sym_lookup(s->st, next_ip, &t);
		s->depth++;
		flow_line(s, "call", next_ip, &t);
		break;
	case P_RET:
		sym_lookup(s->st, next_ip, &t);
		s->depth--;
		flow_line(s, "return", next_ip, &t);
		break;
	case P_JUMP:
		if (next_ip >= s->pend_from.start && next_ip < s->pend_from.end)
			break;
		sym_lookup(s->st, next_ip, &t);
		if (t.name && s->pend_from.name && t.start == s->pend_from.start)
			break;
		flow_line(s, "jump", next_ip, &t);
		break;
	}
	s->pend = P_NONE;
}

/* A system call: SYSCALL, SYSENTER, or INT 0x80 (32-bit programs). */
bool itrace_is_syscall(const uint8_t *raw, size_t size)
{
	if (size < 2)
		return false;
	return (raw[0] == 0x0f && (raw[1] == 0x05 || raw[1] == 0x34)) ||
	       (raw[0] == 0xcd && raw[1] == 0x80);
}

/* The text of an --insn line after the count, as printf makes it. */
static void insn_text(struct dstate *s, FILE *f, const struct pt_insn *in)
{
	static const char dig[] = "0123456789abcdef";
	char hex[1 + 2 * sizeof(in->raw)];
	uint8_t i;

	fprintf(f, "%016llx ", (unsigned long long)in->ip);
	print_sym(s, f, in->ip, &s->cur);
	hex[0] = ' ';
	for (i = 0; i < in->size; i++) {
		hex[1 + 2 * i] = dig[in->raw[i] >> 4];
		hex[2 + 2 * i] = dig[in->raw[i] & 15];
	}
	fwrite(hex, 1, 1 + 2 * in->size, f);
	if (s->dis) {
		const char *text = disasm_insn(s->dis, in->raw, in->size, in->ip, in->mode);

		fprintf(f, "  %s", text ? text : "(bad)");
	}
	fprintf(f, "%s%s\n", *iclass_name(in->iclass) ? "  # " : "", iclass_name(in->iclass));
}

static void flush_lines(struct dstate *s)
{
	if (!s->lc)
		return;
	memset(s->lc->lines, 0, sizeof(s->lc->lines));
	s->lc->used = 0;
}

static void free_lines(struct dstate *s)
{
	if (!s->lc)
		return;
	if (s->lc->m)
		fclose(s->lc->m);
	free(s->lc->mbuf);
	free(s->lc->buf);
	free(s->lc);
	s->lc = NULL;
}

/* The cached line of in (insn_text() after LINE_PRE bytes), made on a miss. */
static char *insn_line(struct dstate *s, const struct pt_insn *in, size_t *len)
{
	struct line_cache *c = s->lc;
	struct insn_line *l;
	size_t n;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			itrace_oom();
		c->m = open_memstream(&c->mbuf, &c->mlen);
		if (!c->m)
			itrace_oom();
		s->lc = c;
	}
	l = &c->lines[((in->ip * 0x9e3779b97f4a7c15ULL) >> 32) % NR_LINE_CACHE];
	if (l->len && l->ip == in->ip && l->name == s->cur.name && l->start == s->cur.start &&
	    l->module == s->cur.module && l->size == in->size && l->mode == in->mode &&
	    l->iclass == in->iclass) {
		/* a few bytes: a loop, not a call of memcmp() */
		for (n = 0; n < in->size && l->raw[n] == in->raw[n]; n++)
			;
		if (n == in->size) {
			*len = l->len;
			return c->buf + l->off;
		}
	}
	/* the stream's size is its position when flushed (POSIX) */
	rewind(c->m);
	fprintf(c->m, "%*s", LINE_PRE, "");
	insn_text(s, c->m, in);
	if (fflush(c->m))
		itrace_oom();
	n = c->mlen;
	if (c->used + n > c->cap) {
		if (c->used + n > LINE_BUF_MAX) {
			flush_lines(s);
		} else {
			char *b;

			c->cap = c->cap ? 2 * c->cap : 1 << 16;
			while (c->cap < c->used + n)
				c->cap *= 2;
			b = realloc(c->buf, c->cap);
			if (!b)
				itrace_oom();
			c->buf = b;
		}
	}
	*len = n;
	if (c->used + n > c->cap)	/* no room for it (longer than LINE_BUF_MAX): not kept */
		return c->mbuf;
	memcpy(c->buf + c->used, c->mbuf, n);
	l->ip = in->ip;
	l->name = s->cur.name;
	l->start = s->cur.start;
	l->module = s->cur.module;
	l->off = c->used;
	l->len = n;
	memcpy(l->raw, in->raw, in->size);
	l->size = in->size;
	l->mode = in->mode;
	l->iclass = in->iclass;
	c->used += n;
	return c->buf + l->off;
}

static void print_insn(struct dstate *s, const struct pt_insn *in)
{
	size_t len, n;
	char *l;
	uint8_t i;

	if (s->o->json) {
		struct json_object *o = json_object_new_object();
		char hex[2 * sizeof(in->raw) + 1];
		const char *text;

		for (i = 0; i < in->size; i++)
			snprintf(hex + 2 * i, 3, "%02x", in->raw[i]);
		hex[2 * in->size] = 0;
		json_object_object_add(o, "kind", json_object_new_string("insn"));
		json_object_object_add(o, "insns", json_object_new_uint64(s->insns));
		json_object_object_add(o, "at", jloc(s->st, in->ip));
		json_object_object_add(o, "bytes", json_object_new_string(hex));
		json_object_object_add(o, "class", json_object_new_string(iclass_name(in->iclass)));
		text = s->dis ? disasm_insn(s->dis, in->raw, in->size, in->ip, in->mode) : NULL;
		if (text)
			json_object_object_add(o, "asm", json_object_new_string(text));
		jcontext(s, o);
		jprint(s->out, o, 0);
		json_object_put(o);
		return;
	}
	if (!s->ctx_shown)
		context_line(s);
	if (s->no_lines) {
		fprintf(s->out, "%10llu ", (unsigned long long)s->insns);
		insn_text(s, s->out, in);
		return;
	}
	/* "%10llu " and the cached rest, in one piece: no printf in the common case */
	dec_count_set(&s->cnt, s->insns);
	l = insn_line(s, in, &len);
	memcpy(l, s->cnt.digits, sizeof(s->cnt.digits));
	l[LINE_PRE - 1] = ' ';
	n = LINE_PRE - 1 - (s->cnt.n > 10 ? s->cnt.n : 10);
	fwrite_unlocked(l + n, 1, len - n, s->out);
}

static void on_insn(void *ctx, struct pt_insn_decoder *dec, const struct pt_insn *in)
{
	struct dstate *s = ctx;

	/*
	 * Most instructions are no branch, in the function of the one before,
	 * with nothing pending: count them and go (--stats and the counting
	 * views; --insn prints each, --time checks each).
	 */
	if (in->iclass == ptic_other && !s->pend && s->have_cur && !s->slow_insn &&
	    in->ip - s->cur.start < s->cur.end - s->cur.start && s->insns + 1 < s->next_check) {
		s->insns++;
		s->cur_fs->insns++;
		s->kernel_insns += in->ip >> 63;
		return;
	}
	/* the cheap tests first: this runs for every instruction */
	if (s->skip || out_of_time(s))
		return;
	if (s->pend)
		resolve(s, in->ip);
	if (!s->have_cur || in->ip < s->cur.start || in->ip >= s->cur.end) {
		sym_lookup(s->st, in->ip, &s->cur);
		s->cur_fs = fs_of(s, &s->cur);
		s->have_cur = 1;
	}
	s->insns++;
	s->cur_fs->insns++;
	if (in->ip >> 63)
		s->kernel_insns++;
	if (s->insns >= s->next_check) {
		uint64_t off = 0;

		s->next_check = s->insns + (1 << 18);
		pt_insn_get_offset(dec, &off);
		progress(s, off);
	}

	if (s->o->mode == DECODE_INSN)
		print_insn(s, in);

	switch (in->iclass) {
	case ptic_cond_jump:
		s->cond++;
		s->pend = P_COND;
		s->pend_next = in->ip + in->size;
		s->pend_fs = s->cur_fs;
		break;
	case ptic_call:
		s->calls++;
		s->pend = P_CALL;
		break;
	case ptic_return:
		s->rets++;
		s->pend = P_RET;
		break;
	case ptic_jump:
		s->jumps++;
		s->pend = P_JUMP;
		s->pend_from = s->cur;
		break;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		s->far++;
		if (itrace_is_syscall(in->raw, in->size)) {
			s->syscalls++;
			s->cur_fs->syscalls++;
			flow_line(s, "syscall", in->ip, &s->cur);
		}
		break;
	default:
		break;
	}
}

/*
 * The class of a block's last instruction, from its bytes, where libipt's
 * block decoder does not give it (ptic_error: blocks it served from its
 * cache that end in an indirect branch).  Only the branches matter.
 */
static enum pt_insn_class classify(const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0x2e || b[i] == 0x3e ||
			 b[i] == 0x26 || b[i] == 0x36 || b[i] == 0x64 || b[i] == 0x65 ||
			 b[i] == 0xf0 || b[i] == 0xf2 || b[i] == 0xf3))
		i++;
	if (i < n && b[i] >= 0x40 && b[i] <= 0x4f)
		i++;
	if (i >= n)
		return ptic_other;
	switch (b[i]) {
	case 0x70 ... 0x7f:
	case 0xe0 ... 0xe3:
		return ptic_cond_jump;
	case 0xe8:
		return ptic_call;
	case 0xe9: case 0xeb:
		return ptic_jump;
	case 0xc2: case 0xc3:
		return ptic_return;
	case 0xca: case 0xcb: case 0xcf:
		return ptic_far_return;
	case 0xcc: case 0xcd: case 0xce:
		return ptic_far_call;
	case 0xea:
		return ptic_far_jump;
	case 0x0f:
		if (i + 1 >= n)
			return ptic_other;
		if (b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)
			return ptic_cond_jump;
		if (b[i + 1] == 0x05 || b[i + 1] == 0x34)
			return ptic_far_call;
		if (b[i + 1] == 0x07 || b[i + 1] == 0x35)
			return ptic_far_return;
		return ptic_other;
	case 0xff:
		if (i + 1 >= n)
			return ptic_other;
		switch ((b[i + 1] >> 3) & 7) {
		case 2: return ptic_call;
		case 3: return ptic_far_call;
		case 4: return ptic_jump;
		case 5: return ptic_far_jump;
		}
		return ptic_other;
	}
	return ptic_other;
}

/* The length of an instruction a block decoder gave: cached, 0 if unknown. */
static unsigned int insn_len(struct dstate *s, const struct pt_block *b, uint64_t ip)
{
	struct blk_len *c = &s->lens[(ip ^ (ip >> 12) ^ b->isid) % NR_LENS];
	uint8_t raw[pt_max_insn_size];
	int n, len, ic;

	if (c->len && c->ip == ip && c->isid == b->isid)
		return c->len;
	if (ip == b->end_ip && b->truncated)
		return b->size;
	if (b->mode != ptem_64bit && b->mode != ptem_32bit)
		return 0;
	n = pt_iscache_read(s->im.iscache, raw, sizeof(raw), b->isid, ip);
	if (n <= 0)
		return 0;
	len = bts_ild(s->ild, raw, n, ip, b->mode == ptem_32bit, &ic);
	if (len <= 0)
		return 0;
	c->ip = ip;
	c->isid = b->isid;
	c->len = len;
	return len;
}

/*
 * --stats on blocks: a block's instructions to their functions (all to
 * one, unless it runs on into the next: then one by one), and where its
 * conditional branch would go on if not taken.  The instruction decoder's
 * on_insn() gives the same counts.
 */
static void block_stats(struct dstate *s, const struct pt_block *b, unsigned int ninsn,
			enum pt_insn_class iclass)
{
	uint64_t ip = b->ip;
	unsigned int i, len;

	if (!s->have_cur || ip - s->cur.start >= s->cur.end - s->cur.start)
		recent_cur(s, ip);
	if (b->end_ip - s->cur.start < s->cur.end - s->cur.start) {
		s->cur_fs->insns += ninsn;
	} else {
		for (i = 0; i < ninsn; i++) {
			if (ip - s->cur.start >= s->cur.end - s->cur.start)
				recent_cur(s, ip);
			s->cur_fs->insns++;
			len = insn_len(s, b, ip);
			if (!len) {
				/* not readable: the rest to this function */
				s->cur_fs->insns += ninsn - i - 1;
				break;
			}
			ip += len;
		}
	}
	if (iclass == ptic_cond_jump) {
		/* 0 if unknown: then counted as taken (it never is: it was decoded) */
		len = insn_len(s, b, b->end_ip);
		s->pend = P_COND;
		s->pend_next = len ? b->end_ip + len : 0;
		if (b->end_ip - s->cur.start >= s->cur.end - s->cur.start)
			recent_cur(s, b->end_ip);
		s->pend_fs = s->cur_fs;
	}
}

/*
 * The block decoder's view (the default flow, --stats): only the last
 * instruction of a block can branch, so only it is looked at.
 */
static void on_block(void *ctx, struct pdec *dec, const struct pt_block *b,
		     int status)
{
	struct dstate *s = ctx;
	enum pt_insn_class iclass = b->iclass;
	uint8_t raw[pt_max_insn_size];
	unsigned int ninsn = b->ninsn;
	int n = -1;

	if (s->skip || out_of_time(s))
		return;
	if (s->pend)
		resolve(s, b->ip);
	if (b->truncated) {
		memcpy(raw, b->raw, b->size);
		n = b->size;
	} else if (iclass == ptic_error || iclass == ptic_far_call || iclass == ptic_far_jump ||
		   iclass == ptic_far_return) {
		n = pt_iscache_read(s->im.iscache, raw, sizeof(raw), b->isid, b->end_ip);
	}
	if (iclass == ptic_error)
		iclass = n > 0 ? classify(raw, n) : ptic_other;
	/*
	 * A block that ends in an error with a branch: decoding failed at
	 * that branch (its trace is missing).  The instruction decoder does
	 * not give it, so neither do --stats and --summary.
	 */
	if (s->blk_stats && status < 0 && iclass != ptic_other) {
		ninsn--;
		iclass = ptic_other;
	}
	s->insns += ninsn;
	if (b->ip >> 63)
		s->kernel_insns += ninsn;
	if (s->insns >= s->next_check) {
		uint64_t off = 0;

		s->next_check = s->insns + (1 << 18);
		pdec_get_offset(dec, &off);
		progress(s, off);
	}
	if (s->blk_stats && ninsn)
		block_stats(s, b, ninsn, iclass);
	switch (iclass) {
	case ptic_cond_jump:
		s->cond++;
		break;
	case ptic_call:
		s->calls++;
		s->pend = P_CALL;
		break;
	case ptic_return:
		s->rets++;
		s->pend = P_RET;
		break;
	case ptic_jump:
		s->jumps++;
		s->pend = P_JUMP;
		sym_lookup(s->st, b->end_ip, &s->pend_from);
		break;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		s->far++;
		if (n >= 2 && itrace_is_syscall(raw, n)) {
			struct sym_info si;

			s->syscalls++;
			sym_lookup(s->st, b->end_ip, &si);
			if (s->blk_stats)
				fs_of(s, &si)->syscalls++;
			flow_line(s, "syscall", b->end_ip, &si);
		}
		break;
	default:
		break;
	}
}

static void report_error(struct dstate *s, uint64_t off, uint64_t ip, const char *msg)
{
	struct sym_info si;

	if (s->skip)
		return;

	sym_lookup(s->st, ip, &si);
	fprintf(stderr, "itrace: %s: decode error at trace offset 0x%llx (after %llu %s, last ip ",
		s->o->name, (unsigned long long)off, (unsigned long long)s->insns, "instructions");
	print_sym(s, stderr, ip, &si);
	fprintf(stderr, "): %s\n", msg);
	s->errors++;
	s->pend = P_NONE;
	s->have_cur = 0;
	if (s->o->json && s->jerrors && json_object_array_length(s->jerrors) < NR_JSON_ERRORS) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "offset", json_object_new_uint64(off));
		json_object_object_add(e, "message", json_object_new_string(msg));
		json_object_object_add(e, "last", ip ? jloc(s->st, ip) : NULL);
		json_object_array_add(s->jerrors, e);
	}
	if (s->o->mode == DECODE_FLOW && s->o->json) {
		s->nr_lines++;
		flow_json(s, "[error]", ip, off, msg);
		return;
	}
	flow_line(s, "[error]", ip, &si);
}

static void decode_error(void *ctx, struct pt_insn_decoder *dec, int err, uint64_t ip)
{
	struct dstate *s = ctx;
	uint64_t off = 0;

	pt_insn_get_offset(dec, &off);
	report_error(s, trace_off(s, off), ip, itrace_errstr(err));
}

static void blk_error(void *ctx, struct pdec *dec, int err, uint64_t ip)
{
	struct dstate *s = ctx;
	uint64_t off = 0;

	pdec_get_offset(dec, &off);
	report_error(s, trace_off(s, off), ip, itrace_errstr(err));
}

static void event(struct dstate *s, uint64_t off, const struct pt_event *ev)
{
	if (s->skip)
		return;
	switch (ev->type) {
	case ptev_overflow:
		fprintf(stderr,
			"itrace: %s: trace overflow (hardware lost trace) at trace offset 0x%llx\n",
			s->o->name, (unsigned long long)trace_off(s, off));
		s->gaps++;
		s->pend = P_NONE;
		note(s, "[overflow]", ev->variant.overflow.ip);
		break;
	case ptev_enabled:
		if (!s->nr_lines)
			note(s, "start", ev->variant.enabled.ip);
		if (s->o->mode == DECODE_INSN && !s->o->json) {
			context_line(s);
			fprintf(s->out, "           [enabled at 0x%llx]\n",
				(unsigned long long)ev->variant.enabled.ip);
		}
		break;
	case ptev_disabled:
	case ptev_async_disabled:
		/*
		 * Where the branch before went is known here, not from the
		 * next instruction, which may be another thread's (or, after
		 * an interrupt, the kernel's).
		 */
		if (ev->type == ptev_async_disabled)
			resolve(s, ev->variant.async_disabled.at);
		else if (!ev->ip_suppressed)
			resolve(s, ev->variant.disabled.ip);
		if (s->o->mode == DECODE_INSN && !s->o->json) {
			context_line(s);
			fprintf(s->out, "           [disabled]\n");
		}
		break;
	case ptev_async_branch:
		/* an interrupt or exception: the branch before it went to from */
		resolve(s, ev->variant.async_branch.from);
		break;
	default:
		break;
	}
}

static void on_event(void *ctx, struct pt_insn_decoder *dec, const struct pt_event *ev)
{
	uint64_t off = 0;

	if (ev->type == ptev_overflow)
		pt_insn_get_offset(dec, &off);
	event(ctx, off, ev);
}

static void blk_event(void *ctx, struct pdec *dec, const struct pt_event *ev)
{
	uint64_t off = 0;

	if (ev->type == ptev_overflow)
		pdec_get_offset(dec, &off);
	event(ctx, off, ev);
}

/* ---- BTS (bts.c calls these) ----------------------------------------- */

/* An instruction of a BTS flow: as the instruction decoder's. */
static void bts_insn(void *ctx, const struct pt_insn *in)
{
	on_insn(ctx, NULL, in);
}

/* A BTS record into or out of the kernel: a line in the flow. */
static void bts_kernel(void *ctx, uint64_t off, uint64_t from, uint64_t to, bool entry)
{
	struct dstate *s = ctx;

	if (s->skip)
		return;
	if (s->o->mode == DECODE_INSN && !s->o->json) {
		context_line(s);
		fprintf(s->out, "           [%s 0x%llx -> 0x%llx]\n",
			entry ? "kernel entry" : "kernel return", (unsigned long long)from,
			(unsigned long long)to);
		return;
	}
	/* the first return to user mode (from execve) starts the flow, as PT's enable */
	note(s, entry ? "[kernel entry]" : s->nr_lines ? "[kernel return]" : "start",
	     entry ? from : to);
}

/* The BTS flow could not be followed: a gap, reported as a decode error. */
static void bts_gap(void *ctx, uint64_t off, uint64_t last_ip, const char *why)
{
	struct dstate *s = ctx;

	if (!s->skip)
		s->gaps++;
	report_error(s, off, last_ip, why);
	if (!s->skip)
		note(s, "[gap]", 0);
}

/*
 * Back from the kernel where BTS does not say (a signal handler, sigreturn,
 * exec): no loss, no error, a line in the flow, which goes on at the
 * record's source (at).
 */
static void bts_resume(void *ctx, uint64_t off, uint64_t at)
{
	struct dstate *s = ctx;

	if (s->skip)
		return;
	if (s->o->mode == DECODE_INSN && !s->o->json) {
		context_line(s);
		fprintf(s->out,
			"           [resumed by the kernel where BTS does not record; on at 0x%llx]\n",
			(unsigned long long)at);
		return;
	}
	note(s, "[resumed]", at);
}

/* ---- threads (timeline.c calls these) ------------------------------- */

/* Did the recording's trace event trace kernel mode (attr.exclude_kernel clear)? */
static bool traced_kernel(const struct itrace_data *d)
{
	struct perf_event_attr a;

	return !(d->hdr.flags & ITRACE_FLAG_SAMPLES) && itrace_attr(d, &a) && !a.exclude_kernel;
}

/* --tid: warn of each thread the recording does not have (none, if no tids) */
static void check_tids(struct dstate *s, const struct itrace_data *d)
{
	struct tl_thread **tv;
	const char *p;
	size_t n, i, nr;
	unsigned long tid;

	if (!s->o->tids)
		return;
	if (!s->threads) {
		fprintf(stderr,
			"itrace: %s: warning: --tid: the recording has no thread ids (%s): nothing is selected\n",
			s->o->name, d->is_perf_data ?
			"a perf.data without sample ids is decoded as one flow" :
			"no sideband of its threads");
		return;
	}
	tv = tl_threads(s->tl, &nr);
	for (p = s->o->tids; *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		tid = strtoul(p, NULL, 10);
		for (i = 0; i < nr && tv[i]->tid != tid; i++)
			;
		if (i == nr)
			fprintf(stderr,
				"itrace: %s: warning: --tid: no thread %lu in the recording\n",
				s->o->name, tid);
	}
}

static struct dthread *dthread_of(struct dstate *s, struct tl_thread *t)
{
	struct dthread *th = t->priv;
	const char *p;
	size_t n;

	if (th)
		return th;
	th = calloc(1, sizeof(*th));
	if (!th)
		itrace_oom();
	th->t = t;
	th->last_cpu = -1;
	th->selected = !s->o->tids;
	for (p = s->o->tids; p && *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		if (strtoul(p, NULL, 10) == t->tid)
			th->selected = true;
	}
	t->priv = th;
	return th;
}

/* Put the loaded thread's state away and load th's. */
static void switch_thread(void *ctx, struct tl_thread *t, struct tl_aspace *as, int cpu)
{
	struct dstate *s = ctx;
	struct dthread *th = dthread_of(s, t), *o = s->th;

	if (o) {
		o->fs_tree = s->fs_tree;
		o->fsv = s->fsv;
		o->nr_fs = s->nr_fs;
		o->cap_fs = s->cap_fs;
		o->cur = s->cur;
		o->cur_fs = s->cur_fs;
		o->have_cur = s->have_cur;
		o->pend = s->pend;
		o->pend_next = s->pend_next;
		o->pend_fs = s->pend_fs;
		o->pend_from = s->pend_from;
		o->depth = s->depth;
	}
	if (o != th) {
		s->fs_tree = th->fs_tree;
		s->fsv = th->fsv;
		s->nr_fs = th->nr_fs;
		s->cap_fs = th->cap_fs;
		s->cur = th->cur;
		s->cur_fs = th->cur_fs;
		s->have_cur = th->have_cur;
		s->pend = th->pend;
		s->pend_next = th->pend_next;
		s->pend_fs = th->pend_fs;
		s->pend_from = th->pend_from;
		s->depth = th->depth;
		/* the cache points into the per-function counters of a thread */
		memset(s->fs_cache, 0, sizeof(s->fs_cache));
	}
	if (o != th || cpu != s->cpu || s->st != as->st)
		s->ctx_shown = false;
	s->th = th;
	s->cpu = cpu;
	th->last_cpu = cpu;
	s->skip = !th->selected;
	s->slow_insn = s->skip || s->o->time_from || s->o->time_to ||
		       s->o->mode == DECODE_INSN;
	/* the address space: the symbols and the image of this process */
	if (s->st != as->st)
		s->have_cur = 0;
	s->st = as->st;
	s->im = as->im;
}

static void set_decoder(void *ctx, struct pt_insn_decoder *idec, struct pdec *bdec,
			const struct tl_run *run)
{
	struct dstate *s = ctx;

	s->idec = idec;
	s->bdec = bdec;
	s->run = run;
}

/*
 * A run of contiguous trace begins: say what came before it (a gap,
 * lost trace, another snapshot); the call depth starts again.
 */
static void begin_run(void *ctx, const struct tl_run *r)
{
	struct dstate *s = ctx;
	char what[48];

	s->depth = 0;
	s->have_cur = 0;
	s->pend = P_NONE;
	switch (r->kind) {
	case TL_RUN_FIRST:
		break;
	case TL_RUN_GAP:
		fprintf(stderr, "itrace: %s: gap in the trace%s%s: bytes 0x%llx-0x%llx missing\n",
			s->o->name, s->cpu >= 0 ? " of cpu " : "",
			s->cpu >= 0 ? (snprintf(what, sizeof(what), "%d", s->cpu), what) : "",
			(unsigned long long)r->expect, (unsigned long long)r->offset);
		s->gaps++;
		if (!s->skip)
			note(s, "[gap]", 0);
		break;
	case TL_RUN_LOST:
		if (!s->skip)
			note(s, "[lost]", 0);
		break;
	case TL_RUN_SNAPSHOT:
		if (!s->skip)
			note(s, "[snapshot]", 0);
		break;
	}
}

/*
 * perf record pads each AUXTRACE record's data to 8 bytes with zeros
 * (PAD packets) that its size counts: after a buffer's last chunk, or a
 * loss, they make a run of their own, which has nothing to decode.
 */
static bool perf_padding(const struct dstate *s, const struct tl_run *r)
{
	size_t i;

	if (!s->d->is_perf_data || r->size >= 8)
		return false;
	for (i = 0; i < r->size; i++)
		if (r->bytes[i])
			return false;
	return true;
}

static void end_run(void *ctx, const struct tl_run *r, int walk)
{
	struct dstate *s = ctx;

	if (walk > 0 && !perf_padding(s, r)) {
		fprintf(stderr,
			"itrace: %s: no PSB in %zu bytes of trace at offset 0x%llx%s: nothing to decode\n",
			s->o->name, r->size, (unsigned long long)r->offset,
			s->cpu >= 0 ? " (a buffer of one CPU)" : "");
		s->errors++;
	}
	/* a branch at the very end of the trace has no known outcome */
	s->pend = P_NONE;
	s->idec = NULL;
	s->bdec = NULL;
}

/* ---- sideband: the address space ------------------------------------- */

/*
 * The file at path against the build-id the recording saw: a mismatch
 * means the file changed after recording, and code decoded through it is
 * not what ran.
 */
static void check_build_id(struct dstate *s, const char *path, const uint8_t *want, size_t n)
{
	uint8_t got[PEV_BUILD_ID_MAX];
	char a[2 * PEV_BUILD_ID_MAX + 1], b[2 * PEV_BUILD_ID_MAX + 1];
	int len;

	if (!n)
		return;
	len = sym_build_id(path, got, sizeof(got));
	perf_buildid_hex(a, want, n);
	if (len < 0) {
		fprintf(stderr,
			"itrace: %s: warning: %s has no build-id; the recording's is %s: the file may not be the one that ran\n",
			s->o->name, path, a);
		return;
	}
	if ((size_t)len == n && !memcmp(got, want, n))
		return;
	perf_buildid_hex(b, got, len);
	fprintf(stderr,
		"itrace: %s: warning: %s: build-id %s, but the recording's is %s: the file changed since it was recorded and its code decodes wrongly (--sysroot, --exe: the file that ran)\n",
		s->o->name, path, b, a);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void add_mapping(struct dstate *s, struct itrace_image *im, struct symtab *st,
			const struct pev *ev)
{
	char *file = strndup(ev->mmap.name, ev->mmap.name_len), *alt = NULL;
	const char *path = file, *name;
	int err;

	if (!file)
		itrace_oom();
	name = itrace_base_name(file);
	if (!strcmp(file, "[vdso]")) {
		if (!s->d->vdso_size) {
			if (s->d->is_perf_data)
				fprintf(stderr,
					"itrace: %s: warning: [vdso] mapped, but its image is not in perf's build-id cache (--buildid-dir DIR, $PERF_BUILDID_DIR, ~/.debug): its code cannot be decoded\n",
					s->o->name);
			else
				fprintf(stderr,
					"itrace: %s: warning: [vdso] mapped but not saved in the file\n",
					s->o->name);
			goto out;
		}
		if (s->vdso_fd < 0) {
			s->vdso_fd = itrace_mem_image("itrace-vdso", s->d->vdso, s->d->vdso_size,
						      s->vdso_path, sizeof(s->vdso_path));
			if (s->vdso_fd < 0) {
				fprintf(stderr, "itrace: cannot hold the vdso image: %s\n",
					strerror(-s->vdso_fd));
				goto out;
			}
		}
		path = s->vdso_path;
		name = "[vdso]";
	} else if (file[0] != '/') {
		goto out;	/* //anon, [uprobes]...: no file to decode from */
	} else if (s->o->exe && (!s->exe_path || !strcmp(s->exe_path, file))) {
		/* --exe: the program, the first file mapped executable */
		path = s->o->exe;
	} else if (s->o->sysroot) {
		if (asprintf(&alt, "%s%s", s->o->sysroot, file) < 0)
			itrace_oom();
		path = alt;
	}
	/* once per file: a fork copies its parent's mappings */
	if (path != s->vdso_path && !tfind(path, &s->bid_checked, cmp_str)) {
		char *k = strdup(path);

		if (!k || !tsearch(k, &s->bid_checked, cmp_str))
			itrace_oom();
		check_build_id(s, path, ev->mmap.build_id, ev->mmap.build_id_size);
	}
	err = itrace_image_add(im, st, name, path, ev->mmap.addr, ev->mmap.len,
			       ev->mmap.pgoff);
	if (err < 0)
		fprintf(stderr, "itrace: warning: %s: %s (code there cannot be decoded)\n",
			path, strerror(-err));
	if (!s->exe && path != s->vdso_path && file[0] == '/') {
		s->exe = strdup(name);
		s->exe_path = strdup(file);
		if (!s->exe || !s->exe_path)
			itrace_oom();
		/* the lines printed so far took no module as the program's */
		flush_lines(s);
	}
out:
	free(alt);
	free(file);
}

/*
 * --kernel FILE: the kernel's code for a recording made with record -k, at
 * the addresses it ran at (the kernel runs unrelocated: no KASLR).  FILE is
 *  - the kernel's ELF image (vmlinux, ET_EXEC): its executable PT_LOAD
 *    segments at their link addresses, with its symbols; code the kernel
 *    patched at boot (alternatives, static keys, jump labels) differs;
 *  - an ELF core file of kernel memory (ET_CORE) such as /proc/kcore or the
 *    copy of its text perf record --kcore makes: every PT_LOAD segment with
 *    contents at its p_vaddr, the text as it ran; symbols from a file
 *    "kallsyms" beside it, if there is one (perf's kcore_dir has it);
 *  - a directory perf record --kcore (or record --kcore: FILE.kcore)
 *    wrote: its kcore_dir/kcore; or that kcore_dir itself: its kcore.
 * Returns 0, or -1 when FILE is none of these or holds no code.
 */
static int add_kernel(struct dstate *s, struct itrace_image *im, struct symtab *st,
		      const char *path)
{
	size_t i, nr = 0, added = 0, user_half = 0;
	char *kcore = NULL;
	struct stat sb;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	Elf *elf;
	int fd, core = 0;

	if (!stat(path, &sb) && S_ISDIR(sb.st_mode)) {
		if (asprintf(&kcore, "%s/kcore", path) < 0)
			itrace_oom();
		if (access(kcore, F_OK)) {
			free(kcore);
			if (asprintf(&kcore, "%s/kcore_dir/kcore", path) < 0)
				itrace_oom();
		}
		path = kcore;
	}
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "itrace: --kernel %s: %s\n", path, strerror(errno));
		free(kcore);
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (fstat(fd, &sb) || !elf || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nr)) {
		fprintf(stderr, "itrace: --kernel %s: not an ELF file\n", path);
		nr = 0;
	} else {
		core = eh.e_type == ET_CORE;
	}
	for (i = 0; i < nr; i++) {
		int err;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		/* kernel code is in the upper half: the rest is not the kernel's */
		if (!(ph.p_vaddr >> 63)) {
			user_half++;
			continue;
		}
		if (!core) {
			if ((ph.p_flags & PF_X) &&
			    !itrace_image_add(im, st, itrace_base_name(path), path,
					      ph.p_vaddr, ph.p_filesz, ph.p_offset))
				added++;
			continue;
		}
		/* a core: contents only as far as the file goes */
		if (ph.p_offset >= (uint64_t)sb.st_size)
			continue;
		if (ph.p_filesz > (uint64_t)sb.st_size - ph.p_offset)
			ph.p_filesz = sb.st_size - ph.p_offset;
		err = itrace_image_add_section(im, path, ph.p_offset, ph.p_filesz,
					       ph.p_vaddr);
		if (err < 0)
			fprintf(stderr, "itrace: warning: %s at 0x%llx: %s\n", path,
				(unsigned long long)ph.p_vaddr, pt_errstr(pt_errcode(err)));
		else
			added++;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!added && user_half)
		fprintf(stderr,
			"itrace: --kernel %s: not a kernel: its code is at user-space addresses (give vmlinux, or the kernel text as an ELF core: record --kcore's FILE.kcore, perf record --kcore's directory)\n",
			path);
	else if (!added && nr)
		fprintf(stderr, "itrace: --kernel %s: no %s\n", path,
			core ? "PT_LOAD segment with contents" : "executable segment");
	if (added && core) {
		const char *slash = strrchr(path, '/');
		char *ksyms = NULL;

		if (asprintf(&ksyms, "%.*skallsyms", slash ? (int)(slash - path + 1) : 0,
			     path) >= 0 && !access(ksyms, R_OK) && sym_add_kallsyms(st, ksyms))
			fprintf(stderr, "itrace: warning: %s: no text symbols\n", ksyms);
		free(ksyms);
	}
	free(kcore);
	return added ? 0 : -1;
}

static void tl_add_map(void *ctx, struct tl_aspace *as, const struct pev *ev)
{
	add_mapping(ctx, &as->im, as->st, ev);
}

struct kernel_arg {
	struct dstate	*s;
	const char	*path;
	int		ret;
};

static void kernel_one(void *arg, struct tl_aspace *as)
{
	struct kernel_arg *k = arg;

	if (!k->ret)
		k->ret = add_kernel(k->s, &as->im, as->st, k->path);
}

struct switch_ips {
	bool		done;
	uint64_t	switch_ip, ptss_ip;
};

/* The kernel's symbols are in every address space: the first one's. */
static void switch_ips_one(void *arg, struct tl_aspace *as)
{
	struct switch_ips *w = arg;

	if (w->done)
		return;
	w->done = true;
	if (sym_find_kernel(as->st, "__switch_to", &w->switch_ip) ||
	    sym_find_kernel(as->st, "__perf_event_task_sched_out", &w->ptss_ip)) {
		w->switch_ip = 0;
		w->ptss_ip = 0;
	}
}

static void jset_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

/* A perf_event record as a JSON object (--sideband --json). */
static struct json_object *record_json(const struct pev *ev, const char *type,
				       const struct pev_id *sid)
{
	struct json_object *j = json_object_new_object();
	char id[2 * PEV_BUILD_ID_MAX + 1];
	bool exec = ev->misc & PERF_RECORD_MISC_COMM_EXEC;

	jset_u64(j, "offset", ev->pos);
	json_object_object_add(j, "type", json_object_new_string(type));
	json_object_object_add(j, "misc", json_object_new_int(ev->misc));
	json_object_object_add(j, "size", json_object_new_int(ev->size));
	if (sid) {
		struct json_object *o = json_object_new_object();

		jset_u64(o, "pid", sid->pid);
		jset_u64(o, "tid", sid->tid);
		jset_u64(o, "time", sid->time);
		jset_u64(o, "cpu", sid->cpu);
		json_object_object_add(j, "sample", o);
	}
	if (pev_short(ev))
		return j;
	switch (ev->type) {
	case PERF_RECORD_SWITCH_CPU_WIDE:
		jset_u64(j, "next_prev_pid", ev->sw.next_prev_pid);
		jset_u64(j, "next_prev_tid", ev->sw.next_prev_tid);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		jset_u64(j, "pid", ev->mmap.pid);
		jset_u64(j, "tid", ev->mmap.tid);
		json_object_object_add(j, "start", jaddr(ev->mmap.addr));
		json_object_object_add(j, "end", jaddr(ev->mmap.addr + ev->mmap.len));
		jset_u64(j, "pgoff", ev->mmap.pgoff);
		jset_u64(j, "prot", ev->mmap.prot);
		json_object_object_add(j, "file", jstrn(ev->mmap.name, ev->mmap.name_len));
		if (ev->mmap.build_id_size) {
			perf_buildid_hex(id, ev->mmap.build_id, ev->mmap.build_id_size);
			json_object_object_add(j, "build_id", json_object_new_string(id));
		}
		break;
	case PERF_RECORD_COMM:
		jset_u64(j, "pid", ev->comm.pid);
		jset_u64(j, "tid", ev->comm.tid);
		json_object_object_add(j, "comm", jstrn(ev->comm.name, ev->comm.name_len));
		json_object_object_add(j, "exec", json_object_new_boolean(exec));
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		jset_u64(j, "pid", ev->task.pid);
		jset_u64(j, "ppid", ev->task.ppid);
		jset_u64(j, "tid", ev->task.tid);
		break;
	case PERF_RECORD_LOST:
		jset_u64(j, "lost", ev->lost.lost);
		break;
	case PERF_RECORD_ITRACE_START:
		jset_u64(j, "pid", ev->start.pid);
		jset_u64(j, "tid", ev->start.tid);
		break;
	case PERF_RECORD_ITRACE_LOST:
	case PERF_RECORD_AUX:
		jset_u64(j, "aux_offset", ev->aux.offset);
		jset_u64(j, "aux_size", ev->aux.size);
		jset_u64(j, "flags", ev->aux.flags);
		break;
	}
	return j;
}

/* A perf_event record as a line of text (--sideband). */
static void record_text(FILE *out, const struct pev *ev, const char *type,
			const struct pev_id *sid)
{
	char id[2 * PEV_BUILD_ID_MAX + 1];

	fprintf(out, "%8zx ", ev->pos);
	/* the sample_id: [cpu] time (s) tid */
	if (sid)
		fprintf(out, "[%03u] %5llu.%09llu %6u: ", sid->cpu,
			(unsigned long long)(sid->time / 1000000000),
			(unsigned long long)(sid->time % 1000000000), sid->tid);
	if (pev_short(ev))
		goto other;
	switch (ev->type) {
	case PERF_RECORD_SWITCH:
		fprintf(out, "SWITCH %s\n", ev->misc & PERF_RECORD_MISC_SWITCH_OUT ? "out" : "in");
		return;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		fprintf(out, "SWITCH_CPU_WIDE %s pid %u tid %u\n",
			ev->misc & PERF_RECORD_MISC_SWITCH_OUT ? "out, next" : "in, prev",
			ev->sw.next_prev_pid, ev->sw.next_prev_tid);
		return;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		fprintf(out, "%-5s pid %u tid %u 0x%llx-0x%llx pgoff 0x%llx %c%c%c %.*s",
			type, ev->mmap.pid, ev->mmap.tid, (unsigned long long)ev->mmap.addr,
			(unsigned long long)(ev->mmap.addr + ev->mmap.len),
			(unsigned long long)ev->mmap.pgoff,
			ev->mmap.prot & PROT_READ ? 'r' : '-',
			ev->mmap.prot & PROT_WRITE ? 'w' : '-',
			ev->mmap.prot & PROT_EXEC ? 'x' : '-',
			(int)ev->mmap.name_len, ev->mmap.name);
		if (ev->mmap.build_id_size) {
			perf_buildid_hex(id, ev->mmap.build_id, ev->mmap.build_id_size);
			fprintf(out, " build-id %s", id);
		}
		fputc('\n', out);
		return;
	case PERF_RECORD_COMM:
		fprintf(out, "COMM%s pid %u tid %u %.*s\n",
			ev->misc & PERF_RECORD_MISC_COMM_EXEC ? " exec" : "", ev->comm.pid,
			ev->comm.tid, (int)ev->comm.name_len, ev->comm.name);
		return;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		fprintf(out, "%s pid %u ppid %u tid %u\n", type, ev->task.pid, ev->task.ppid,
			ev->task.tid);
		return;
	case PERF_RECORD_LOST:
		fprintf(out, "LOST (sideband records lost)\n");
		return;
	case PERF_RECORD_ITRACE_START:
		fprintf(out, "ITRACE_START pid %u tid %u\n", ev->start.pid, ev->start.tid);
		return;
	case PERF_RECORD_ITRACE_LOST:
	case PERF_RECORD_AUX:
		fprintf(out, "%s offset 0x%llx size %llu flags 0x%llx\n", type,
			(unsigned long long)ev->aux.offset, (unsigned long long)ev->aux.size,
			(unsigned long long)ev->aux.flags);
		return;
	}
other:
	fprintf(out, "%s misc 0x%x size %u\n", type, ev->misc, ev->size);
}

/* One line (or JSON object) per record of the perf stream. */
static int dump_sideband(struct itrace_data *d, const struct decode_opts *o, FILE *out)
{
	uint64_t st = itrace_sample_type(d);
	struct pev_iter it;
	struct pev_id sid;
	struct pev ev;
	char err[256], tbuf[32];
	int r;

	pev_iter_init(&it, d->perf, d->perf_size);
	while ((r = pev_next(&it, &ev, err, sizeof(err))) > 0) {
		const char *type = pev_type_name(ev.type, tbuf, sizeof(tbuf));
		const struct pev_id *idp = st && pev_sample_id(&ev, st, &sid) ? &sid : NULL;

		if (o->json) {
			struct json_object *j = record_json(&ev, type, idp);

			jprint(out, j, 0);
			json_object_put(j);
		} else {
			record_text(out, &ev, type, idp);
		}
	}
	if (r < 0) {
		fprintf(stderr, "itrace: %s: sideband: %s\n", o->name, err);
		return EXIT_DECODE_ERRORS;
	}
	return 0;
}

/* ---- reports --------------------------------------------------------- */

static int cmp_fsp(const void *a, const void *b)
{
	return strcmp((*(struct fstat * const *)a)->key, (*(struct fstat * const *)b)->key);
}

/* "KEY FUNCTION N" lines of a table of per-function counters, after prefix */
static void print_fstats(struct dstate *s, const char *prefix, struct fstat **fsv, size_t nr)
{
	size_t i;

	if (nr)
		qsort(fsv, nr, sizeof(*fsv), cmp_fsp);
	for (i = 0; i < nr; i++) {
		const struct fstat *f = fsv[i];

		fprintf(s->out, "%sinsns %s %llu\n", prefix, f->key, (unsigned long long)f->insns);
		if (f->calls)
			fprintf(s->out, "%scalls %s %llu\n", prefix, f->key,
				(unsigned long long)f->calls);
		if (f->taken + f->not_taken)
			fprintf(s->out, "%scond %s %llu\n", prefix, f->key,
				(unsigned long long)(f->taken + f->not_taken));
		if (f->taken)
			fprintf(s->out, "%staken %s %llu\n", prefix, f->key,
				(unsigned long long)f->taken);
		if (f->not_taken)
			fprintf(s->out, "%snot_taken %s %llu\n", prefix, f->key,
				(unsigned long long)f->not_taken);
		if (f->syscalls)
			fprintf(s->out, "%ssyscalls %s %llu\n", prefix, f->key,
				(unsigned long long)f->syscalls);
	}
}

struct ttotals {
	uint64_t	insns, calls, cond, taken, not_taken, syscalls;
};

static void thread_totals(const struct dthread *th, struct ttotals *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < th->nr_fs; i++) {
		t->insns += th->fsv[i]->insns;
		t->calls += th->fsv[i]->calls;
		t->taken += th->fsv[i]->taken;
		t->not_taken += th->fsv[i]->not_taken;
		t->syscalls += th->fsv[i]->syscalls;
	}
	t->cond = t->taken + t->not_taken;
}

/* The threads that decoded something, by tid; *nr of them (malloc'd). */
static struct dthread **decoded_threads(struct dstate *s, size_t *nr)
{
	struct tl_thread **tv;
	struct dthread **v;
	size_t n, i;

	*nr = 0;
	if (!s->threads)
		return NULL;
	tv = tl_threads(s->tl, &n);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		itrace_oom();
	for (i = 0; i < n; i++) {
		struct dthread *th = tv[i]->priv;

		if (th && th->nr_fs)
			v[(*nr)++] = th;
	}
	return v;
}

static void print_stats(struct dstate *s)
{
	struct dthread **tv;
	size_t i, nr;

	fprintf(s->out, "total insns %llu\n", (unsigned long long)s->insns);
	fprintf(s->out, "total cond %llu\n", (unsigned long long)s->cond);
	fprintf(s->out, "total taken %llu\n", (unsigned long long)s->taken);
	fprintf(s->out, "total not_taken %llu\n", (unsigned long long)s->not_taken);
	fprintf(s->out, "total calls %llu\n", (unsigned long long)s->calls);
	fprintf(s->out, "total returns %llu\n", (unsigned long long)s->rets);
	fprintf(s->out, "total syscalls %llu\n", (unsigned long long)s->syscalls);
	fprintf(s->out, "total gaps %llu\n", (unsigned long long)s->gaps);
	fprintf(s->out, "total errors %llu\n", (unsigned long long)s->errors);
	fprintf(s->out, "total kernel_insns %llu\n", (unsigned long long)s->kernel_insns);
	print_fstats(s, "", s->fsv, s->nr_fs);
	/*
	 * Per thread: "thread TID KEY FUNCTION N" as above and "thread TID
	 * total KEY N", after a line "thread TID pid PID comm NAME".
	 */
	tv = decoded_threads(s, &nr);
	if (nr)
		fprintf(s->out, "total threads %zu\n", nr);
	for (i = 0; i < nr; i++) {
		const struct tl_thread *t = tv[i]->t;
		struct ttotals tt;
		char prefix[48];

		thread_totals(tv[i], &tt);
		fprintf(s->out, "thread %u pid %u comm %s\n", t->tid, t->pid,
			t->comm[0] ? t->comm : "?");
		fprintf(s->out, "thread %u total insns %llu\n", t->tid,
			(unsigned long long)tt.insns);
		fprintf(s->out, "thread %u total calls %llu\n", t->tid,
			(unsigned long long)tt.calls);
		fprintf(s->out, "thread %u total cond %llu\n", t->tid,
			(unsigned long long)tt.cond);
		fprintf(s->out, "thread %u total taken %llu\n", t->tid,
			(unsigned long long)tt.taken);
		fprintf(s->out, "thread %u total not_taken %llu\n", t->tid,
			(unsigned long long)tt.not_taken);
		fprintf(s->out, "thread %u total syscalls %llu\n", t->tid,
			(unsigned long long)tt.syscalls);
		snprintf(prefix, sizeof(prefix), "thread %u ", t->tid);
		print_fstats(s, prefix, tv[i]->fsv, tv[i]->nr_fs);
	}
	free(tv);
}

static struct json_object *ju64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static struct json_object *jfstat(struct dstate *s, const struct fstat *f)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "symbol", f->sym ? jstr(f->sym) : NULL);
	json_object_object_add(o, "module", f->module ? jstr(f->module) :
			       s->exe ? jstr(s->exe) : NULL);
	json_object_object_add(o, "insns", ju64(f->insns));
	json_object_object_add(o, "calls", ju64(f->calls));
	json_object_object_add(o, "taken", ju64(f->taken));
	json_object_object_add(o, "not_taken", ju64(f->not_taken));
	json_object_object_add(o, "syscalls", ju64(f->syscalls));
	return o;
}

/* --stats --json, --summary --json: one document */
static void print_json_report(struct dstate *s)
{
	struct json_object *doc = jdoc("itrace-decode"), *t, *fa, *cmd;
	const char *c;
	size_t i;

	json_object_object_add(doc, "file", jstr(s->o->name));
	cmd = json_object_new_array();
	for (c = s->d->cmdline; c && c < s->d->cmdline + s->d->cmdline_size; c += strlen(c) + 1)
		json_object_array_add(cmd, jstr(c));
	json_object_object_add(doc, "command", cmd);
	json_object_object_add(doc, "program", s->exe ? jstr(s->exe) : NULL);
	json_object_object_add(doc, "truncated", json_object_new_boolean(s->truncated));
	t = json_object_new_object();
	json_object_object_add(t, "insns", ju64(s->insns));
	json_object_object_add(t, "kernel_insns", ju64(s->kernel_insns));
	json_object_object_add(t, "cond", ju64(s->cond));
	json_object_object_add(t, "taken", ju64(s->taken));
	json_object_object_add(t, "not_taken", ju64(s->not_taken));
	json_object_object_add(t, "calls", ju64(s->calls));
	json_object_object_add(t, "returns", ju64(s->rets));
	json_object_object_add(t, "jumps", ju64(s->jumps));
	json_object_object_add(t, "syscalls", ju64(s->syscalls));
	json_object_object_add(t, "gaps", ju64(s->gaps));
	json_object_object_add(t, "errors", ju64(s->errors));
	json_object_object_add(doc, "totals", t);
	if (s->nr_fs)
		qsort(s->fsv, s->nr_fs, sizeof(*s->fsv), cmp_fsp);
	fa = json_object_new_array();
	for (i = 0; i < s->nr_fs; i++)
		json_object_array_add(fa, jfstat(s, s->fsv[i]));
	json_object_object_add(doc, "functions", fa);
	json_object_object_add(doc, "errors", json_object_get(s->jerrors));
	{
		size_t nr, k;
		struct dthread **tv = decoded_threads(s, &nr);
		struct json_object *ta;

		if (s->threads) {
			ta = json_object_new_array();
			for (i = 0; i < nr; i++) {
				struct json_object *o = json_object_new_object(), *ff;
				struct ttotals tt;

				thread_totals(tv[i], &tt);
				json_object_object_add(o, "tid", ju64(tv[i]->t->tid));
				json_object_object_add(o, "pid", ju64(tv[i]->t->pid));
				json_object_object_add(o, "comm", jstr(tv[i]->t->comm));
				json_object_object_add(o, "insns", ju64(tt.insns));
				json_object_object_add(o, "calls", ju64(tt.calls));
				json_object_object_add(o, "taken", ju64(tt.taken));
				json_object_object_add(o, "not_taken", ju64(tt.not_taken));
				json_object_object_add(o, "syscalls", ju64(tt.syscalls));
				ff = json_object_new_array();
				for (k = 0; k < tv[i]->nr_fs; k++)
					json_object_array_add(ff, jfstat(s, tv[i]->fsv[k]));
				json_object_object_add(o, "functions", ff);
				json_object_array_add(ta, o);
			}
			json_object_object_add(doc, "threads", ta);
		}
		free(tv);
	}
	jprint(s->out, doc, 1);
	json_object_put(doc);
}

static int cmp_calls(const void *a, const void *b)
{
	const struct fstat *x = *(struct fstat * const *)a, *y = *(struct fstat * const *)b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void print_summary(struct dstate *s)
{
	struct fstat **v = calloc(s->nr_fs + 1, sizeof(*v));
	size_t i, n = 0, other = 0;
	uint64_t k;
	const char *c;

	if (!v)
		itrace_oom();
	fprintf(s->out, "itrace decode summary: %s\n", s->o->name);
	if (s->d->cmdline) {
		fprintf(s->out, "  command:      ");
		for (c = s->d->cmdline; c < s->d->cmdline + s->d->cmdline_size; c += strlen(c) + 1)
			fprintf(s->out, " %s", c);
		fprintf(s->out, "\n");
	}
	fprintf(s->out, "  cpu:           %s family %u model %u stepping %u\n",
		s->d->hdr.cpu_vendor == ITRACE_CPU_INTEL ? "GenuineIntel" : "unknown",
		s->d->hdr.cpu_family, s->d->hdr.cpu_model, s->d->hdr.cpu_stepping);
	fprintf(s->out, "  trace:         %zu bytes in %zu segment(s)%s%s\n", s->d->trace_size,
		s->d->nr_segs, s->d->hdr.flags & ITRACE_FLAG_SNAPSHOT ? ", snapshot" : "",
		s->truncated ? ", FILE TRUNCATED" : "");
	if (s->kernel_insns)
		fprintf(s->out, "  instructions:  %llu (%llu in kernel mode)\n",
			(unsigned long long)s->insns, (unsigned long long)s->kernel_insns);
	else
		fprintf(s->out, "  instructions:  %llu (user mode)\n",
			(unsigned long long)s->insns);
	fprintf(s->out,
		"  branches:      %llu conditional (%llu taken, %llu not taken), %llu calls, %llu returns, %llu jumps, %llu syscalls\n",
		(unsigned long long)s->cond, (unsigned long long)s->taken,
		(unsigned long long)s->not_taken, (unsigned long long)s->calls,
		(unsigned long long)s->rets, (unsigned long long)s->jumps,
		(unsigned long long)s->syscalls);
	fprintf(s->out, "  gaps:          %llu%s\n", (unsigned long long)s->gaps,
		s->gaps ? "  (TRACE LOST)" : "");
	fprintf(s->out, "  decode errors: %llu%s\n", (unsigned long long)s->errors,
		s->errors ? "  (SEE ABOVE)" : "");
	{
		size_t nr, k;
		struct dthread **tv = decoded_threads(s, &nr);

		if (nr) {
			fprintf(s->out, "  threads:       %zu\n", nr);
			fprintf(s->out, "    %8s %8s %-16s %12s %10s %10s\n", "tid", "pid", "comm",
				"insns", "calls", "syscalls");
		}
		for (k = 0; k < nr; k++) {
			struct ttotals tt;

			thread_totals(tv[k], &tt);
			fprintf(s->out, "    %8u %8u %-16s %12llu %10llu %10llu\n", tv[k]->t->tid,
				tv[k]->t->pid, tv[k]->t->comm[0] ? tv[k]->t->comm : "?",
				(unsigned long long)tt.insns, (unsigned long long)tt.calls,
				(unsigned long long)tt.syscalls);
		}
		free(tv);
	}

	for (i = 0; i < s->nr_fs; i++)
		if (!s->fsv[i]->module && s->fsv[i]->insns)
			v[n++] = s->fsv[i];
		else
			other++;
	if (n)
		qsort(v, n, sizeof(*v), cmp_calls);
	fprintf(s->out, "  functions of %s (%zu more elsewhere; calls = call instructions that\n"
		"  entered the function, taken/not-taken = its conditional branches):\n",
		s->exe ? s->exe : "?", other);
	fprintf(s->out, "    %10s %12s %10s %10s %8s  %s\n",
		"calls", "insns", "taken", "not-taken", "syscalls", "function");
	for (i = 0; i < n; i++)
		fprintf(s->out, "    %10llu %12llu %10llu %10llu %8llu  %s\n",
			(unsigned long long)v[i]->calls, (unsigned long long)v[i]->insns,
			(unsigned long long)v[i]->taken, (unsigned long long)v[i]->not_taken,
			(unsigned long long)v[i]->syscalls, v[i]->key);
	free(v);

	fprintf(s->out, "  calls and syscalls in %s, in order (%llu%s):\n", s->exe ? s->exe : "?",
		(unsigned long long)s->nr_prog, s->nr_prog > NR_PROG ? ", the first shown" : "");
	for (k = 0; k < s->nr_prog && k < NR_PROG; k++)
		fprintf(s->out, "    %s\n", s->prog[k]);
	fprintf(s->out, "  flow (%llu lines; `itrace decode` prints all), first lines:\n",
		(unsigned long long)s->nr_lines);
	for (k = 0; k < s->nr_lines && k < NR_KEEP; k++)
		fprintf(s->out, "    %s\n", s->first[k]);
	if (s->nr_lines > NR_KEEP) {
		fprintf(s->out, "    ...\n  last lines:\n");
		k = s->nr_lines > 2 * NR_KEEP ? s->nr_lines - NR_KEEP : NR_KEEP;
		for (; k < s->nr_lines; k++) {
			const struct kept *l = &s->last[k % NR_KEEP];

			fprintf(s->out, "    %10llu %-7s %*s", (unsigned long long)l->insns,
				l->what, 2 * l->indent, "");
			print_sym(s, s->out, l->ip, &l->si);
			fprintf(s->out, "\n");
		}
	}
}

static void free_fstat(void *p)
{
	struct fstat *f = p;

	free(f->key);
	free(f->module);
	free(f->sym);
	free(f);
}

/* The loaded thread's state back into its struct dthread. */
static void save_thread(struct dstate *s)
{
	struct tl_aspace as0 = { 0 };

	if (!s->th)
		return;
	/* switching to the same thread saves without loading anything */
	as0.st = s->st;
	as0.im = s->im;
	switch_thread(s, s->th->t, &as0, s->cpu);
}

static struct fstat *fs_copy(struct dstate *s, const struct fstat *f)
{
	struct fstat **found = tfind(f, &s->fs_tree, cmp_fs_key), *g;

	if (found)
		return *found;
	g = calloc(1, sizeof(*g));
	if (!g)
		itrace_oom();
	g->key = strdup(f->key);
	g->module = f->module ? strdup(f->module) : NULL;
	g->sym = f->sym ? strdup(f->sym) : NULL;
	if (!g->key || (f->module && !g->module) || (f->sym && !g->sym) ||
	    !tsearch(g, &s->fs_tree, cmp_fs_key))
		itrace_oom();
	if (s->nr_fs == s->cap_fs) {
		s->cap_fs = s->cap_fs ? 2 * s->cap_fs : 256;
		s->fsv = realloc(s->fsv, s->cap_fs * sizeof(*s->fsv));
		if (!s->fsv)
			itrace_oom();
	}
	s->fsv[s->nr_fs++] = g;
	return g;
}

/* The per-function counters of every thread summed into s's. */
static void merge_threads(struct dstate *s)
{
	struct tl_thread **tv;
	size_t nr, i, k;

	save_thread(s);
	s->th = NULL;
	s->fs_tree = NULL;
	s->fsv = NULL;
	s->nr_fs = 0;
	s->cap_fs = 0;
	tv = tl_threads(s->tl, &nr);
	for (i = 0; i < nr; i++) {
		struct dthread *th = tv[i]->priv;

		for (k = 0; th && k < th->nr_fs; k++) {
			const struct fstat *f = th->fsv[k];
			struct fstat *g = fs_copy(s, f);

			g->insns += f->insns;
			g->calls += f->calls;
			g->taken += f->taken;
			g->not_taken += f->not_taken;
			g->syscalls += f->syscalls;
		}
	}
}

static void init_aspace(void *ctx, struct tl_aspace *as)
{
	struct dstate *s = ctx;

	sym_set_demangle(as->st, !s->o->no_demangle);
	if (s->kernel_ready)
		add_kernel(s, &as->im, as->st, s->o->kernel);
}

static void free_threads(struct dstate *s)
{
	struct tl_thread **tv;
	size_t nr, i;

	if (!s->tl)
		return;
	tv = tl_threads(s->tl, &nr);
	for (i = 0; i < nr; i++) {
		struct dthread *th = tv[i]->priv;

		if (!th)
			continue;
		tdestroy(th->fs_tree, free_fstat);
		free(th->fsv);
		free(th);
		tv[i]->priv = NULL;
	}
}

int itrace_decode(struct itrace_data *d, const struct decode_opts *o, FILE *out)
{
	static const struct pt_walk_ops ops = {
		.insn = on_insn,
		.event = on_event,
		.error = decode_error,
	};
	static const struct blk_walk_ops bops = {
		.block = on_block,
		.event = blk_event,
		.error = blk_error,
	};
	static const struct bts_ops btsops = {
		.insn = bts_insn,
		.kernel = bts_kernel,
		.gap = bts_gap,
		.resume = bts_resume,
	};
	static const struct tl_ops tops = {
		.init_aspace = init_aspace,
		.add_map = tl_add_map,
		.switch_to = switch_thread,
		.begin_run = begin_run,
		.end_run = end_run,
		.decoder = set_decoder,
	};
	struct dstate *s;
	size_t i;
	int ret = EXIT_DECODE_ERRORS;

	if (o->mode == DECODE_SIDEBAND)
		return dump_sideband(d, o, out);
	/*
	 * A BTS record is { from, to, flags }: no time (perf's intel_bts
	 * decoder synthesizes its samples without PERF_SAMPLE_TIME too).  The
	 * PERF_RECORD_AUX records only say when a whole chunk ended, so a
	 * range could only take or leave whole runs of a thread, not the
	 * branches of those seconds: refuse rather than select nothing.
	 * (Samples have their time; decode says they are report's below.)
	 */
	if ((o->time_from || o->time_to) && (d->hdr.flags & ITRACE_FLAG_BTS) &&
	    !(d->hdr.flags & ITRACE_FLAG_SAMPLES)) {
		fprintf(stderr,
			"itrace: %s: --time: an Intel BTS recording (record --pmu intel_bts): BTS records have no timestamps, so its trace cannot be selected by time (--tid selects threads)\n",
			o->name);
		return EXIT_USAGE;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		itrace_oom();
	s->o = o;
	s->slow_insn = o->time_from || o->time_to || o->mode == DECODE_INSN;
	/*
	 * --stats and --summary count on the block decoder (as fast as the
	 * flow), but with --time, which the instruction decoder applies to
	 * each instruction
	 */
	s->blk_stats = (o->mode == DECODE_STATS || o->mode == DECODE_SUMMARY) &&
		       !o->time_from && !o->time_to && !(d->hdr.flags & ITRACE_FLAG_BTS);
	if (s->blk_stats) {
		s->ild = bts_ild_new();
		s->lens = calloc(NR_LENS, sizeof(*s->lens));
		if (!s->ild || !s->lens)
			itrace_oom();
	}
	s->out = out;
	s->d = d;
	s->vdso_fd = -1;
	s->cpu = -1;
	s->truncated = d->truncated;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &s->start);
	if (o->json)
		s->jerrors = json_object_new_array();
	if (o->mode == DECODE_INSN) {
		s->dis = disasm_open();
		/* the tests compare the cached lines with these */
		s->no_lines = !!getenv("ITRACE_NO_LINE_CACHE");
	}
	if (d->truncated) {
		fprintf(stderr, "itrace: %s: warning: %s: decoding what is there\n", o->name,
			d->truncated_why);
		s->errors++;
	}
	/* the sideband: threads, address spaces and their mappings, losses */
	s->tl = tl_new(d, o->name, &tops, s);
	s->time_tsc = UINT64_MAX;	/* no TSC converted yet */
	tl_jobs(s->tl, o->jobs);
	if (o->snapshot) {
		if (o->snapshot > d->nr_snaps) {
			fprintf(stderr,
				"itrace: %s: --snapshot %u: the recording has %zu snapshot%s\n",
				o->name, o->snapshot, d->nr_snaps, d->nr_snaps == 1 ? "" : "s");
			ret = EXIT_USAGE;
			goto out;
		}
		tl_only_snapshot(s->tl, o->snapshot);
	}
	s->threads = tl_has_threads(s->tl);
	/* BTS records have no time, whatever the TIME section says */
	s->timed = tl_has_time(s->tl) && !(d->hdr.flags & ITRACE_FLAG_BTS);
	s->gaps += tl_nr_losses(s->tl);
	if (o->kernel) {
		struct kernel_arg k = { .s = s, .path = o->kernel };

		tl_walk_aspaces(s->tl, kernel_one, &k);
		if (k.ret) {
			ret = EXIT_USAGE;
			goto out;
		}
		s->kernel_ready = true;
	}
	tl_done(s->tl);
	if (s->kernel_ready) {
		struct switch_ips w = { 0 };

		/* the thread changes at __switch_to, as perf has it (timeline.c) */
		tl_walk_aspaces(s->tl, switch_ips_one, &w);
		tl_sync_switch(s->tl, w.switch_ip, w.ptss_ip);
	}
	check_tids(s, d);
	/*
	 * Without the kernel's code libipt stops at the first kernel
	 * instruction and resumes at the next PSB only: the user-mode part
	 * is decoded as user-mode tracing would have written it.
	 */
	if (!o->kernel && traced_kernel(d)) {
		fprintf(stderr,
			"itrace: %s: warning: the recording traced kernel mode too (record -k): without --kernel KERNEL (vmlinux, or the kernel text as an ELF core: record --kcore's FILE.kcore, perf record --kcore's kcore_dir) its kernel code cannot be decoded; its user-mode part is, each stay in the kernel shown as tracing off and on\n",
			o->name);
		tl_user_only(s->tl);
	}
	if (!s->exe && !(d->hdr.flags & ITRACE_FLAG_CPU_WIDE))
		fprintf(stderr, "itrace: %s: warning: no executable mapping in the sideband\n",
			o->name);
	/*
	 * record --pmu intel_bts -a/-C of an itrace before it refused them:
	 * the events ran through context switches and the records have no
	 * time to match with them, so tl_decode_bts() gives each CPU's records
	 * to the first thread switched in there.  Say so, and count it.
	 */
	if ((d->hdr.flags & ITRACE_FLAG_BTS) && (d->hdr.flags & ITRACE_FLAG_CPU_WIDE) &&
	    !(d->hdr.flags & ITRACE_FLAG_SAMPLES)) {
		fprintf(stderr,
			"itrace: %s: warning: a CPU-wide Intel BTS recording (record --pmu intel_bts -a/-C of an older itrace): BTS records have no timestamps, so they cannot be split by thread; all of a CPU's records are shown as those of the first thread that ran there, in its address space, and --tid cannot select\n",
			o->name);
		s->errors++;
	}
	if (!d->trace_size && (d->hdr.flags & ITRACE_FLAG_SAMPLES)) {
		fprintf(stderr,
			"itrace: %s: a recording of samples (record -e): their traces are read by itrace report\n",
			o->name);
		s->errors++;
	} else if (!d->trace_size) {
		fprintf(stderr, "itrace: %s: the file holds no trace\n", o->name);
		s->errors++;
	}
	if ((o->time_from || o->time_to) && !s->timed)
		fprintf(stderr,
			"itrace: %s: warning: --time: the recording has no time (record --no-timing, or an old file): nothing is in the range\n",
			o->name);
	if (o->json && o->mode != DECODE_STATS && o->mode != DECODE_SUMMARY) {
		struct json_object *h = jdoc(o->mode == DECODE_INSN ? "itrace-decode-insn" :
					     "itrace-decode-flow");

		json_object_object_add(h, "kind", json_object_new_string("header"));
		json_object_object_add(h, "file", jstr(o->name));
		json_object_object_add(h, "program", s->exe ? jstr(s->exe) : NULL);
		jprint(out, h, 0);
		json_object_put(h);
	}

	if (d->hdr.flags & ITRACE_FLAG_BTS) {
		/* tl_decode_bts() said why */
		if (tl_decode_bts(s->tl, &btsops, s))
			s->errors++;
	} else if (tl_decode(s->tl, &ops, &bops, o->mode == DECODE_FLOW || s->blk_stats, s)) {
		fprintf(stderr, "itrace: cannot allocate the libipt decoder\n");
		s->errors++;
	}
	progress_done(s);
	merge_threads(s);

	if (o->json && (o->mode == DECODE_STATS || o->mode == DECODE_SUMMARY)) {
		print_json_report(s);
	} else if (o->json) {
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "kind", json_object_new_string("end"));
		json_object_object_add(e, "insns", ju64(s->insns));
		json_object_object_add(e, "gaps", ju64(s->gaps));
		json_object_object_add(e, "errors", ju64(s->errors));
		jprint(out, e, 0);
		json_object_put(e);
	} else if (o->mode == DECODE_SUMMARY) {
		print_summary(s);
	} else if (o->mode == DECODE_STATS) {
		print_stats(s);
	}
	ret = s->errors ? EXIT_DECODE_ERRORS : 0;
out:
	if (s->vdso_fd >= 0)
		close(s->vdso_fd);
	disasm_close(s->dis);
	free_lines(s);
	save_thread(s);
	free_threads(s);
	/* a thread's table, if merge_threads() did not run */
	if (s->th)
		s->fs_tree = NULL;
	tdestroy(s->fs_tree, free_fstat);
	free(s->fsv);
	free(s->lens);
	bts_ild_free(s->ild);
	tl_free(s->tl);
	tdestroy(s->bid_checked, free);
	for (i = 0; i < NR_KEEP; i++)
		free(s->first[i]);
	for (i = 0; i < NR_PROG; i++)
		free(s->prog[i]);
	json_object_put(s->jerrors);
	free(s->exe);
	free(s->exe_path);
	free(s);
	return ret;
}

static void usage_decode(FILE *f)
{
	fprintf(f,
		"usage: itrace decode [--insn | --summary | --stats | --sideband] [--json]\n"
		"                     [--tid TIDS] [--time START,STOP]\n"
		"                     [--kernel KERNEL] [--sysroot DIR] [--exe PATH] [FILE | -]\n"
		"  (default)   function-level flow: one line per call, return, jump\n"
		"              between functions and syscall\n"
		"  --insn      every instruction: address, symbol+offset, bytes, disassembly\n"
		"              (capstone), class\n"
		"  --summary   counts, calls per function, first and last flow lines\n"
		"  --stats     machine readable counters (used by the tests)\n"
		"  --sideband  the recorded perf stream records (MMAP2, COMM...)\n"
		"  --json      JSON: one document for --stats and --summary, one object\n"
		"              per line otherwise (tools/itrace/itrace.schema.json)\n"
		"  --kernel KERNEL  kernel code for a recording made with record -k\n"
		"              (default: FILE.kcore of record --kcore, if there is one)\n"
		"              (kernel without KASLR): vmlinux, or the running text as an\n"
		"              ELF core (/proc/kcore, perf record --kcore's kcore_dir/kcore,\n"
		"              that kcore_dir, or that perf.data directory); without it,\n"
		"              the user-mode part of such a recording is decoded\n"
		"  --sysroot DIR    read the recorded files under DIR\n"
		"  --exe PATH       the program's file, if not at its recorded path\n"
		"  --no-demangle    C++ symbols as they are in the ELF file\n"
		"  --tid TID[,TID]  only these threads (the others are decoded, not shown\n"
		"              or counted)\n"
		"  --snapshot N  only the Nth snapshot of a record --snapshot recording\n"
		"  --time START,STOP  only trace between these times (seconds, as printed;\n"
		"              either may be left out: \"12.5,\" from 12.5 s on); not for\n"
		"              Intel BTS recordings: their records have no time\n"
		"  --buildid-dir DIR  perf's build-id cache, for the [vdso] of a perf.data\n"
		"              (default $PERF_BUILDID_DIR, ~/.debug)\n"
		"  --progress, --no-progress  progress on stderr (default: when it is a\n"
		"              terminal)\n"
		"  --jobs N    decode with N threads (default 1; the output is the same\n"
		"              with any N)\n"
		"  FILE        an itrace recording or a perf.data of perf record -e intel_pt//\n"
		"              (a file or a perf record --kcore directory); default\n"
		"              itrace.data; - reads standard input\n"
		"exit status: 0 decoded, 1 unusable input, 2 usage, 3 decoded with errors\n"
		"(decode errors, a file cut short; all that could be decoded is printed)\n");
}

static int decode_main(int argc, char **argv, enum decode_mode mode);

static void usage_report(FILE *f)
{
	fprintf(f,
		"usage: itrace report [--json] [decode's options] [FILE | -]\n"
		"       itrace report [--samples] [-n N] [--path N] [--top N] [--json] FILE\n"
		"  a recording of the whole trace: decode --summary (--json: decode --stats --json)\n"
		"  a recording of samples (record -e EVENT): the sampled locations, the most\n"
		"  frequent paths into each and the call chains, from each sample's trace;\n"
		"  every sample counted: decoded, missing, empty, no PSB, undecodable, unreadable\n"
		"  --samples   each sample: ip, tid, time, its last branches, where the trace\n"
		"              ends, the calls not returned\n"
		"  -n, --branches N  branches per sample (default 16)\n"
		"  --path N    branches of a path into a location (default 3)\n"
		"  --top N     paths and chains shown per location (default 5)\n"
		"  --json      one document (itrace.schema.json, itrace-report-samples)\n"
		"exit status: 0 reported, 1 unusable input, 2 usage, 3 reported with errors\n");
}

/* "SECONDS[.FRACTION]" into ns, exactly; -1 if it is not that */
static int parse_seconds(const char *p, const char *end, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0;

	if (p == end)
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (sec > UINT64_MAX / 10000000000ULL)
			return -1;
		sec = sec * 10 + (*p - '0');
	}
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++)
			if (digits < 9) {
				frac = frac * 10 + (*p - '0');
				digits++;
			}
	if (p != end)
		return -1;
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000ULL + frac;
	return 0;
}

/* --time START,STOP: either may be empty; 0 stands for an open end */
static int parse_time_range(const char *arg, uint64_t *from, uint64_t *to)
{
	const char *comma = strchr(arg, ',');
	const char *end = arg + strlen(arg);

	*from = 0;
	*to = 0;
	if (!comma || (comma == arg && comma + 1 == end))
		return -1;
	if (comma != arg && parse_seconds(arg, comma, from))
		return -1;
	if (comma + 1 != end && parse_seconds(comma + 1, end, to))
		return -1;
	if (*to && *to < *from)
		return -1;
	return 0;
}

int cmd_decode(int argc, char **argv)
{
	return decode_main(argc, argv, DECODE_FLOW);
}

/* itrace report: decode --summary */
int cmd_report(int argc, char **argv)
{
	return decode_main(argc, argv, DECODE_SUMMARY);
}

static int decode_main(int argc, char **argv, enum decode_mode mode)
{
	static char outbuf[1 << 20];	/* stdout's, until the exit */
	enum { O_SYSROOT = 256, O_EXE, O_NO_DEMANGLE, O_PROGRESS, O_NO_PROGRESS, O_BUILDID_DIR,
	       O_TID, O_TIME, O_SNAPSHOT, O_SAMPLES, O_PATHLEN, O_TOPN, O_JOBS };
	static const struct option opts[] = {
		{ "insn",    no_argument, NULL, 'i' },
		{ "summary", no_argument, NULL, 's' },
		{ "stats",   no_argument, NULL, 'S' },
		{ "sideband", no_argument, NULL, 'b' },
		{ "json",    no_argument, NULL, 'j' },
		{ "kernel",  required_argument, NULL, 'k' },
		{ "sysroot", required_argument, NULL, O_SYSROOT },
		{ "exe",     required_argument, NULL, O_EXE },
		{ "no-demangle", no_argument, NULL, O_NO_DEMANGLE },
		{ "buildid-dir", required_argument, NULL, O_BUILDID_DIR },
		{ "tid",     required_argument, NULL, O_TID },
		{ "time",    required_argument, NULL, O_TIME },
		{ "snapshot", required_argument, NULL, O_SNAPSHOT },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "no-progress", no_argument, NULL, O_NO_PROGRESS },
		{ "jobs",    required_argument, NULL, O_JOBS },
		{ "samples", no_argument, NULL, O_SAMPLES },
		{ "branches", required_argument, NULL, 'n' },
		{ "path",    required_argument, NULL, O_PATHLEN },
		{ "top",     required_argument, NULL, O_TOPN },
		{ "help",    no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct decode_opts o = { .mode = mode, .progress = -1, .nbranches = 16, .path_depth = 3,
				 .top = 5 };
	bool report = mode == DECODE_SUMMARY, sample_opts = false, mode_set = false;
	char *kcore_dir = NULL;
	struct itrace_data d;
	char err[512];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, report ? "hn:" : "h", opts, NULL)) != -1) {
		switch (c) {
		case O_SAMPLES:
		case 'n':
		case O_PATHLEN:
		case O_TOPN: {
			char *end;
			unsigned long v = 1;

			if (!report) {
				fprintf(stderr,
					"itrace: --samples, -n, --path, --top: options of itrace report\n");
				return EXIT_USAGE;
			}
			if (c != O_SAMPLES)
				v = strtoul(optarg, &end, 10);
			if (c != O_SAMPLES && (*end || !v || v > 100000)) {
				fprintf(stderr, "itrace: %s %s: a number from 1 to 100000\n",
					c == 'n' ? "-n" : c == O_PATHLEN ? "--path" : "--top",
					optarg);
				return EXIT_USAGE;
			}
			sample_opts = true;
			if (c == O_SAMPLES)
				o.samples = 1;
			else if (c == 'n')
				o.nbranches = v;
			else if (c == O_PATHLEN)
				o.path_depth = v;
			else
				o.top = v;
			break;
		}
		case 'i':
		case 's':
		case 'S':
		case 'b': {
			enum decode_mode m = c == 'i' ? DECODE_INSN : c == 's' ? DECODE_SUMMARY :
					     c == 'S' ? DECODE_STATS : DECODE_SIDEBAND;

			if (mode_set && o.mode != m) {
				fprintf(stderr,
					"itrace: --insn, --summary, --stats, --sideband: one at a time\n");
				return EXIT_USAGE;
			}
			o.mode = m;
			mode_set = true;
			break;
		}
		case 'j':
			o.json = 1;
			break;
		case 'k':
			o.kernel = optarg;
			break;
		case O_SYSROOT:
			o.sysroot = optarg;
			break;
		case O_EXE:
			o.exe = optarg;
			break;
		case O_NO_DEMANGLE:
			o.no_demangle = 1;
			break;
		case O_BUILDID_DIR:
			o.buildid_dir = optarg;
			break;
		case O_TID:
			if (!*optarg || strspn(optarg, "0123456789,") != strlen(optarg)) {
				fprintf(stderr, "itrace: --tid %s: not a list of thread ids\n",
					optarg);
				return EXIT_USAGE;
			}
			o.tids = optarg;
			break;
		case O_SNAPSHOT: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*end || !n || n > UINT32_MAX) {
				fprintf(stderr,
					"itrace: --snapshot %s: a snapshot number (1, 2, ...)\n",
					optarg);
				return EXIT_USAGE;
			}
			o.snapshot = n;
			break;
		}
		case O_TIME:
			if (parse_time_range(optarg, &o.time_from, &o.time_to)) {
				fprintf(stderr,
					"itrace: --time %s: expected START,STOP in seconds (\"1.5,2\", \"1.5,\", \",2\")\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case O_PROGRESS:
			o.progress = 1;
			break;
		case O_NO_PROGRESS:
			o.progress = 0;
			break;
		case O_JOBS: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (!*optarg || *end || !n || n > 256) {
				fprintf(stderr,
					"itrace: --jobs %s: a number of threads from 1 to 256\n",
					optarg);
				return EXIT_USAGE;
			}
			o.jobs = n;
			break;
		}
		case 'h':
			if (report)
				usage_report(stdout);
			else
				usage_decode(stdout);
			return 0;
		default:
			if (report)
				usage_report(stderr);
			else
				usage_decode(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		usage_decode(stderr);
		return EXIT_USAGE;
	}
	if (o.progress < 0)
		o.progress = isatty(STDERR_FILENO);
	o.name = optind < argc ? argv[optind] : "itrace.data";
	/* record --kcore's copy of the kernel text beside the recording */
	if (!o.kernel && strcmp(o.name, "-")) {
		struct stat sb;

		if (asprintf(&kcore_dir, "%s.kcore", o.name) > 0 &&
		    !stat(kcore_dir, &sb) && S_ISDIR(sb.st_mode))
			o.kernel = kcore_dir;
	}
	if (itrace_read_any(o.name, &d, o.buildid_dir, err, sizeof(err))) {
		fprintf(stderr, "itrace: %s\n", err);
		free(kcore_dir);
		return 1;
	}
	if (!strcmp(o.name, "-"))
		o.name = "<stdin>";
	/*
	 * The flow and --insn write lines by the million: write in big
	 * blocks.  glibc takes the size only with a buffer; given none, it
	 * allocates one of the file's st_blksize (4 KiB for a pipe or
	 * /dev/null).
	 */
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (report && (d.hdr.flags & ITRACE_FLAG_SAMPLES)) {
		ret = itrace_report_samples(&d, &o, stdout);
	} else if (sample_opts) {
		fprintf(stderr, "itrace: %s: not a recording of samples (itrace record -e EVENT)\n",
			o.name);
		ret = EXIT_USAGE;
	} else {
		ret = itrace_decode(&d, &o, stdout);
	}
	itrace_data_free(&d);
	free(kcore_dir);
	if (fflush(stdout) && !ret)
		ret = 1;
	return ret;
}
