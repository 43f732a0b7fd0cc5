// SPDX-License-Identifier: GPL-2.0
/*
 * itrace convert: an itrace recording written as a perf.data file (perf's
 * file format, version 2 "PERFILE2", not pipe mode) that perf script and
 * perf report decode with perf's own Intel PT decoder.
 *
 * Layout written (tools/perf/Documentation/perf.data-file-format.txt):
 *
 *   struct perf_file_header          magic, sizes, attrs, data, feature bitmap
 *   struct perf_event_attr      the intel_pt event's (ATTR_SIZE bytes)
 *     + { ids offset, size }    and one event id
 *   u64 id
 *   data: PERF_RECORD_AUXTRACE_INFO (intel_pt's priv fields),
 *         PERF_RECORD_TIME_CONV (if the recording has TIME),
 *         the sideband records of the recording, each with the sample_id
 *         trailer that the attr says,
 *         one PERF_RECORD_AUXTRACE per contiguous run of trace of a
 *         buffer, each followed by its bytes (padded to 8 with zeros, PAD
 *         packets)
 *   one { offset, size } per feature bit set, in bit order, then each
 *   feature's bytes: HEADER_BUILD_ID, HEADER_CPUID, HEADER_AUXTRACE.
 *
 * The file goes to a temporary file beside the output, renamed at the
 * end; an error or SIGINT/SIGTERM/SIGHUP removes it.
 *
 * With --kernel (a recording of record -k and the kernel text of its boot),
 * the output is a directory in perf record --kcore's layout, which perf
 * script reads the kernel code from: OUT/data, the perf.data file (with a
 * PERF_RECORD_MMAP of [kernel.kallsyms]_text as perf record writes one,
 * which names the kernel map and its relocation symbol), and
 * OUT/kcore_dir/{kcore,kallsyms,modules}, copies of the kernel text's.  It
 * is made as a temporary directory beside OUT, renamed (or exchanged with
 * an OUT of that layout) at the end.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <intel-pt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "perf-data.h"
#include "perf-event.h"
#include "sym.h"

/* perf pads names in its feature sections to this */
#define NAME_ALIGN		64
/* attr.size written: PERF_ATTR_SIZE_VER7, which every perf since 5.13 reads */
#define ATTR_SIZE		128
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* statfs f_type of procfs (<linux/magic.h>): /proc/kcore is not copied */
#define PROC_SUPER_MAGIC	0x9fa0
/* the last kernel record type a current perf knows (AUX_OUTPUT_HW_ID) */
#define LAST_KNOWN_RECORD	21

/*
 * intel_pt's RTIT_CTL bits in attr.config (the driver's format/ files;
 * timeline.c reads MTCFreq at the same place): perf's AUXTRACE_INFO
 * carries them as masks.
 */
#define RTIT_CYC		BIT_ULL(1)
#define RTIT_MTC		BIT_ULL(9)
#define RTIT_TSC		BIT_ULL(10)
#define RTIT_NORETCOMP		BIT_ULL(11)
#define RTIT_MTC_FREQ		(0xfULL << 14)

/* The event id written in the attr's ids (perf's synthesized events need one). */
#define EVENT_ID		1

/* perf_event_attr as written: its first ATTR_SIZE bytes */
union conv_attr {
	struct perf_event_attr	a;
	uint8_t			raw[ATTR_SIZE];
};

struct conv {
	const struct itrace_data *d;
	union conv_attr	attr;
	uint64_t	in_type;	/* sample_type of the recording's trailers */
	uint64_t	out_type;	/* and of the ones written */
	struct pev_buf	head;		/* AUXTRACE_INFO, TIME_CONV, sideband */
	struct pev_buf	bid;		/* HEADER_BUILD_ID */
	uint64_t	last_time;	/* of the newest sideband record */
	uint64_t	ref_tsc;	/* AUXTRACE reference: a TSC of the recording */
	size_t		nr_dropped;	/* records perf does not know */
	size_t		nr_itrace_lost;
	uint8_t		vdso_id[PEV_BUILD_ID_MAX];	/* of the [vdso] image */
	size_t		vdso_id_len;	/* 0: none */
};

/*
 * The temporary output, removed by the signal handler: a NULL-terminated
 * list of paths, unlinked (files) or else removed as directories, in
 * order; stored and loaded with __atomic builtins, so the handler sees
 * whole pointers in order.
 */
static char **tmp_paths;

/* Remove the paths of a tmp_paths list (async-signal-safe). */
static void remove_paths(char *const *p)
{
	for (; *p; p++)
		if (unlink(*p))
			rmdir(*p);
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporary output, then die of sig. */
static void on_signal(int sig)
{
	char **p = __atomic_load_n(&tmp_paths, __ATOMIC_SEQ_CST);

	if (p)
		remove_paths(p);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The attr written: the recording's (ATTR section), or one from its header. */
static void conv_attr(struct conv *c)
{
	const struct itrace_data *d = c->d;
	struct perf_event_attr a;
	size_t n = sizeof(a) < ATTR_SIZE ? sizeof(a) : ATTR_SIZE;
	uint64_t keep = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

	memset(&a, 0, sizeof(a));
	if (d->attr) {
		memcpy(&a, d->attr, d->attr_size < sizeof(a) ? d->attr_size : sizeof(a));
	} else {
		a.type = d->hdr.pmu_type;
		a.config = d->hdr.config;
	}
	c->in_type = itrace_sample_type(d);
	/*
	 * The trailers are written again with TID, TIME and CPU of the
	 * recording's; a recording without them gets TID from the records,
	 * since perf's intel_pt decoder wants ordered events, and so
	 * sample_id_all.  IDENTIFIER (EVENT_ID): once perf has added the
	 * events it synthesizes, it finds a record's event by it.
	 */
	c->out_type = c->in_type & keep;
	if (!c->out_type)
		c->out_type = PERF_SAMPLE_TID;
	/*
	 * perf decodes time stamps only if every event has TIME: a trace
	 * with TSC packets and their conversion to perf time, but records
	 * without time (ptsim's, version 1), gets TIME 0 on its records,
	 * which puts them before the trace, as their single address space
	 * has them.
	 */
	if ((a.config & RTIT_TSC) && d->has_time && (d->time.flags & ITRACE_TIME_ZERO))
		c->out_type |= PERF_SAMPLE_TIME;
	c->out_type |= PERF_SAMPLE_IDENTIFIER;
	/*
	 * No PERF_SAMPLE_READ (perf wants read_format ID with it; there are
	 * no samples to read), IP as perf record sets it for intel_pt.
	 */
	a.sample_type = c->out_type | PERF_SAMPLE_IP;
	a.read_format = 0;
	a.sample_id_all = 1;
	a.size = ATTR_SIZE;
	memset(&c->attr, 0, sizeof(c->attr));
	memcpy(c->attr.raw, &a, n);
}

/* PERF_RECORD_AUXTRACE_INFO of intel_pt, from the recording's header and TIME. */
static int put_auxtrace_info(struct conv *c)
{
	const struct itrace_data *d = c->d;
	const struct perf_event_attr *a = &c->attr.a;
	uint64_t body[1 + PT_PRIV_MAX] = { PERF_AUXTRACE_INTEL_PT };
	uint64_t *priv = body + 1;
	bool per_cpu = d->hdr.flags & ITRACE_FLAG_PER_CPU;

	priv[PT_PMU_TYPE] = a->type;
	if (d->has_time && (d->time.flags & ITRACE_TIME_ZERO)) {
		priv[PT_TIME_SHIFT] = d->time.time_shift;
		priv[PT_TIME_MULT] = d->time.time_mult;
		priv[PT_TIME_ZERO] = d->time.time_zero;
		priv[PT_CAP_USER_TIME_ZERO] = 1;
	}
	priv[PT_TSC_BIT] = RTIT_TSC;
	priv[PT_NORETCOMP_BIT] = RTIT_NORETCOMP;
	/*
	 * Context switches: per-CPU buffers of CPU-wide events (3) or of
	 * per-task events with context_switch (2) tell perf which thread
	 * runs on a CPU; one buffer of one task needs none (0).
	 */
	if (per_cpu && (d->hdr.flags & ITRACE_FLAG_CPU_WIDE))
		priv[PT_HAVE_SCHED_SWITCH] = 3;
	else if (per_cpu && a->context_switch)
		priv[PT_HAVE_SCHED_SWITCH] = 2;
	priv[PT_SNAPSHOT_MODE] = !!(d->hdr.flags & ITRACE_FLAG_SNAPSHOT);
	priv[PT_PER_CPU_MMAPS] = per_cpu;
	priv[PT_MTC_BIT] = RTIT_MTC;
	priv[PT_MTC_FREQ_BITS] = RTIT_MTC_FREQ;
	if (d->has_time) {
		priv[PT_TSC_CTC_N] = d->time.tsc_ratio_num;
		priv[PT_TSC_CTC_D] = d->time.tsc_ratio_den;
		priv[PT_MAX_NONTURBO_RATIO] = d->time.nom_freq;
	}
	priv[PT_CYC_BIT] = RTIT_CYC;
	/* the recording does not keep record --filter's string: none */
	priv[PT_FILTER_STR_LEN] = 0;
	return pev_put(&c->head, PERF_RECORD_AUXTRACE_INFO, 0, body, sizeof(body));
}

/* PERF_RECORD_TIME_CONV (its first form: shift, mult, zero) if there is TIME. */
static int put_time_conv(struct conv *c)
{
	const struct itrace_data *d = c->d;
	uint64_t body[3];

	if (!d->has_time || !(d->time.flags & ITRACE_TIME_ZERO))
		return 0;
	body[0] = d->time.time_shift;
	body[1] = d->time.time_mult;
	body[2] = d->time.time_zero;
	return pev_put(&c->head, PERF_RECORD_TIME_CONV, 0, body, sizeof(body));
}

/* Append [p, p + n) and zeros to pad to a multiple of align. */
static int buf_add(struct pev_buf *b, const void *p, size_t n, size_t align)
{
	size_t size = (n + align - 1) / align * align;

	if (b->len + size > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		uint8_t *nb;

		while (cap < b->len + size)
			cap *= 2;
		nb = realloc(b->buf, cap);
		if (!nb)
			return -1;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, n);
	memset(b->buf + b->len + n, 0, size - n);
	b->len += size;
	return 0;
}

/* Whether HEADER_BUILD_ID has an entry for that name already. */
static bool have_build_id(const struct conv *c, const char *name, size_t name_len)
{
	size_t pos = 0;

	while (pos < c->bid.len) {
		const struct perf_event_header *h = (const void *)(c->bid.buf + pos);
		const char *n = (const char *)c->bid.buf + pos + 36;

		if (strnlen(n, h->size - 36) == name_len && !memcmp(n, name, name_len))
			return true;
		pos += h->size;
	}
	return false;
}

/*
 * One HEADER_BUILD_ID entry (perf's struct build_id_event: header, pid,
 * 24 bytes of id whose byte 20 is its size, the name padded to 64) of a
 * file of the host's user space (kernel: misc's cpumode says so).
 */
static int put_build_id(struct conv *c, uint16_t cpumode, const uint8_t *id, size_t size,
			const char *name, size_t name_len)
{
	struct perf_event_header h = { .type = PERF_RECORD_HEADER_BUILD_ID };
	int32_t pid = -1;	/* the host machine */
	uint8_t bid[24] = { 0 };
	size_t padded = (name_len + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	char *n;
	int ret;

	if (!size || have_build_id(c, name, name_len))
		return 0;
	if (size > PEV_BUILD_ID_MAX)
		size = PEV_BUILD_ID_MAX;
	memcpy(bid, id, size);
	bid[20] = size;
	h.misc = cpumode | PERF_RECORD_MISC_BUILD_ID_SIZE;
	h.size = sizeof(h) + sizeof(pid) + sizeof(bid) + padded;
	n = strndup(name, name_len);
	if (!n)
		return -1;
	ret = buf_add(&c->bid, &h, sizeof(h), 1) ||
	      buf_add(&c->bid, &pid, sizeof(pid), 1) ||
	      buf_add(&c->bid, bid, sizeof(bid), 1) ||
	      buf_add(&c->bid, n, name_len + 1, NAME_ALIGN);
	free(n);
	return ret ? -1 : 0;
}

/*
 * The build-id of the recording's [vdso] image, for HEADER_BUILD_ID, also
 * kept in c->vdso_id (c->vdso_id_len bytes, 0 when the image has none).
 */
static int put_vdso_build_id(struct conv *c)
{
	char path[64];
	int fd, n;

	if (!c->d->vdso_size)
		return 0;
	fd = itrace_mem_image("vdso", c->d->vdso, c->d->vdso_size, path, sizeof(path));
	if (fd < 0)
		return 0;	/* no memfd: no build-id to name it by */
	n = sym_build_id(path, c->vdso_id, sizeof(c->vdso_id));
	close(fd);
	if (n <= 0)
		return 0;
	c->vdso_id_len = n;
	return put_build_id(c, PERF_RECORD_MISC_USER, c->vdso_id, n, "[vdso]", 6);
}

/* mkdir -p of path's directories up to and including its last component. */
static int mkdir_p(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); ; p = strchr(p + 1, '/')) {
		if (p)
			*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			if (p)
				*p = '/';
			return -1;
		}
		if (!p)
			return 0;
		*p = '/';
	}
}

/* Whether path is a regular file of size bytes with the bytes buf. */
static bool same_file(const char *path, const uint8_t *buf, size_t size)
{
	uint8_t chunk[4096];
	size_t off = 0, n;
	bool same = true;
	struct stat st;
	FILE *f;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size)
		return false;
	f = fopen(path, "rb");
	if (!f)
		return false;
	while (same && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		same = off + n <= size && !memcmp(chunk, buf + off, n);
		off += n;
	}
	fclose(f);
	return same && off == size;
}

/*
 * The recording's [vdso] into perf's build-id cache dir, where perf record
 * leaves the [vdso] it saw and where perf script and perf report look for
 * it by the build-id of HEADER_BUILD_ID (perf has no other source for a
 * [vdso] that its own process does not map with that build-id):
 * dir/[vdso]/ID/vdso, and the link dir/.build-id/ID[0,2)/ID[2,) to
 * ../../[vdso]/ID.  An entry already there with these bytes is kept.
 * Returns 0, or -1 with errno (nothing half-written is left at the name).
 */
static int cache_vdso(const struct conv *c, const char *dir)
{
	char id[2 * PEV_BUILD_ID_MAX + 1], *file, *tmp = NULL, *link = NULL;
	char target[2 * PEV_BUILD_ID_MAX + 32];
	int fd = -1, ret = -1, err;

	perf_buildid_hex(id, c->vdso_id, c->vdso_id_len);
	file = perf_buildid_vdso_path(dir, id, false);
	if (!file || mkdir_p(file))
		goto out;
	free(file);
	file = perf_buildid_vdso_path(dir, id, true);
	if (!file)
		goto out;
	if (!same_file(file, c->d->vdso, c->d->vdso_size)) {
		if (asprintf(&tmp, "%s.XXXXXX", file) < 0) {
			tmp = NULL;
			goto out;
		}
		fd = mkstemp(tmp);
		if (fd < 0)
			goto out;
		if (write(fd, c->d->vdso, c->d->vdso_size) != (ssize_t)c->d->vdso_size) {
			if (errno == 0)
				errno = ENOSPC;
			goto out;
		}
		if (fchmod(fd, 0644) || close(fd)) {
			fd = -1;
			goto out;
		}
		fd = -1;
		if (rename(tmp, file))
			goto out;
		free(tmp);
		tmp = NULL;
	}
	/* the link perf's lookup by build-id goes through */
	if (asprintf(&link, "%s/.build-id/%.2s", dir, id) < 0) {
		link = NULL;
		goto out;
	}
	if (mkdir_p(link))
		goto out;
	free(link);
	if (asprintf(&link, "%s/.build-id/%.2s/%s", dir, id, id + 2) < 0) {
		link = NULL;
		goto out;
	}
	snprintf(target, sizeof(target), "../../[vdso]/%s", id);
	if (symlink(target, link) && errno != EEXIST)
		goto out;
	ret = 0;
out:
	err = errno;
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(file);
	free(link);
	errno = err;
	return ret;
}

/*
 * The thread of a record without a sample_id trailer: the one it names
 * (MMAP, MMAP2, COMM, FORK, EXIT, ITRACE_START), else pid, the traced
 * process of the recording.
 */
static void record_thread(const struct pev *ev, uint32_t pid, struct pev_id *id)
{
	memset(id, 0, sizeof(*id));
	id->pid = pid;
	id->tid = pid;
	if (pev_short(ev))
		return;
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		id->pid = ev->mmap.pid;
		id->tid = ev->mmap.tid;
		break;
	case PERF_RECORD_COMM:
		id->pid = ev->comm.pid;
		id->tid = ev->comm.tid;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		id->pid = ev->task.pid;
		id->tid = ev->task.tid;
		break;
	case PERF_RECORD_ITRACE_START:
		id->pid = ev->start.pid;
		id->tid = ev->start.tid;
		break;
	}
}

/*
 * The recording's sideband records, each with the trailer of out_type:
 * the recording's own fields, or (no trailer in the recording) the
 * thread the record names, else the traced process.  Records a perf does
 * not know (PERF_RECORD_ITRACE_LOST of this series' kernel) are counted,
 * not written.  0, or -1 with a message in err (a malformed record).
 */
static int conv_sideband(struct conv *c, char *err, size_t errlen)
{
	const struct itrace_data *d = c->d;
	struct pev_iter it;
	struct pev ev;
	int r;

	pev_iter_init(&it, d->perf, d->perf_size);
	while ((r = pev_next(&it, &ev, err, errlen)) > 0) {
		size_t body = ev.size - sizeof(struct perf_event_header);
		struct pev_id id;

		if (ev.type == PERF_RECORD_ITRACE_LOST) {
			c->nr_itrace_lost++;
			continue;
		}
		if (!ev.type || ev.type > LAST_KNOWN_RECORD || ev.type == PERF_RECORD_SAMPLE) {
			c->nr_dropped++;
			continue;
		}
		if (c->in_type && pev_sample_id(&ev, c->in_type, &id))
			body -= pev_id_size(c->in_type);
		else
			record_thread(&ev, d->hdr.pid, &id);
		id.id = EVENT_ID;
		if (id.time > c->last_time)
			c->last_time = id.time;
		/* -1: no memory, or a record of 64 KiB with the new trailer */
		if (pev_put_id(&c->head, ev.type, ev.misc,
			       ev.raw + sizeof(struct perf_event_header),
			       body, c->out_type, &id)) {
			snprintf(err, errlen, "record at 0x%zx: out of memory or too long", ev.pos);
			return -1;
		}
		if (ev.type == PERF_RECORD_MMAP2 && !pev_short(&ev) && ev.mmap.build_id_size &&
		    put_build_id(c, ev.misc & PERF_RECORD_MISC_CPUMODE_MASK, ev.mmap.build_id,
				 ev.mmap.build_id_size, ev.mmap.name,
				 strnlen(ev.mmap.name, ev.mmap.name_len)))
			goto nomem;
	}
	return r < 0 ? -1 : 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/*
 * The reference of the AUXTRACE records: perf's decoder takes the upper
 * byte of the 7-byte TSC packets from it (perf record puts the TSC at
 * which it read the buffer there) and without it leaves the time 0 until
 * a reference comes, which a converted file never gives: no time stamps
 * (and perf 6.1 then crashes walking the trace before its first one).
 * The TSC of the newest sideband record (perf time back to TSC, as
 * perf's perf_time_to_tsc()), else the first TSC packet of the trace
 * (records without time: ptsim's), else 0: no TSC packets.
 */
static void conv_ref_tsc(struct conv *c)
{
	const struct itrace_data *d = c->d;
	const struct itrace_time *t = &d->time;
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	struct pt_packet p;

	if (!d->has_time || !(t->flags & ITRACE_TIME_ZERO) || !t->time_mult)
		return;
	if (c->last_time > t->time_zero) {
		uint64_t ns = c->last_time - t->time_zero;

		c->ref_tsc = (ns / t->time_mult << t->time_shift) +
			     ((ns % t->time_mult) << t->time_shift) / t->time_mult;
		return;
	}
	pt_config_init(&cfg);
	cfg.begin = d->trace;
	cfg.end = d->trace + d->trace_size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return;
	while (!c->ref_tsc && pt_pkt_sync_forward(dec) >= 0)
		while (pt_pkt_next(dec, &p, sizeof(p)) >= 0)
			if (p.type == ppt_tsc) {
				c->ref_tsc = p.payload.tsc.tsc;
				break;
			}
	pt_pkt_free_decoder(dec);
}

/* n rounded up to a multiple of 8 */
static uint64_t pad8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

/*
 * The AUXTRACE records: one per segment, but a segment that continues
 * the previous one of its buffer (a snapshot that takes up where the one
 * before ended: the reader keeps snapshots apart) goes into that one's
 * record.  perf in snapshot mode takes each AUX buffer for a new copy of
 * the ring, which may overlap the one before: it compares the TSC
 * packets of their PSB+ and, finding none in common, starts decoding the
 * new one at its first PSB, losing the instructions of the bytes before
 * it; in one record, they are decoded as one stream, as itrace decode
 * does.  link[i].next: 1 + the segment written after segment i in its
 * record, 0: none; link[i].cont: segment i is in an earlier one's record.
 */
struct rec_link {
	size_t	next;
	bool	cont;
};

static void link_records(const struct itrace_data *d, struct rec_link *link)
{
	size_t i, k;

	for (i = 1; i < d->nr_segs; i++) {
		const struct itrace_segment *s = &d->segs[i];

		/* the previous segment of the buffer, and the last of its record */
		for (k = i; k-- > 0;)
			if (d->segs[k].buf_idx == s->buf_idx)
				break;
		if (k == (size_t)-1 || !s->size ||
		    d->segs[k].stream_offset + d->segs[k].size != s->stream_offset)
			continue;
		link[k].next = i + 1;
		link[i].cont = true;
	}
}

/* The bytes of the AUXTRACE record of segment i, 0: none (or in another's) */
static uint64_t record_size(const struct itrace_data *d, const struct rec_link *link, size_t i)
{
	uint64_t size = 0;
	size_t j;

	if (link[i].cont)
		return 0;
	for (j = i + 1; j; j = link[j - 1].next)
		size += d->segs[j - 1].size;
	return size;
}

/* fwrite that says -1 on a short write; n may be 0 */
static int put(FILE *f, const void *p, size_t n)
{
	return n && fwrite(p, n, 1, f) != 1 ? -1 : 0;
}

/*
 * The whole perf.data into f: header, attr and id, data (head, then an
 * AUXTRACE record and its bytes per run of trace), the features.
 */
static int write_perf_data(struct conv *c, FILE *f)
{
	static const uint8_t zeros[8];
	const struct itrace_data *d = c->d;
	struct perf_file_header fh;
	struct perf_file_section ids, sec[3];
	uint64_t id = EVENT_ID, pos, nr = 0, i;
	struct pev_buf cpuid = { 0 }, index = { 0 };
	struct rec_link *link = NULL;
	const struct pev_buf *feat[3];
	unsigned int bits[3], nfeat = 0, k;
	int ret = -1;

	memset(&fh, 0, sizeof(fh));
	fh.magic = PERF_MAGIC;
	fh.size = sizeof(fh);
	fh.attr_size = ATTR_SIZE + sizeof(ids);
	fh.attrs.offset = sizeof(fh);
	fh.attrs.size = fh.attr_size;
	ids.offset = fh.attrs.offset + fh.attrs.size;
	ids.size = sizeof(id);
	fh.data.offset = ids.offset + ids.size;

	/* the AUXTRACE index: where each AUXTRACE record is, its header size */
	if (d->nr_segs) {
		link = calloc(d->nr_segs, sizeof(*link));
		if (!link)
			goto out;
		link_records(d, link);
	}
	pos = fh.data.offset + c->head.len;
	for (i = 0; i < d->nr_segs; i++)
		if (record_size(d, link, i))
			nr++;
	if (buf_add(&index, &nr, sizeof(nr), 1))
		goto out;
	for (i = 0; i < d->nr_segs; i++) {
		uint64_t ent[2] = { pos, 48 }, size = record_size(d, link, i);

		if (!size)
			continue;
		if (buf_add(&index, ent, sizeof(ent), 1))
			goto out;
		pos += 48 + pad8(size);
	}
	fh.data.size = pos - fh.data.offset;

	/* HEADER_CPUID as perf writes it on Intel: "GenuineIntel,FAMILY,MODEL,STEPPING" */
	if (d->hdr.cpu_vendor == ITRACE_CPU_INTEL) {
		char s[64];
		uint32_t len;

		snprintf(s, sizeof(s), "GenuineIntel,%u,%u,%u", d->hdr.cpu_family,
			 d->hdr.cpu_model, d->hdr.cpu_stepping);
		len = (strlen(s) + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
		if (buf_add(&cpuid, &len, sizeof(len), 1) ||
		    buf_add(&cpuid, s, strlen(s) + 1, NAME_ALIGN))
			goto out;
	}
	if (c->bid.len) {
		bits[nfeat] = HEADER_BUILD_ID;
		feat[nfeat++] = &c->bid;
	}
	if (cpuid.len) {
		bits[nfeat] = HEADER_CPUID;
		feat[nfeat++] = &cpuid;
	}
	bits[nfeat] = HEADER_AUXTRACE;
	feat[nfeat++] = &index;
	pos = fh.data.offset + fh.data.size + nfeat * sizeof(sec[0]);
	for (k = 0; k < nfeat; k++) {
		fh.features[bits[k] / 64] |= 1ULL << (bits[k] % 64);
		sec[k].offset = pos;
		sec[k].size = feat[k]->len;
		pos += feat[k]->len;
	}

	if (put(f, &fh, sizeof(fh)) || put(f, c->attr.raw, ATTR_SIZE) ||
	    put(f, &ids, sizeof(ids)) || put(f, &id, sizeof(id)) ||
	    put(f, c->head.buf, c->head.len))
		goto out;
	for (i = 0; i < d->nr_segs; i++) {
		const struct itrace_segment *s = &d->segs[i];
		struct perf_event_header h = { .type = PERF_RECORD_AUXTRACE, .size = 48 };
		bool per_cpu = d->hdr.flags & ITRACE_FLAG_PER_CPU;
		uint64_t size = record_size(d, link, i);
		/* size, offset, reference (a TSC); idx, tid, cpu, reserved */
		uint64_t a[3] = { pad8(size), s->stream_offset, c->ref_tsc };
		uint32_t b[4] = { s->buf_idx, per_cpu ? UINT32_MAX : d->hdr.pid,
				  per_cpu ? s->buf_idx : UINT32_MAX, 0 };
		size_t j;

		if (!size)
			continue;
		if (put(f, &h, sizeof(h)) || put(f, a, sizeof(a)) || put(f, b, sizeof(b)))
			goto out;
		for (j = i + 1; j; j = link[j - 1].next)
			if (put(f, d->trace + d->segs[j - 1].buf_offset, d->segs[j - 1].size))
				goto out;
		if (put(f, zeros, pad8(size) - size))
			goto out;
	}
	if (put(f, sec, nfeat * sizeof(sec[0])))
		goto out;
	for (k = 0; k < nfeat; k++)
		if (put(f, feat[k]->buf, feat[k]->len))
			goto out;
	ret = 0;
out:
	free(link);
	free(cpuid.buf);
	free(index.buf);
	return ret;
}

/*
 * cache_vdso() into dir, else $PERF_BUILDID_DIR, else ~/.debug (perf's
 * default); a warning when that fails: the perf.data is whole without it.
 */
static void add_vdso_to_cache(const struct conv *c, const char *dir)
{
	char *dflt;

	dir = perf_buildid_dir(dir, &dflt);
	if (!dir)
		fprintf(stderr,
			"itrace: warning: [vdso] not put in perf's build-id cache: no --buildid-dir, $PERF_BUILDID_DIR or $HOME\n");
	else if (cache_vdso(c, dir))
		fprintf(stderr,
			"itrace: warning: [vdso] not put in perf's build-id cache %s: %s (perf script cannot decode the trace through it)\n",
			dir, strerror(errno));
	free(dflt);
}

/* the --kernel files refused */
#define WHY_PROC \
	"the running kernel's memory, not a copy of its text (itrace record --kcore or perf record --kcore make one)"
#define WHY_NOT_CORE \
	"not an ELF core file of the kernel text (perf script reads the kernel code from kcore, not vmlinux)"

/*
 * --kernel: the kernel text of the recording's boot in perf record
 * --kcore's layout, what perf script needs to decode kernel code: the
 * kcore (an ELF core file of the text), kallsyms beside it (perf checks
 * its _text against the kernel map's relocation symbol) and modules
 * beside it, if there is one (else an empty one is written: no modules).
 */
struct kern {
	char		*kcore, *kallsyms, *modules;	/* modules: NULL if none */
	uint64_t	text, etext;	/* _text and _etext of kallsyms */
};

static void kern_free(struct kern *k)
{
	free(k->kcore);
	free(k->kallsyms);
	free(k->modules);
}

/* path's sibling name: the same directory, another file name; NULL no memory */
static char *sibling(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	char *s;

	if (asprintf(&s, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, name) < 0)
		return NULL;
	return s;
}

/*
 * The kernel text of --kernel arg: a kcore file (kcore_dir/kcore of perf
 * record --kcore or of itrace record --kcore), or a directory holding
 * kcore_dir/kcore (those commands' output).  0, or 1 with a message.
 */
static int kern_find(const char *arg, struct kern *k)
{
	uint8_t eh[EI_NIDENT + 2];	/* e_ident, e_type */
	struct statfs sf;
	struct stat sb;
	char line[512], name[256], t;
	unsigned long long a;
	const char *why = NULL;
	FILE *f;

	memset(k, 0, sizeof(*k));
	if (!stat(arg, &sb) && S_ISDIR(sb.st_mode)) {
		if (asprintf(&k->kcore, "%s/kcore_dir/kcore", arg) < 0)
			k->kcore = NULL;
	} else {
		k->kcore = strdup(arg);
	}
	if (!k->kcore)
		goto nomem;
	f = fopen(k->kcore, "rb");
	if (!f) {
		fprintf(stderr, "itrace: --kernel %s: %s\n", k->kcore, strerror(errno));
		goto fail;
	}
	if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode))
		why = "not a regular file";
	else if (!fstatfs(fileno(f), &sf) && sf.f_type == PROC_SUPER_MAGIC)
		why = WHY_PROC;
	else if (fread(eh, sizeof(eh), 1, f) != 1 || memcmp(eh, ELFMAG, SELFMAG) ||
		 eh[EI_CLASS] != ELFCLASS64 || eh[EI_DATA] != ELFDATA2LSB ||
		 (eh[EI_NIDENT] | eh[EI_NIDENT + 1] << 8) != ET_CORE)
		why = WHY_NOT_CORE;
	fclose(f);
	if (why) {
		fprintf(stderr, "itrace: --kernel %s: %s\n", k->kcore, why);
		goto fail;
	}
	k->kallsyms = sibling(k->kcore, "kallsyms");
	k->modules = sibling(k->kcore, "modules");
	if (!k->kallsyms || !k->modules)
		goto nomem;
	f = fopen(k->kallsyms, "r");
	if (!f) {
		fprintf(stderr,
			"itrace: --kernel: %s: %s (perf needs the kallsyms of the kcore's boot beside it)\n",
			k->kallsyms, strerror(errno));
		goto fail;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3) {
			if (!strcmp(name, "_text"))
				k->text = a;
			else if (!strcmp(name, "_etext"))
				k->etext = a;
		}
	fclose(f);
	if (!k->text || k->etext <= k->text) {
		fprintf(stderr,
			"itrace: --kernel: %s: no _text and _etext addresses (a copy of /proc/kallsyms read by root?)\n",
			k->kallsyms);
		goto fail;
	}
	if (access(k->modules, F_OK)) {
		free(k->modules);
		k->modules = NULL;
	}
	return 0;
nomem:
	fprintf(stderr, "itrace: out of memory\n");
fail:
	kern_free(k);
	return 1;
}

/*
 * The kernel map as perf record writes it (perf_event__synthesize_kernel_mmap):
 * PERF_RECORD_MMAP of pid -1 (the host's kernel), "[kernel.kallsyms]" and
 * the relocation symbol's name, from _text to _etext, pgoff the symbol's
 * address; time 0, before everything.
 */
static int put_kernel_mmap(struct conv *c, const struct kern *k)
{
	static const char name[] = "[kernel.kallsyms]_text";
	struct {
		uint32_t	pid, tid;
		uint64_t	start, len, pgoff;
		char		name[sizeof(name)];
	} body;
	struct pev_id id = { .pid = UINT32_MAX, .id = EVENT_ID };

	memset(&body, 0, sizeof(body));
	body.pid = UINT32_MAX;
	body.start = k->text;
	body.len = k->etext - k->text;
	body.pgoff = k->text;
	memcpy(body.name, name, sizeof(name));
	return pev_put_id(&c->head, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &body,
			  sizeof(body), c->out_type, &id);
}

/* Copy the file from to a new file to (mode 0600): 0, or -1 with a message. */
static int copy_file(const char *from, const char *to)
{
	static char buf[1 << 16];
	int in, out = -1, ret = -1;
	ssize_t n = 0;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		fprintf(stderr, "itrace: %s: %s\n", from, strerror(errno));
		return -1;
	}
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		goto werr;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		errno = 0;
		if (write(out, buf, n) != n) {
			if (errno == 0)
				errno = ENOSPC;	/* a short write */
			goto werr;
		}
	}
	if (n < 0) {
		fprintf(stderr, "itrace: %s: %s\n", from, strerror(errno));
		goto out;
	}
	if (close(out)) {
		out = -1;
		goto werr;
	}
	out = -1;
	ret = 0;
	goto out;
werr:
	fprintf(stderr, "itrace: %s: write error: %s\n", to, strerror(errno));
out:
	if (out >= 0)
		close(out);
	close(in);
	return ret;
}

/* The names of perf record --kcore's directory, in the order they are removed */
static const char *const kdir_names[] = {
	"data", "kcore_dir/kcore", "kcore_dir/kallsyms", "kcore_dir/modules", "kcore_dir",
};

#define NR_KDIR		ARRAY_SIZE(kdir_names)

/*
 * Whether the directory dir holds nothing but what kdir_names says (an
 * earlier convert --kernel's output or perf record --kcore's, which is
 * replaced): 1 yes, 0 no.
 */
static int kdir_only(const char *dir)
{
	char *sub = NULL;
	struct dirent *e;
	int ret = 1, sub_ok = 1;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return 0;
	while (ret && (e = readdir(dp))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "data"))
			continue;
		if (strcmp(e->d_name, "kcore_dir") || asprintf(&sub, "%s/kcore_dir", dir) < 0) {
			ret = 0;
			break;
		}
	}
	closedir(dp);
	if (!ret || !sub)
		return ret;
	dp = opendir(sub);
	free(sub);
	if (!dp)
		return 0;
	while (sub_ok && (e = readdir(dp)))
		sub_ok = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			 !strcmp(e->d_name, "kcore") || !strcmp(e->d_name, "kallsyms") ||
			 !strcmp(e->d_name, "modules");
	closedir(dp);
	return sub_ok;
}

/*
 * The perf.data into out: written to a temporary file beside it, renamed
 * to it at the end; with k, a temporary directory beside it (perf record
 * --kcore's layout: data, and the kernel text in kcore_dir/), renamed to
 * out, or exchanged with an out of that layout, whose files are then
 * removed.  On an error or a signal the temporary output is removed, out
 * left as it was.  0, or 1 with a message.
 */
static int write_output(struct conv *c, const char *out_arg, const struct kern *k)
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char *paths[NR_KDIR + 2] = { NULL }, *tmp = NULL;
	struct sigaction sa, old[3];
	sigset_t block, prev;
	bool replace = false, made;
	struct stat sb;
	size_t j;
	FILE *f;
	int fd = -1, ret = 1, i;
	size_t len = strlen(out_arg);
	char *out;

	/* a directory named with a trailing slash: its temporary one beside it */
	while (k && len > 1 && out_arg[len - 1] == '/')
		len--;
	out = strndup(out_arg, len);
	if (!out) {
		fprintf(stderr, "itrace: out of memory\n");
		return 1;
	}
	if (k && !lstat(out, &sb)) {
		if (!S_ISDIR(sb.st_mode)) {
			fprintf(stderr,
				"itrace: %s exists and is not a directory: --kernel writes a perf.data directory (OUT/data, OUT/kcore_dir/); not replaced\n",
				out);
			goto done;
		}
		if (!kdir_only(out)) {
			fprintf(stderr,
				"itrace: %s: a directory with other files than a perf.data directory's (data, kcore_dir/{kcore,kallsyms,modules}); not replaced\n",
				out);
			goto done;
		}
		replace = true;
	}
	if (asprintf(&tmp, "%s.XXXXXX", out) < 0) {
		fprintf(stderr, "itrace: out of memory\n");
		goto done;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&block);
	for (i = 0; i < 3; i++) {
		sigaction(sigs[i], &sa, &old[i]);
		sigaddset(&block, sigs[i]);
	}
	/* the temporary output and the list of its paths, with no signal between */
	sigprocmask(SIG_BLOCK, &block, &prev);
	if (k)
		made = mkdtemp(tmp);
	else
		made = (fd = mkstemp(tmp)) >= 0;
	if (!made) {
		sigprocmask(SIG_SETMASK, &prev, NULL);
		fprintf(stderr, "itrace: %s: cannot create a %s there: %s\n", out,
			k ? "directory" : "file", strerror(errno));
		goto restore;
	}
	for (j = 0; k && j < NR_KDIR; j++)
		if (asprintf(&paths[j], "%s/%s", tmp, kdir_names[j]) < 0)
			paths[j] = NULL;
	paths[k ? NR_KDIR : 0] = strdup(tmp);
	for (j = 0; j < (k ? NR_KDIR + 1 : 1) && paths[j]; j++)
		;
	if (j < (k ? NR_KDIR + 1 : 1)) {
		if (k)
			rmdir(tmp);
		else
			unlink(tmp);
		sigprocmask(SIG_SETMASK, &prev, NULL);
		fprintf(stderr, "itrace: out of memory\n");
		goto restore;
	}
	__atomic_store_n(&tmp_paths, paths, __ATOMIC_SEQ_CST);
	sigprocmask(SIG_SETMASK, &prev, NULL);

	if (k) {
		/* paths: data, kcore_dir/{kcore,kallsyms,modules}, kcore_dir, tmp */
		if (mkdir(paths[4], 0700)) {
			fprintf(stderr, "itrace: %s: %s\n", paths[4], strerror(errno));
			goto remove;
		}
		if (copy_file(k->kcore, paths[1]) || copy_file(k->kallsyms, paths[2]))
			goto remove;
		if (k->modules) {
			if (copy_file(k->modules, paths[3]))
				goto remove;
		} else {
			fd = open(paths[3], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd < 0 || close(fd)) {
				fprintf(stderr, "itrace: %s: %s\n", paths[3], strerror(errno));
				goto remove;
			}
		}
		fd = open(paths[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "itrace: %s: %s\n", paths[0], strerror(errno));
			goto remove;
		}
	}
	f = fdopen(fd, "wb");
	if (!f) {
		fprintf(stderr, "itrace: %s: %s\n", paths[0], strerror(errno));
		close(fd);
		goto remove;
	}
	if (write_perf_data(c, f)) {
		fprintf(stderr, "itrace: %s: write error: %s\n", paths[0], strerror(errno));
		fclose(f);
		goto remove;
	}
	if (fclose(f)) {
		fprintf(stderr, "itrace: %s: write error: %s\n", paths[0], strerror(errno));
		goto remove;
	}
	if (replace) {
		/* the old directory goes to the temporary name, to be removed */
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE)) {
			fprintf(stderr, "itrace: %s: %s\n", out, strerror(errno));
			goto remove;
		}
		__atomic_store_n(&tmp_paths, NULL, __ATOMIC_SEQ_CST);
		remove_paths(paths);
		if (!access(tmp, F_OK))
			fprintf(stderr, "itrace: warning: the replaced %s left at %s\n", out, tmp);
		ret = 0;
		goto restore;
	}
	if (rename(tmp, out)) {
		fprintf(stderr, "itrace: %s: %s\n", out, strerror(errno));
		goto remove;
	}
	__atomic_store_n(&tmp_paths, NULL, __ATOMIC_SEQ_CST);
	ret = 0;
	goto restore;
remove:
	__atomic_store_n(&tmp_paths, NULL, __ATOMIC_SEQ_CST);
	remove_paths(paths);
restore:
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	for (j = 0; j < NR_KDIR + 1; j++)
		free(paths[j]);
	free(tmp);
done:
	free(out);
	return ret;
}

/* The usage of itrace convert on f. */
static void usage_convert(FILE *f)
{
	fprintf(f,
		"usage: itrace convert -o OUT.data [--kernel KCORE] [--buildid-dir DIR | -N]\n"
		"                      [FILE | -]\n"
		"  writes the recording FILE (default itrace.data; - reads standard input)\n"
		"  as a perf.data that perf script and perf report decode with perf's\n"
		"  Intel PT decoder (perf script -i OUT.data --itrace=i1i)\n"
		"  -o, --output OUT.data  the perf.data to write (replaced if it exists)\n"
		"  --kernel KCORE          the kernel text of a record -k recording's boot:\n"
		"                          perf record --kcore's or itrace record --kcore's\n"
		"                          kcore_dir/kcore (kallsyms beside it), or their\n"
		"                          directory; OUT.data is then a directory as perf\n"
		"                          record --kcore writes it: OUT.data/data and\n"
		"                          OUT.data/kcore_dir/{kcore,kallsyms,modules}\n"
		"  --buildid-dir DIR       perf's build-id cache, where the recording's [vdso]\n"
		"                          is put for perf (default $PERF_BUILDID_DIR, ~/.debug)\n"
		"  -N, --no-buildid-cache  do not put the [vdso] there\n"
		"exit status: 0 written, 1 unusable input or the output could not be\n"
		"written (nothing is left behind), 2 usage\n");
}

/* Whether the recording can be written as a perf.data: 0, or 1 with a message. */
static int check_input(const struct itrace_data *d, const char *name)
{
	const char *why = NULL;

	if (d->is_perf_data)
		why = "already a perf.data";
	else if (d->hdr.flags & ITRACE_FLAG_SAMPLES)
		why = "a recording of samples (record -e): not supported";
	else if (d->hdr.flags & ITRACE_FLAG_BTS)
		why = "an Intel BTS recording: convert writes intel_pt's only";
	else if (d->truncated)
		why = d->truncated_why;
	else if (!d->nr_segs)
		why = "the recording holds no trace";
	else if (!d->attr && !d->hdr.pmu_type)
		why = "the recording does not say intel_pt's PMU type (no ATTR, header pmu_type 0)";
	if (!why)
		return 0;
	fprintf(stderr, "itrace: %s: %s; not converted\n", name, why);
	return 1;
}

/*
 * itrace convert -o OUT.data [--kernel KCORE] [--buildid-dir DIR | -N] [FILE | -]: 0
 * written, 1 unusable input or output not written (nothing left behind),
 * EXIT_USAGE.  The [vdso] goes into perf's build-id cache after the
 * perf.data is complete; failing that is a warning.
 */
/* Do the paths name one file (a perf record --kcore directory: its data)? */
static bool is_same_path(const char *a, const char *b)
{
	struct stat sa, sb;
	char *data;

	if (!strcmp(a, "-") || stat(a, &sa) || stat(b, &sb))
		return false;
	if (S_ISDIR(sa.st_mode)) {
		if (asprintf(&data, "%s/data", a) < 0)
			return false;
		if (stat(data, &sa))
			sa.st_ino = 0;
		free(data);
	}
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output",	required_argument, NULL, 'o' },
		{ "buildid-dir", required_argument, NULL, 'B' },
		{ "no-buildid-cache", no_argument, NULL, 'N' },
		{ "kernel",	required_argument, NULL, 'K' },
		{ "help",	no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL, *name, *bid_dir = NULL, *kernel = NULL;
	bool no_cache = false;
	struct conv c;
	struct itrace_data d;
	struct kern k;
	char err[512];
	int c_, ret = 1;

	optind = 1;
	while ((c_ = getopt_long(argc, argv, "hNo:", opts, NULL)) != -1) {
		switch (c_) {
		case 'o':
			out = optarg;
			break;
		case 'B':
			bid_dir = optarg;
			break;
		case 'N':
			no_cache = true;
			break;
		case 'K':
			kernel = optarg;
			break;
		case 'h':
			usage_convert(stdout);
			return 0;
		default:
			usage_convert(stderr);
			return EXIT_USAGE;
		}
	}
	if (!out || !*out || argc - optind > 1 || (bid_dir && !*bid_dir) ||
	    (kernel && !*kernel)) {
		fprintf(stderr, "itrace convert: %s\n",
			!out || !*out ? "-o OUT.data is required" :
			argc - optind > 1 ? "one recording at a time" :
			kernel && !*kernel ? "--kernel: an empty file name" :
			"--buildid-dir: an empty directory name");
		usage_convert(stderr);
		return EXIT_USAGE;
	}
	if (kernel && kern_find(kernel, &k))
		return 1;
	name = optind < argc ? argv[optind] : "itrace.data";
	if (is_same_path(name, out)) {
		fprintf(stderr,
			"itrace convert: -o %s is the recording itself: it would be replaced; write the perf.data elsewhere\n",
			out);
		return EXIT_USAGE;
	}
	if (itrace_read_any(name, &d, NULL, err, sizeof(err))) {
		fprintf(stderr, "itrace: %s\n", err);
		if (kernel)
			kern_free(&k);
		return 1;
	}
	if (!strcmp(name, "-"))
		name = "<stdin>";
	memset(&c, 0, sizeof(c));
	c.d = &d;
	if (check_input(&d, name))
		goto out;
	conv_attr(&c);
	if (d.attr && !c.attr.a.exclude_kernel && !kernel)
		fprintf(stderr,
			"itrace: warning: %s traces the kernel (record -k): without --kernel, perf script cannot decode the kernel code\n",
			name);
	else if (d.attr && c.attr.a.exclude_kernel && kernel)
		fprintf(stderr,
			"itrace: warning: %s has no kernel trace (recorded without -k): --kernel adds nothing perf decodes\n",
			name);
	if (put_auxtrace_info(&c) || put_time_conv(&c) ||
	    (kernel && put_kernel_mmap(&c, &k)) || put_vdso_build_id(&c)) {
		fprintf(stderr, "itrace: out of memory\n");
		goto out;
	}
	if (conv_sideband(&c, err, sizeof(err))) {
		fprintf(stderr, "itrace: %s: sideband: %s; not converted\n", name, err);
		goto out;
	}
	conv_ref_tsc(&c);

	if (write_output(&c, out, kernel ? &k : NULL))
		goto out;
	ret = 0;
	if (!no_cache && c.vdso_id_len)
		add_vdso_to_cache(&c, bid_dir);
	if (c.nr_itrace_lost)
		fprintf(stderr,
			"itrace: warning: %zu PERF_RECORD_ITRACE_LOST records not written (perf does not know them): the trace has gaps there\n",
			c.nr_itrace_lost);
	if (c.nr_dropped)
		fprintf(stderr,
			"itrace: warning: %zu records of types perf does not know not written\n",
			c.nr_dropped);
out:
	if (kernel)
		kern_free(&k);
	free(c.head.buf);
	free(c.bid.buf);
	itrace_data_free(&d);
	return ret;
}
