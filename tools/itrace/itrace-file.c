// SPDX-License-Identifier: GPL-2.0
/* itrace.data reader and writer; the format is described in itrace-file.h. */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/perf_event.h>

#include "itrace-file.h"
#include "itrace.h"

static const uint8_t zero_pad[8];

void itrace_oom(void)
{
	fprintf(stderr, "itrace: out of memory\n");
	exit(1);
}

void *itrace_try_grow(void *p, size_t *cap, size_t nr, size_t size, size_t first)
{
	size_t n, bytes;

	if (nr < *cap)
		return p;
	if (!*cap)
		n = first;
	else if (__builtin_mul_overflow(*cap, 2, &n))
		return NULL;
	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	p = realloc(p, bytes);
	if (p)
		*cap = n;
	return p;
}

void *itrace_grow(void *p, size_t *cap, size_t nr, size_t size, size_t first)
{
	p = itrace_try_grow(p, cap, nr, size, first);
	if (!p)
		itrace_oom();
	return p;
}

void itrace_header_init(struct itrace_file_header *hdr)
{
	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->magic, ITRACE_FILE_MAGIC, sizeof(hdr->magic));
	hdr->version = ITRACE_FILE_VERSION;
	hdr->header_size = sizeof(*hdr);
}

int itrace_write_header(FILE *f, const struct itrace_file_header *hdr)
{
	return fwrite(hdr, sizeof(*hdr), 1, f) == 1 ? 0 : -1;
}

int itrace_write_buf_section2(FILE *f, uint32_t type, uint32_t buf, uint64_t offset,
			      const void *a, size_t asz, const void *b, size_t bsz)
{
	struct itrace_section sec = {
		.type = type,
		.buf = buf,
		.size = asz + bsz,
		.offset = offset,
	};
	size_t pad = (8 - (sec.size & 7)) & 7;

	if (fwrite(&sec, sizeof(sec), 1, f) != 1)
		return -1;
	if (asz && fwrite(a, asz, 1, f) != 1)
		return -1;
	if (bsz && fwrite(b, bsz, 1, f) != 1)
		return -1;
	if (pad && fwrite(zero_pad, pad, 1, f) != 1)
		return -1;
	return 0;
}

int itrace_write_section2(FILE *f, uint32_t type, uint64_t offset,
			  const void *a, size_t asz, const void *b, size_t bsz)
{
	return itrace_write_buf_section2(f, type, 0, offset, a, asz, b, bsz);
}

int itrace_write_section(FILE *f, uint32_t type, uint64_t offset,
			 const void *data, size_t size)
{
	return itrace_write_section2(f, type, offset, data, size, NULL, 0);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Append [p, p + n) to a growing buffer. */
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

static int add_trace(struct itrace_data *d, const struct itrace_section *sec,
		     const uint8_t *p, uint32_t snapshot)
{
	struct itrace_segment *last = d->nr_segs ? &d->segs[d->nr_segs - 1] : NULL;

	if (!sec->size)
		return 0;
	if (!last || last->stream_offset + last->size != sec->offset ||
	    last->buf_idx != sec->buf || last->snapshot != snapshot) {
		struct itrace_segment *ns;

		ns = realloc(d->segs, (d->nr_segs + 1) * sizeof(*ns));
		if (!ns)
			return -1;
		d->segs = ns;
		last = &d->segs[d->nr_segs++];
		memset(last, 0, sizeof(*last));
		last->stream_offset = sec->offset;
		last->buf_offset = d->trace_size;
		last->buf_idx = sec->buf;
		last->snapshot = snapshot;
	}
	if (append(&d->trace, &d->trace_size, p, sec->size))
		return -1;
	last->size += sec->size;
	return 0;
}

/* Bytes of whole perf records at the start of buf. */
static size_t whole_records(const uint8_t *buf, size_t size)
{
	size_t pos = 0;
	uint16_t rs;

	while (size - pos >= 8) {
		memcpy(&rs, buf + pos + 6, sizeof(rs));
		if (rs < 8 || rs > size - pos)
			break;
		pos += rs;
	}
	return pos;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct itrace_segment *x = a, *y = b;

	if (x->buf_idx != y->buf_idx)
		return x->buf_idx < y->buf_idx ? -1 : 1;
	/* a buffer's chunks were written in stream order: keep it */
	return x->buf_offset < y->buf_offset ? -1 : x->buf_offset > y->buf_offset;
}

/*
 * The chunks of several buffers interleave in the file; the decoder wants
 * each buffer's trace in one piece of memory, in stream order, so that a
 * run of contiguous chunks is one libipt buffer.  Sort the segments by
 * buffer (stable within one) and lay the trace out again in that order,
 * joining segments that continue each other (same snapshot).
 */
int itrace_regroup(struct itrace_data *d)
{
	struct itrace_segment *segs;
	uint8_t *trace;
	size_t i, n = 0, pos = 0;

	if (d->nr_segs < 2)
		return 0;
	for (i = 1; i < d->nr_segs; i++)
		if (d->segs[i].buf_idx < d->segs[i - 1].buf_idx ||
		    (d->segs[i].buf_idx == d->segs[i - 1].buf_idx &&
		     d->segs[i].buf_offset < d->segs[i - 1].buf_offset))
			break;
	segs = malloc(d->nr_segs * sizeof(*segs));
	trace = malloc(d->trace_size + 1);
	if (!segs || !trace) {
		free(segs);
		free(trace);
		return -1;
	}
	memcpy(segs, d->segs, d->nr_segs * sizeof(*segs));
	if (i < d->nr_segs)
		qsort(segs, d->nr_segs, sizeof(*segs), cmp_seg);
	for (i = 0; i < d->nr_segs; i++) {
		struct itrace_segment *s = &segs[i], *last = n ? &segs[n - 1] : NULL;

		memcpy(trace + pos, d->trace + s->buf_offset, s->size);
		if (last && last->buf_idx == s->buf_idx && last->snapshot == s->snapshot &&
		    last->stream_offset + last->size == s->stream_offset) {
			last->size += s->size;
		} else {
			segs[n] = *s;
			segs[n].buf_offset = pos;
			n++;
		}
		pos += s->size;
	}
	free(d->segs);
	free(d->trace);
	d->segs = segs;
	d->nr_segs = n;
	d->trace = trace;
	return 0;
}

bool itrace_attr(const struct itrace_data *d, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	if (!d->attr || d->attr_size < offsetof(struct perf_event_attr, read_format))
		return false;
	memcpy(a, d->attr, d->attr_size < sizeof(*a) ? d->attr_size : sizeof(*a));
	return true;
}

uint64_t itrace_sample_type(const struct itrace_data *d)
{
	struct perf_event_attr a;

	return itrace_attr(d, &a) && a.sample_id_all ? a.sample_type : 0;
}

int itrace_parse(const uint8_t *buf, size_t size, struct itrace_data *d,
		 char *err, size_t errlen)
{
	const struct itrace_file_header *hdr = (const void *)buf;
	uint32_t snapshot = 0;
	size_t pos;
	int seen_end = 0;

	memset(d, 0, sizeof(*d));
	if (size >= 4 && !memcmp(buf, ELFMAG, SELFMAG))
		return fail(err, errlen,
			    "an ELF file, not an itrace recording or perf.data (a core dump: itrace core)");
	if (size < 8 || memcmp(buf, ITRACE_FILE_MAGIC, 8))
		return fail(err, errlen, "not an itrace data file (bad magic)");
	if (size < sizeof(*hdr))
		return fail(err, errlen, "truncated header (%zu bytes)", size);
	if (hdr->version < ITRACE_FILE_VERSION_MIN || hdr->version > ITRACE_FILE_VERSION)
		return fail(err, errlen, "unsupported file version %u (this itrace reads %u to %u)",
			    hdr->version, ITRACE_FILE_VERSION_MIN, ITRACE_FILE_VERSION);
	if (hdr->header_size < sizeof(*hdr) || hdr->header_size > size ||
	    (hdr->header_size & 7))
		return fail(err, errlen, "bad header size %u", hdr->header_size);
	if (!hdr->page_size || (hdr->page_size & (hdr->page_size - 1)))
		return fail(err, errlen, "bad page size %u", hdr->page_size);
	d->hdr = *hdr;

	pos = hdr->header_size;
	while (pos < size) {
		struct itrace_section sec;
		const uint8_t *p;
		size_t padded;

		if (size - pos < sizeof(sec)) {
			d->truncated = 1;
			snprintf(d->truncated_why, sizeof(d->truncated_why),
				 "file truncated in a section header at file offset 0x%zx", pos);
			break;
		}
		memcpy(&sec, buf + pos, sizeof(sec));
		if (sec.size > ITRACE_SEC_MAX) {
			fail(err, errlen, "section type %u at file offset 0x%zx: size %llu is %s",
			     sec.type, pos, (unsigned long long)sec.size, "not plausible");
			goto err;
		}
		if (sec.size > size - pos - sizeof(sec)) {
			/* cut short: keep what is there (trace, sideband) */
			d->truncated = 1;
			snprintf(d->truncated_why, sizeof(d->truncated_why),
				 "file truncated: section type %u at file offset 0x%zx has %zu of its %llu bytes",
				 sec.type, pos, size - pos - sizeof(sec),
				 (unsigned long long)sec.size);
			sec.size = size - pos - sizeof(sec);
			if (sec.type != ITRACE_SEC_TRACE && sec.type != ITRACE_SEC_PERF)
				break;
		}
		p = buf + pos + sizeof(sec);
		padded = (sec.size + 7) & ~(size_t)7;
		if (padded > size - pos - sizeof(sec))
			padded = sec.size;	/* tolerate missing final padding */

		switch (sec.type) {
		case ITRACE_SEC_END:
			seen_end = 1;
			break;
		case ITRACE_SEC_TRACE:
			if (hdr->version < 2)
				sec.buf = 0;	/* "flags", 0 */
			if (add_trace(d, &sec, p, snapshot))
				goto nomem;
			break;
		case ITRACE_SEC_ATTR:
			free(d->attr);
			d->attr = NULL;
			d->attr_size = 0;
			if (append(&d->attr, &d->attr_size, p, sec.size))
				goto nomem;
			break;
		case ITRACE_SEC_TIME:
			if (sec.size >= sizeof(d->time)) {
				memcpy(&d->time, p, sizeof(d->time));
				d->has_time = 1;
			}
			break;
		case ITRACE_SEC_SNAPSHOT: {
			struct itrace_snapshot *ns;

			if (sec.size < sizeof(*ns))
				break;
			ns = realloc(d->snaps, (d->nr_snaps + 1) * sizeof(*ns));
			if (!ns)
				goto nomem;
			d->snaps = ns;
			memcpy(&d->snaps[d->nr_snaps++], p, sizeof(*ns));
			snapshot = d->nr_snaps;
			break;
		}
		case ITRACE_SEC_PERF:
			if (append(&d->perf, &d->perf_size, p, sec.size))
				goto nomem;
			break;
		case ITRACE_SEC_VDSO:
			free(d->vdso);
			d->vdso = NULL;
			d->vdso_size = 0;
			if (append(&d->vdso, &d->vdso_size, p, sec.size))
				goto nomem;
			break;
		case ITRACE_SEC_EVENT:
			free(d->event);
			d->event = strndup((const char *)p, sec.size);
			if (!d->event)
				goto nomem;
			break;
		case ITRACE_SEC_CMDLINE:
			free(d->cmdline);
			d->cmdline = NULL;
			d->cmdline_size = 0;
			if (append((uint8_t **)&d->cmdline, &d->cmdline_size, p, sec.size))
				goto nomem;
			d->cmdline[d->cmdline_size] = 0;
			break;
		default:
			break;	/* unknown types: skipped */
		}
		pos += sizeof(sec) + padded;
		if (seen_end)
			break;
	}
	if (!seen_end && !d->truncated) {
		d->truncated = 1;
		snprintf(d->truncated_why, sizeof(d->truncated_why),
			 "file truncated: no end section (recording interrupted?)");
	}
	/* the sideband may end in the middle of a record: keep whole ones */
	if (d->truncated)
		d->perf_size = whole_records(d->perf, d->perf_size);
	if (itrace_regroup(d))
		goto nomem;
	return 0;
nomem:
	fail(err, errlen, "out of memory");
err:
	itrace_data_free(d);
	return -1;
}

/* Read all of f (a pipe too) into a malloc'd buffer. */
static int slurp(FILE *f, uint8_t **buf, size_t *size)
{
	size_t cap = 1 << 16, len = 0, n;
	uint8_t *b = malloc(cap), *nb;

	if (!b)
		return -1;
	while ((n = fread(b + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return -1;
			}
			b = nb;
		}
	}
	if (ferror(f)) {
		free(b);
		return -1;
	}
	*buf = b;
	*size = len;
	return 0;
}

int itrace_read_all(const char *path, uint8_t **bufp, size_t *sizep, char *err, size_t errlen)
{
	FILE *f;
	struct stat st;

	if (!strcmp(path, "-")) {
		if (slurp(stdin, bufp, sizep))
			return fail(err, errlen, "standard input: %s", strerror(errno));
		return 0;
	}
	f = fopen(path, "rb");
	if (!f)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return fail(err, errlen, "%s: not a regular file", path);
	}
	*bufp = malloc(st.st_size ? st.st_size : 1);
	if (!*bufp) {
		fclose(f);
		return fail(err, errlen, "%s: out of memory", path);
	}
	if (st.st_size && fread(*bufp, st.st_size, 1, f) != 1) {
		fclose(f);
		free(*bufp);
		return fail(err, errlen, "%s: read error", path);
	}
	fclose(f);
	*sizep = st.st_size;
	return 0;
}

int itrace_read_file(const char *path, struct itrace_data *d,
		     char *err, size_t errlen)
{
	uint8_t *buf;
	size_t size;
	int ret;

	if (itrace_read_all(path, &buf, &size, err, errlen))
		return -1;
	ret = itrace_parse(buf, size, d, err, errlen);
	if (ret) {
		char tmp[256];

		snprintf(tmp, sizeof(tmp), "%s: %s", strcmp(path, "-") ? path : "<stdin>", err);
		snprintf(err, errlen, "%s", tmp);
	}
	free(buf);
	return ret;
}

void itrace_data_free(struct itrace_data *d)
{
	free(d->trace);
	free(d->segs);
	free(d->perf);
	free(d->vdso);
	free(d->cmdline);
	free(d->event);
	free(d->attr);
	free(d->snaps);
	memset(d, 0, sizeof(*d));
}
