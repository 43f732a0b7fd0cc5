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

	if (!n)
		return 0;
	/*
	 * perf record pads each AUXTRACE record's data to 8 bytes
	 * (PERF_AUXTRACE_RECORD_ALIGNMENT) with zeros it counts in the size,
	 * while the next record's offset follows the unpadded data: drop the
	 * padding where the next chunk of the buffer overlaps it.
	 */
	if (last && last->buf_idx == idx && offset > last->stream_offset &&
	    last->stream_offset + last->size > offset &&
	    last->stream_offset + last->size - offset < 8) {
		d->trace_size -= last->stream_offset + last->size - offset;
		last->size = offset - last->stream_offset;
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

int perf_data_parse(const uint8_t *buf, size_t size, struct itrace_data *d,
		    const char *buildid_dir, char *err, size_t errlen)
{
	struct perf_file_header fh;
	struct pev_iter it;
	struct pev ev;
	uint64_t end, fpos, cut = 0;
	unsigned int bit;
	int r, have_info = 0;

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
		uint32_t type;

		memcpy(&type, a, 4);
		memcpy(&d->hdr.config, a + 8, 8);
		d->hdr.pmu_type = type;
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
			have_info = 1;
			break;
		}
		case PERF_RECORD_AUXTRACE:
			if (pev_short(&ev))
				break;
			if (add_chunk(d, ev.auxtrace.idx, ev.auxtrace.offset, ev.raw + ev.size,
				      ev.auxtrace.size))
				goto nomem;
			break;
		case PERF_RECORD_COMPRESSED:
			snprintf(err, errlen,
				 "perf.data: compressed records (perf record -z): not supported; perf inject -i IN -o OUT writes them uncompressed");
			goto err;
		default:
			/* kernel records are the sideband; perf's own are not */
			if (ev.type < PERF_RECORD_HEADER_ATTR &&
			    append(&d->perf, &d->perf_size, ev.raw, ev.size))
				goto nomem;
			break;
		}
	}
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
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
err:
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
