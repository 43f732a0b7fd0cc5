// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data files written by `perf record -e intel_pt//`, read into the
 * same struct itrace_data as an itrace recording (perf-data.h).
 *
 * Layout (tools/perf/Documentation/perf.data-file-format.txt): a header
 * (magic "PERFILE2", the attr and data sections, a feature bitmap), the
 * attrs, the data section (perf_event records; a PERF_RECORD_AUXTRACE
 * record is followed by its trace bytes), then one section descriptor per
 * feature bit set (HEADER_CPUID: "GenuineIntel,6,158,10"; HEADER_BUILD_ID:
 * the build-ids of the files, [vdso] included).
 *
 * Trace: the AUXTRACE chunks of each buffer (idx: a CPU with per-CPU
 * buffers, else a thread) in stream order, as the TRACE sections of an
 * itrace recording; a buffer change starts a new run.  Sideband: every
 * other kernel record, as the PERF sections.  The [vdso] image comes from
 * perf's build-id cache (--buildid-dir, default ~/.debug).
 *
 * Threads: perf.data can have several attrs (intel_pt, perf's dummy
 * events for the sideband and the context switches), each with its
 * sample_type and event ids (the id section after each attr).  When every
 * attr has sample_id_all with TID and TIME, each sideband record's
 * sample_id trailer is read with the sample_type of its event (found by
 * its id: PERF_SAMPLE_IDENTIFIER, or PERF_SAMPLE_ID, which perf keeps at
 * the same place from the end in every attr) and written again with one
 * sample_type (TID, TIME, CPU), given as the recording's attr: the
 * timeline then reads the threads, address spaces and owners of the
 * trace as it does an itrace recording's.  Per-CPU buffers (AUXTRACE cpu
 * other than -1) are numbered by CPU, CPU-wide events (perf record -a, -C:
 * a thread map of pid -1) are flagged as such; the TSC to perf time
 * conversion and the timing ratios come from AUXTRACE_INFO.  Without
 * sample ids the sideband is read as before: one thread, one address
 * space.
 *
 * `perf record -e intel_bts//` (AUXTRACE_INFO type 2): the AUXTRACE
 * chunks hold BTS records, read as an itrace recording of --pmu intel_bts
 * (ITRACE_FLAG_BTS); the fields of its AUXTRACE_INFO (pmu_type, the time
 * conversion, snapshot_mode) are not needed: BTS records have no time.
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itrace-file.h"
#include "perf-data.h"
#include "perf-event.h"

static int fail(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -1;
}

bool perf_data_is(const uint8_t *buf, size_t size)
{
	uint64_t magic;

	if (size < 8)
		return false;
	memcpy(&magic, buf, 8);
	return magic == PERF_MAGIC;
}

static int append(uint8_t **buf, size_t *size, const uint8_t *p, size_t n)
{
	uint8_t *nb = realloc(*buf, *size + n + 1);

	if (!nb)
		return -1;
	memcpy(nb + *size, p, n);
	*buf = nb;
	*size += n;
	return 0;
}

/* A chunk of one buffer's trace: joins the last run if it continues it. */
static int add_chunk(struct itrace_data *d, uint32_t idx, uint64_t offset, const uint8_t *p,
		     size_t n)
{
	struct itrace_segment *last = d->nr_segs ? &d->segs[d->nr_segs - 1] : NULL;
	struct itrace_segment *prev = NULL;
	size_t i;

	if (!n)
		return 0;
	/*
	 * perf record pads each AUXTRACE record's data to 8 bytes
	 * (PERF_AUXTRACE_RECORD_ALIGNMENT) with zeros it counts in the size,
	 * while the next record's offset follows the unpadded data: drop the
	 * padding where the next chunk of the buffer overlaps it.  The
	 * buffer's previous chunk may be followed by other buffers' (perf
	 * record --per-thread): its padding then stays in d->trace, unused.
	 */
	for (i = d->nr_segs; i-- > 0;) {
		if (d->segs[i].buf_idx == idx) {
			prev = &d->segs[i];
			break;
		}
	}
	if (prev && offset > prev->stream_offset && prev->stream_offset + prev->size > offset &&
	    prev->stream_offset + prev->size - offset < 8) {
		if (prev == last)
			d->trace_size -= prev->stream_offset + prev->size - offset;
		prev->size = offset - prev->stream_offset;
	}
	if (!last || last->buf_idx != idx || last->stream_offset + last->size != offset) {
		struct itrace_segment *ns = realloc(d->segs, (d->nr_segs + 1) * sizeof(*ns));

		if (!ns)
			return -1;
		d->segs = ns;
		last = &d->segs[d->nr_segs++];
		memset(last, 0, sizeof(*last));
		last->stream_offset = offset;
		last->buf_offset = d->trace_size;
		last->buf_idx = idx;
	}
	if (append(&d->trace, &d->trace_size, p, n))
		return -1;
	last->size += n;
	return 0;
}

/* HEADER_CPUID of Intel: "GenuineIntel,FAMILY,MODEL,STEPPING" */
static void parse_cpuid(struct itrace_data *d, const uint8_t *p, uint64_t n)
{
	unsigned int fam, model, step;
	uint32_t len;
	char s[128];

	if (n < 4)
		return;
	memcpy(&len, p, 4);
	if (len > n - 4)
		len = n - 4;
	snprintf(s, sizeof(s), "%.*s", (int)len, (const char *)p + 4);
	if (sscanf(s, "GenuineIntel,%u,%u,%u", &fam, &model, &step) == 3) {
		d->hdr.cpu_vendor = ITRACE_CPU_INTEL;
		d->hdr.cpu_family = fam;
		d->hdr.cpu_model = model;
		d->hdr.cpu_stepping = step;
	}
}

const char *perf_buildid_dir(const char *dir, char **dflt)
{
	*dflt = NULL;
	if (!dir)
		dir = getenv("PERF_BUILDID_DIR");
	if (!dir && getenv("HOME") && asprintf(dflt, "%s/.debug", getenv("HOME")) > 0)
		dir = *dflt;
	return dir;
}

void perf_buildid_hex(char *hex, const uint8_t *id, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	hex[2 * n] = 0;
}

char *perf_buildid_vdso_path(const char *dir, const char *hex, bool file)
{
	char *path;

	if (asprintf(&path, "%s/[vdso]/%s%s", dir, hex, file ? "/vdso" : "") < 0)
		return NULL;
	return path;
}

/* The [vdso] of HEADER_BUILD_ID, from perf's build-id cache. */
static void find_vdso(struct itrace_data *d, const uint8_t *p, uint64_t n, const char *dir)
{
	uint64_t pos = 0;

	while (n - pos >= 8 + 4 + 24) {
		struct perf_event_header h;
		uint8_t size;
		char *path, id[2 * 20 + 1];
		const char *name;
		size_t nlen;
		FILE *f;

		memcpy(&h, p + pos, sizeof(h));
		if (h.size < 8 + 4 + 24 || h.size > n - pos)
			return;
		name = (const char *)p + pos + 36;
		nlen = strnlen(name, h.size - 36);
		size = h.misc & PERF_RECORD_MISC_BUILD_ID_SIZE ? p[pos + 12 + 20] : 20;
		if (size > 20)
			size = 20;
		if (nlen == 6 && !memcmp(name, "[vdso]", 6) && size) {
			perf_buildid_hex(id, p + pos + 12, size);
			path = perf_buildid_vdso_path(dir, id, true);
			f = path ? fopen(path, "rb") : NULL;
			free(path);
			if (f) {
				uint8_t buf[65536];
				size_t r;

				free(d->vdso);
				d->vdso = NULL;
				d->vdso_size = 0;
				while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
					if (append(&d->vdso, &d->vdso_size, buf, r))
						break;
				fclose(f);
			}
			return;
		}
		pos += h.size;
	}
}

/* A thread's buffer (pd_side.by_thread) */
struct pd_tbuf {
	uint32_t	tid;
	uint32_t	idx;
	bool		started;	/* side_buffer_tid() wrote its ITRACE_START */
};

/* An event id and the sample_type of its attr. */
struct pd_id_type {
	uint64_t	id;
	uint64_t	sample_type;
};

/* An attr of the file: its event's sample_type, and the ids of its events. */
struct pd_attr {
	uint64_t	sample_type;
	bool		sample_id_all;
	const uint8_t	*ids;		/* u64 each, in the file */
	uint64_t	nr_ids;
};

/* The sideband as read: with sample ids rewritten (pd->ids) or as it is. */
struct pd_side {
	struct pd_attr	*attrs;
	size_t		nr_attrs;
	bool		ids;		/* every attr: sample_id_all, TID and TIME */
	bool		tids;		/* every attr: sample_id_all and TID */
	bool		same;		/* every attr has the same sample_type */
	struct pev_buf	out;
	bool		have_buf_tid;	/* side_buffer_tid() wrote one, of last_buf */
	uint32_t	last_buf;
	/*
	 * perf record --per-thread of several threads: a buffer each
	 * (AUXTRACE idx, cpu -1).  The sideband's sample ids are then
	 * written with the buffer of their thread as the CPU (UINT32_MAX:
	 * none), a thread's being that of its AUXTRACE records or, for a
	 * child its event was inherited to, its parent's.
	 */
	bool		by_thread;
	struct pd_tbuf	*tbufs;		/* sorted by tid, one each */
	size_t		nr_tbufs, cap_tbufs;
	/* Without one sample_type for all: each id's, sorted by id. */
	struct pd_id_type *id_types;
	size_t		nr_id_types;
};

/* The sample_id trailers written: what the timeline reads. */
#define PD_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/*
 * The attrs section: each attr (attr_size - 16 bytes) followed by the file
 * section of its ids.  Returns the number read, 0 if none.
 */
static size_t read_attrs(const uint8_t *buf, size_t size, const struct perf_file_header *fh,
			 struct pd_side *sd)
{
	uint64_t n, i, asz = fh->attr_size - 16;

	if (fh->attrs.offset > size || fh->attrs.size > size - fh->attrs.offset ||
	    fh->attr_size < 16 + offsetof(struct perf_event_attr, read_format))
		return 0;
	n = fh->attrs.size / fh->attr_size;
	sd->attrs = calloc(n ? n : 1, sizeof(*sd->attrs));
	if (!sd->attrs)
		return 0;
	for (i = 0; i < n; i++) {
		const uint8_t *a = buf + fh->attrs.offset + i * fh->attr_size;
		struct perf_event_attr pa;
		struct perf_file_section ids;

		memset(&pa, 0, sizeof(pa));
		memcpy(&pa, a, asz < sizeof(pa) ? asz : sizeof(pa));
		memcpy(&ids, a + asz, sizeof(ids));
		sd->attrs[i].sample_type = pa.sample_type;
		sd->attrs[i].sample_id_all = pa.sample_id_all;
		if (ids.offset <= size && ids.size <= size - ids.offset) {
			sd->attrs[i].ids = buf + ids.offset;
			sd->attrs[i].nr_ids = ids.size / 8;
		}
	}
	sd->nr_attrs = n;
	sd->ids = n > 0;
	sd->tids = n > 0;
	sd->same = true;
	for (i = 0; i < n; i++) {
		const struct pd_attr *a = &sd->attrs[i];

		if (!a->sample_id_all || (a->sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)) !=
		    (PERF_SAMPLE_TID | PERF_SAMPLE_TIME))
			sd->ids = false;
		if (!a->sample_id_all || !(a->sample_type & PERF_SAMPLE_TID))
			sd->tids = false;
		if ((a->sample_type & PEV_ID_SAMPLE_TYPES) !=
		    (sd->attrs[0].sample_type & PEV_ID_SAMPLE_TYPES))
			sd->same = false;
	}
	return n;
}

static int cmp_id_type(const void *a, const void *b)
{
	const struct pd_id_type *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The attrs' ids with their sample_type, sorted (pd_side.id_types), so
 * that each record's lookup is a binary search: a file of perf record
 * --per-thread has an id per thread and event.  0, or -1 (ENOMEM).
 */
static int index_ids(struct pd_side *sd)
{
	size_t i, n = 0;
	uint64_t k;

	for (i = 0; i < sd->nr_attrs; i++)
		n += sd->attrs[i].nr_ids;
	if (!n)
		return 0;
	sd->id_types = malloc(n * sizeof(*sd->id_types));
	if (!sd->id_types)
		return -1;
	for (i = 0; i < sd->nr_attrs; i++)
		for (k = 0; k < sd->attrs[i].nr_ids; k++) {
			struct pd_id_type *t = &sd->id_types[sd->nr_id_types++];

			memcpy(&t->id, sd->attrs[i].ids + 8 * k, 8);
			t->sample_type = sd->attrs[i].sample_type;
		}
	/* qsort is not stable: of equal ids (a malformed file) any attr's */
	qsort(sd->id_types, n, sizeof(*sd->id_types), cmp_id_type);
	return 0;
}

/* The sample_type of the event with id, the first attr's if none has it. */
static uint64_t id_sample_type(const struct pd_side *sd, uint64_t id)
{
	struct pd_id_type key = { .id = id };
	const struct pd_id_type *t;

	t = sd->nr_id_types ? bsearch(&key, sd->id_types, sd->nr_id_types,
				      sizeof(key), cmp_id_type) : NULL;
	return t ? t->sample_type : sd->attrs[0].sample_type;
}

/* Where thread tid is, or would go, in the sorted pd_side.tbufs. */
static size_t tbuf_pos(const struct pd_side *sd, uint32_t tid)
{
	size_t lo = 0, hi = sd->nr_tbufs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sd->tbufs[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Thread tid's entry of pd_side.tbufs, NULL if none. */
static struct pd_tbuf *tbuf_find(const struct pd_side *sd, uint32_t tid)
{
	size_t i = tbuf_pos(sd, tid);

	return i < sd->nr_tbufs && sd->tbufs[i].tid == tid ? &sd->tbufs[i] : NULL;
}

/* The buffer of thread tid (pd_side.by_thread), UINT32_MAX if none. */
static uint32_t thread_buf(const struct pd_side *sd, uint32_t tid)
{
	const struct pd_tbuf *t = tbuf_find(sd, tid);

	return t ? t->idx : UINT32_MAX;
}

/* Thread tid (not yet in it) into pd_side.tbufs.  0, or -1 (ENOMEM). */
static int add_tbuf(struct pd_side *sd, uint32_t tid, uint32_t idx)
{
	size_t i;

	if (idx == UINT32_MAX)
		return 0;
	if (sd->nr_tbufs == sd->cap_tbufs) {
		size_t n = sd->cap_tbufs ? 2 * sd->cap_tbufs : 16;
		struct pd_tbuf *t = realloc(sd->tbufs, n * sizeof(*t));

		if (!t)
			return -1;
		sd->tbufs = t;
		sd->cap_tbufs = n;
	}
	i = tbuf_pos(sd, tid);
	memmove(&sd->tbufs[i + 1], &sd->tbufs[i], (sd->nr_tbufs - i) * sizeof(*sd->tbufs));
	sd->tbufs[i].tid = tid;
	sd->tbufs[i].idx = idx;
	sd->tbufs[i].started = false;
	sd->nr_tbufs++;
	return 0;
}

/*
 * perf record --per-thread of several threads: every AUXTRACE record has
 * cpu -1 and there are several idx.  Each buffer's thread (the tid of its
 * AUXTRACE records) into sd.  0, or -1 (ENOMEM).
 */
static int find_thread_bufs(struct pd_side *sd, const uint8_t *data, size_t size)
{
	struct pev_iter it;
	struct pev ev;
	char err[64];
	bool several = false, per_cpu = false;
	uint32_t first = UINT32_MAX;

	pev_iter_init(&it, data, size);
	it.perf_data = true;
	while (pev_next(&it, &ev, err, sizeof(err)) > 0) {
		if (ev.type != PERF_RECORD_AUXTRACE || pev_short(&ev))
			continue;
		if (ev.auxtrace.cpu != UINT32_MAX) {
			per_cpu = true;
			break;
		}
		if (first == UINT32_MAX)
			first = ev.auxtrace.idx;
		several |= ev.auxtrace.idx != first;
		if (ev.auxtrace.tid == UINT32_MAX || thread_buf(sd, ev.auxtrace.tid) != UINT32_MAX)
			continue;
		if (add_tbuf(sd, ev.auxtrace.tid, ev.auxtrace.idx))
			return -1;
	}
	sd->by_thread = (sd->ids || sd->tids) && several && !per_cpu;
	/*
	 * perf record --per-thread gives its events TID but no TIME: each
	 * buffer is one thread's whatever the time, so the records are
	 * read with time 0 (their order is the file's).
	 */
	if (sd->by_thread)
		sd->ids = true;
	else
		sd->nr_tbufs = 0;
	return 0;
}

/*
 * A kernel record of the sideband: as it is, or with its sample_id read
 * with its event's sample_type and written again with PD_SAMPLE_TYPE (a
 * record too short for its trailer gets zeros).  The id is where the first
 * attr's sample_type puts it: perf wants it at the same place from the
 * end of the record in every attr (IDENTIFIER last, or ID).
 */
static int side_add(struct pd_side *sd, const struct pev *ev)
{
	struct pev_id id;
	uint64_t st;
	size_t body = ev->size - 8;

	if (!sd->ids || ev->type == PERF_RECORD_SAMPLE)
		return pev_put(&sd->out, ev->type, ev->misc, ev->raw + 8, body) ? -1 : 0;
	st = sd->attrs[0].sample_type;
	if (!sd->same && pev_sample_id(ev, st, &id))
		st = id_sample_type(sd, id.id);
	if (pev_sample_id(ev, st, &id))
		body -= pev_id_size(st);
	else
		memset(&id, 0, sizeof(id));
	if (sd->by_thread) {
		if (ev->type == PERF_RECORD_FORK && ev->size >= 8 + 16 &&
		    thread_buf(sd, ev->task.tid) == UINT32_MAX &&
		    add_tbuf(sd, ev->task.tid, thread_buf(sd, ev->task.ptid)))
			return -1;
		id.cpu = thread_buf(sd, id.tid);
	}
	return pev_put_id(&sd->out, ev->type, ev->misc, ev->raw + 8, body, PD_SAMPLE_TYPE, &id);
}

/*
 * A per-thread buffer (AUXTRACE cpu -1) is its tid's: an ITRACE_START of
 * it at time 0 says so to the timeline (where no PERF_RECORD_AUX says
 * another), once per run of its AUXTRACE records, or once per buffer of
 * several (by_thread: the buffer as the CPU of its sample id).
 */
static int side_buffer_tid(struct pd_side *sd, const struct pev *ev)
{
	uint32_t body[2] = { UINT32_MAX, ev->auxtrace.tid };
	struct pev_id id = { .pid = UINT32_MAX, .tid = ev->auxtrace.tid };
	struct pd_tbuf *t;

	if (!sd->ids || ev->auxtrace.cpu != UINT32_MAX || ev->auxtrace.tid == UINT32_MAX)
		return 0;
	if (sd->by_thread) {
		t = tbuf_find(sd, ev->auxtrace.tid);
		if (!t || t->idx != ev->auxtrace.idx || t->started)
			return 0;
		t->started = true;
		id.cpu = ev->auxtrace.idx;
	} else if (sd->have_buf_tid && sd->last_buf == ev->auxtrace.idx) {
		return 0;
	}
	sd->have_buf_tid = true;
	sd->last_buf = ev->auxtrace.idx;
	return pev_put_id(&sd->out, PERF_RECORD_ITRACE_START, 0, body, sizeof(body),
			  PD_SAMPLE_TYPE, &id);
}

/*
 * intel_pt's AUXTRACE_INFO: the TSC to perf time conversion and the
 * timing ratios (as itrace record's TIME section); CPU-wide context
 * switches.
 */
static void read_pt_info(struct itrace_data *d, const struct pev *ev, bool *cpu_wide)
{
	uint64_t priv[PT_PRIV_MAX] = { 0 };
	size_t n = ev->size > 16 ? (ev->size - 16) / 8 : 0;

	memcpy(priv, ev->raw + 16, 8 * (n < PT_PRIV_MAX ? n : PT_PRIV_MAX));
	if (n > PT_CAP_USER_TIME_ZERO && priv[PT_CAP_USER_TIME_ZERO] && priv[PT_TIME_MULT] &&
	    priv[PT_TIME_SHIFT] < 64) {
		d->time.time_shift = priv[PT_TIME_SHIFT];
		d->time.time_mult = priv[PT_TIME_MULT];
		d->time.time_zero = priv[PT_TIME_ZERO];
		d->time.flags |= ITRACE_TIME_ZERO;
		d->has_time = 1;
	}
	if (n > PT_TSC_CTC_D) {
		d->time.tsc_ratio_num = priv[PT_TSC_CTC_N];
		d->time.tsc_ratio_den = priv[PT_TSC_CTC_D];
	}
	if (n > PT_MAX_NONTURBO_RATIO)
		d->time.nom_freq = priv[PT_MAX_NONTURBO_RATIO];
	if (n > PT_HAVE_SCHED_SWITCH && priv[PT_HAVE_SCHED_SWITCH] == 3)
		*cpu_wide = true;
}

/* PERF_RECORD_THREAD_MAP: nr, then { u64 pid; char comm[16]; }: pid -1 alone is CPU-wide. */
static int thread_map_cpu_wide(const struct pev *ev)
{
	uint64_t nr, pid;

	if (ev->size < 8 + 8 + 24)
		return -1;
	memcpy(&nr, ev->raw + 8, 8);
	memcpy(&pid, ev->raw + 16, 8);
	return nr == 1 && pid == UINT64_MAX;
}

int perf_data_parse(const uint8_t *buf, size_t size, struct itrace_data *d,
		    const char *buildid_dir, char *err, size_t errlen)
{
	struct perf_file_header fh;
	struct pd_side sd = { 0 };
	struct pev_iter it;
	struct pev ev;
	uint64_t end, fpos, cut = 0;
	unsigned int bit;
	int r, have_info = 0, map_wide = -1;
	bool per_cpu = false, info_wide = false;

	memset(d, 0, sizeof(*d));
	itrace_header_init(&d->hdr);
	d->hdr.page_size = 4096;
	d->is_perf_data = 1;
	if (size < 16 || !perf_data_is(buf, size))
		return fail(err, errlen, "not a perf.data file");
	memcpy(&fh, buf, size < sizeof(fh) ? size : sizeof(fh));
	if (fh.size == 16)
		return fail(err, errlen,
			    "a perf.data of perf record -o - (pipe mode): not supported; write a file");
	if (size < sizeof(fh) || fh.size < sizeof(fh) || fh.size > size)
		return fail(err, errlen, "perf.data: truncated header");
	if (fh.data.offset > size)
		return fail(err, errlen,
			    "perf.data: the data section begins beyond the end of the file (perf record did not finish?)");
	if (fh.data.size > size - fh.data.offset) {
		/* cut short: decode what is there, as for an itrace file */
		cut = fh.data.size - (size - fh.data.offset);
		fh.data.size = size - fh.data.offset;
	}
	if (fh.attrs.offset <= size && fh.attrs.size <= size - fh.attrs.offset &&
	    fh.attr_size >= 8 + 16 && fh.attrs.size >= fh.attr_size) {
		const uint8_t *a = buf + fh.attrs.offset;
		size_t n = fh.attr_size - 16;
		uint32_t type;

		memcpy(&type, a, 4);
		memcpy(&d->hdr.config, a + 8, 8);
		d->hdr.pmu_type = type;
		/*
		 * The trace event's attr (perf writes it first) as the
		 * recording's: its sample_type is that of the sideband as
		 * rewritten below, sample_id_all only if it was.
		 */
		if (read_attrs(buf, size, &fh, &sd)) {
			struct perf_event_attr pa;

			if (!sd.same && index_ids(&sd))
				goto nomem;
			if (fh.data.offset <= size && fh.data.size <= size - fh.data.offset &&
			    find_thread_bufs(&sd, buf + fh.data.offset, fh.data.size))
				goto nomem;

			memset(&pa, 0, sizeof(pa));
			memcpy(&pa, a, n < sizeof(pa) ? n : sizeof(pa));
			pa.sample_type = sd.ids ? PD_SAMPLE_TYPE : 0;
			pa.sample_id_all = sd.ids;
			d->attr = malloc(sizeof(pa));
			if (!d->attr)
				goto nomem;
			memcpy(d->attr, &pa, sizeof(pa));
			d->attr_size = sizeof(pa);
		}
	}

	pev_iter_init(&it, buf + fh.data.offset, fh.data.size);
	it.perf_data = true;
	while ((r = pev_next(&it, &ev, err, errlen)) > 0) {
		switch (ev.type) {
		case PERF_RECORD_AUXTRACE_INFO: {
			uint32_t type = 0;

			if (ev.size >= 16)
				memcpy(&type, ev.raw + 8, 4);
			if (type == PERF_AUXTRACE_INTEL_BTS) {
				d->hdr.flags |= ITRACE_FLAG_BTS;
			} else if (type != PERF_AUXTRACE_INTEL_PT) {
				snprintf(err, errlen,
					 "perf.data: its trace is of AUXTRACE type %u, not Intel PT (1) or Intel BTS (2)",
					 type);
				goto err;
			}
			if (type == PERF_AUXTRACE_INTEL_PT)
				read_pt_info(d, &ev, &info_wide);
			have_info = 1;
			break;
		}
		case PERF_RECORD_THREAD_MAP:
			map_wide = thread_map_cpu_wide(&ev);
			break;
		case PERF_RECORD_AUXTRACE:
			if (pev_short(&ev))
				break;
			/* per-CPU buffers (tid -1) by CPU, as itrace record numbers them */
			if (ev.auxtrace.cpu != UINT32_MAX)
				per_cpu = true;
			else if (side_buffer_tid(&sd, &ev))
				goto nomem;
			if (add_chunk(d, ev.auxtrace.cpu != UINT32_MAX ? ev.auxtrace.cpu :
					 ev.auxtrace.idx, ev.auxtrace.offset, ev.raw + ev.size,
				      ev.auxtrace.size))
				goto nomem;
			break;
		case PERF_RECORD_COMPRESSED:
			snprintf(err, errlen,
				 "perf.data: compressed records (perf record -z): not supported; perf inject -i IN -o OUT writes them uncompressed");
			goto err;
		default:
			/* kernel records are the sideband; perf's own are not */
			if (ev.type < PERF_RECORD_HEADER_ATTR && side_add(&sd, &ev))
				goto nomem;
			break;
		}
	}
	d->perf = sd.out.buf;
	d->perf_size = sd.out.len;
	sd.out.buf = NULL;
	/*
	 * Per-CPU buffers; CPU-wide events by the thread map (pid -1: perf
	 * record -a, -C), else (no THREAD_MAP) by AUXTRACE_INFO's context
	 * switches (3: CPU-wide; perf record of a task with kernel mode also
	 * has CPU-wide switch records, but its thread map names the task).
	 */
	if (per_cpu) {
		d->hdr.flags |= ITRACE_FLAG_PER_CPU;
		if (map_wide > 0 || (map_wide < 0 && info_wide))
			d->hdr.flags |= ITRACE_FLAG_CPU_WIDE;
	}
	d->bufs_by_thread = sd.by_thread;
	if (r < 0 || cut || it.cut) {
		/* a data section cut short: keep what came before, as itrace files do */
		d->truncated = 1;
		if (r < 0)
			snprintf(d->truncated_why, sizeof(d->truncated_why), "perf.data: %s", err);
		else
			snprintf(d->truncated_why, sizeof(d->truncated_why),
				 "perf.data: cut short, %llu bytes of its data section missing",
				 (unsigned long long)(cut ? cut : it.cut));
	}
	if (!have_info) {
		snprintf(err, errlen,
			 "perf.data: no AUXTRACE_INFO record: not a recording of intel_pt or intel_bts (perf record -e intel_pt//)");
		goto err;
	}

	/* the features: one section descriptor per bit set, after the data */
	fpos = fh.data.offset + fh.data.size;
	for (bit = 0; bit < HEADER_FEAT_BITS; bit++) {
		struct perf_file_section fs;

		if (!(fh.features[bit / 64] & (1ULL << (bit % 64))))
			continue;
		if (fpos > size || size - fpos < sizeof(fs))
			break;
		memcpy(&fs, buf + fpos, sizeof(fs));
		fpos += sizeof(fs);
		if (fs.offset > size || fs.size > size - fs.offset)
			continue;
		end = fs.size;
		if (bit == HEADER_CPUID)
			parse_cpuid(d, buf + fs.offset, end);
		else if (bit == HEADER_BUILD_ID && buildid_dir)
			find_vdso(d, buf + fs.offset, end, buildid_dir);
	}
	free(sd.attrs);
	free(sd.tbufs);
	free(sd.id_types);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
err:
	free(sd.attrs);
	free(sd.tbufs);
	free(sd.id_types);
	free(sd.out.buf);
	itrace_data_free(d);
	return -1;
}

int itrace_read_any(const char *path, struct itrace_data *d, const char *buildid_dir,
		    char *err, size_t errlen)
{
	char *p = NULL, *dflt = NULL;
	struct stat st;
	uint8_t *buf;
	size_t size;
	int ret;

	/* perf record --kcore writes a directory: its data file */
	if (strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		if (asprintf(&p, "%s/data", path) < 0)
			return fail(err, errlen, "out of memory");
		if (access(p, F_OK)) {
			snprintf(err, errlen,
				 "%s: a directory, and not one of perf record --kcore (no %s)",
				 path, p);
			free(p);
			return -1;
		}
		path = p;
	}
	if (itrace_read_all(path, &buf, &size, err, errlen)) {
		free(p);
		return -1;
	}
	if (!perf_data_is(buf, size)) {
		ret = itrace_parse(buf, size, d, err, errlen);
		goto out;
	}
	buildid_dir = perf_buildid_dir(buildid_dir, &dflt);
	ret = perf_data_parse(buf, size, d, buildid_dir, err, errlen);
	/* each buffer's trace in one piece, as itrace_parse() leaves it */
	if (!ret && itrace_regroup(d)) {
		itrace_data_free(d);
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
out:
	if (ret) {
		char tmp[256];

		snprintf(tmp, sizeof(tmp), "%s: %s", strcmp(path, "-") ? path : "<stdin>", err);
		snprintf(err, errlen, "%s", tmp);
	}
	free(buf);
	free(dflt);
	free(p);
	return ret;
}
