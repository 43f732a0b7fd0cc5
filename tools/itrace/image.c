// SPDX-License-Identifier: GPL-2.0
/*
 * The traced memory image and the libipt decoders, shared by decode and
 * core: files are added through one image section cache, so that libipt
 * maps each file section once, not at every switch between the program
 * and its libraries; images held in memory ([vdso]) are memfds.
 */
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itrace.h"
#include "itrace-file.h"
#include "sym.h"

void itrace_pt_config(struct pt_config *cfg, const uint8_t *trace, size_t size,
		      uint32_t vendor, uint32_t family, uint32_t model, uint32_t stepping)
{
	pt_config_init(cfg);
	cfg->begin = (uint8_t *)trace;
	cfg->end = cfg->begin + size;
	if (vendor == ITRACE_CPU_INTEL) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = family;
		cfg->cpu.model = model;
		cfg->cpu.stepping = stepping;
		if (pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0)
			memset(&cfg->errata, 0, sizeof(cfg->errata));
	}
}

bool itrace_stalled(struct itrace_stall *st, uint64_t off)
{
	if (off != st->offset) {
		st->offset = off;
		st->same = 0;
	} else {
		st->same += st->insns;
	}
	st->insns = 0;
	return st->same >= ITRACE_STALL_INSNS;
}

#define STR_(x)	#x
#define STR(x)	STR_(x)

const char *itrace_errstr(int err)
{
	if (err == ITRACE_ERR_STALL)
		return "no trace read for " STR(ITRACE_STALL_INSNS)
		       " instructions: not the code that ran";
	return pt_errstr(pt_errcode(err));
}

int itrace_pt_walk(const struct pt_config *cfg, struct pt_image *image,
		   const struct pt_walk_ops *ops, void *ctx)
{
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(cfg);
	struct itrace_stall st = { 0 };
	uint64_t last_ip = 0, off;
	struct pt_event ev;
	struct pt_insn in;
	int status;

	if (!dec)
		return -pte_nomem;
	pt_insn_set_image(dec, image);
	status = pt_insn_sync_forward(dec);
	if (status == -pte_eos) {
		pt_insn_free_decoder(dec);
		return 1;
	}
	while (status != -pte_eos) {
		if (status < 0) {
			ops->error(ctx, dec, status, last_ip);
			status = pt_insn_sync_forward(dec);
			continue;
		}
		while (status & pts_event_pending) {
			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			ops->event(ctx, dec, &ev);
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		memset(&in, 0, sizeof(in));
		status = pt_insn_next(dec, &in, sizeof(in));
		if (status < 0) {
			if (status == -pte_eos)
				break;
			/* in.ip is set when the instruction itself failed */
			if (in.ip)
				last_ip = in.ip;
			continue;
		}
		last_ip = in.ip;
		ops->insn(ctx, dec, &in);
		if (itrace_stall_due(&st, 1) && !pt_insn_get_offset(dec, &off) &&
		    itrace_stalled(&st, off))
			status = ITRACE_ERR_STALL;
	}
	pt_insn_free_decoder(dec);
	return 0;
}

const char *itrace_base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/*
 * An image held in memory ([vdso] bytes from the recording or the core) as
 * a file libipt and libdwfl can open by name: a memfd, named by its
 * /proc/self/fd path.  Nothing is created on disk, so nothing is left
 * behind whatever way the process ends.  Returns the fd (the caller closes
 * it when done with the image) or -errno.
 */
int itrace_mem_image(const char *name, const void *buf, size_t size, char *path, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC), err = 0;
	const uint8_t *p = buf;
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t n = write(fd, p + done, size - done);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		done += n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	if (access(path, R_OK)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * What the ELF file at path says of its mapping at [addr, addr + len) from
 * file offset pgoff: *is32, whether its code is 32-bit (ELFCLASS32: a
 * compat-mode program, the 32-bit vDSO); *entry, the address of the
 * file's entry point (e_entry) if the mapping holds it, else 0.  Programs
 * and the dynamic linker have an entry point, libraries have none
 * (e_entry 0): after an exec, user mode begins there.
 */
static void elf_facts(const char *path, uint64_t addr, uint64_t len, uint64_t pgoff,
		      bool *is32, uint64_t *entry)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t i, n;
	Elf *e;

	*is32 = false;
	*entry = 0;
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh)) {
		*is32 = eh.e_ident[EI_CLASS] == ELFCLASS32;
		for (i = 0; eh.e_entry && !elf_getphdrnum(e, &n) && i < n; i++) {
			uint64_t off;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD ||
			    eh.e_entry - ph.p_vaddr >= ph.p_filesz)
				continue;
			off = ph.p_offset + (eh.e_entry - ph.p_vaddr);
			if (off >= pgoff && off - pgoff < len)
				*entry = addr + (off - pgoff);
			break;
		}
	}
	elf_end(e);
	close(fd);
}

/* elf_facts() of im's newest section, path's [addr, addr + len) from pgoff. */
static void image_elf(struct itrace_image *im, const char *path, uint64_t addr,
		      uint64_t len, uint64_t pgoff)
{
	uint64_t entry, *n;

	elf_facts(path, addr, len, pgoff, &im->is32[im->nr_isids - 1], &entry);
	if (!entry)
		return;
	n = realloc(im->entries, (im->nr_entries + 1) * sizeof(*n));
	if (!n)
		itrace_oom();
	im->entries = n;
	im->entries[im->nr_entries++] = entry;
}

bool itrace_image_is_entry(const struct itrace_image *im, uint64_t ip)
{
	size_t i;

	for (i = 0; i < im->nr_entries; i++)
		if (im->entries[i] == ip)
			return true;
	return false;
}

int itrace_image_add(struct itrace_image *im, struct symtab *st, const char *name,
		     const char *path, uint64_t addr, uint64_t len, uint64_t pgoff)
{
	struct stat sb;
	int err;

	if (stat(path, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	if ((uint64_t)sb.st_size <= pgoff)
		return 1;
	if (len > (uint64_t)sb.st_size - pgoff)
		len = sb.st_size - pgoff;
	err = itrace_image_add_section(im, path, pgoff, len, addr);
	if (err < 0)
		fprintf(stderr, "itrace: warning: %s at 0x%llx: %s\n", path,
			(unsigned long long)addr, pt_errstr(pt_errcode(err)));
	else
		image_elf(im, path, addr, len, pgoff);
	if (st && sym_add_mapping(st, name, path, addr, len, pgoff))
		fprintf(stderr, "itrace: warning: no symbols for %s\n", path);
	return 0;
}

int itrace_image_add_section(struct itrace_image *im, const char *path, uint64_t offset,
			     uint64_t size, uint64_t vaddr)
{
	int isid = pt_iscache_add_file(im->iscache, path, offset, size, vaddr);
	bool *n32;
	int *ni, err;

	if (isid < 0)
		return isid;
	err = pt_image_add_cached(im->image, im->iscache, isid, NULL);
	if (err < 0)
		return err;
	/* for itrace_image_read(): libipt has no public read of an image */
	ni = realloc(im->isids, (im->nr_isids + 1) * sizeof(*ni));
	if (!ni)
		return -pte_nomem;
	im->isids = ni;
	n32 = realloc(im->is32, (im->nr_isids + 1) * sizeof(*n32));
	if (!n32)
		return -pte_nomem;
	im->is32 = n32;
	im->is32[im->nr_isids] = false;
	im->isids[im->nr_isids++] = isid;
	return err;
}

int itrace_image_read_mode(const struct itrace_image *im, uint8_t *buf, size_t size,
			   uint64_t ip, bool *is32)
{
	size_t i;
	int n;

	for (i = im->nr_isids; i-- > 0;) {
		n = pt_iscache_read(im->iscache, buf, size, im->isids[i], ip);
		if (n > 0) {
			*is32 = im->is32[i];
			return n;
		}
	}
	return -pte_nomap;
}

int itrace_image_read(const struct itrace_image *im, uint8_t *buf, size_t size, uint64_t ip)
{
	bool is32;

	return itrace_image_read_mode(im, buf, size, ip, &is32);
}

int itrace_image_init(struct itrace_image *im, const char *name)
{
	memset(im, 0, sizeof(*im));
	im->image = pt_image_alloc(name);
	im->iscache = pt_iscache_alloc(name);
	if (!im->image || !im->iscache ||
	    pt_iscache_set_limit(im->iscache, ITRACE_ISCACHE_LIMIT) < 0) {
		itrace_image_fini(im);
		return -1;
	}
	return 0;
}

void itrace_image_fini(struct itrace_image *im)
{
	/* the image refers to the cache's sections: free it first */
	if (im->image)
		pt_image_free(im->image);
	if (im->iscache)
		pt_iscache_free(im->iscache);
	im->image = NULL;
	im->iscache = NULL;
	free(im->isids);
	im->isids = NULL;
	free(im->is32);
	im->is32 = NULL;
	im->nr_isids = 0;
	free(im->entries);
	im->entries = NULL;
	im->nr_entries = 0;
}

