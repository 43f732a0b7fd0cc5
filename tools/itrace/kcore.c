// SPDX-License-Identifier: GPL-2.0
/*
 * record --kcore: a copy of the running kernel's text, for decoding a
 * user+kernel recording later or elsewhere.  The text that runs is not
 * vmlinux's (alternatives, static keys and jump labels are patched at boot
 * and when keys change: a perf event turns perf_sched_events on), so it is
 * copied from /proc/kcore while the recording's events are open, as perf
 * record --kcore does, into perf's layout, which decode --kernel reads:
 *
 *	DIR/kcore_dir/kcore	ELF core file (ET_CORE), one PT_LOAD per
 *				piece of kernel text, at its address
 *	DIR/kcore_dir/kallsyms	a copy of /proc/kallsyms (its symbols)
 *
 * The text is [_stext, _etext) of /proc/kallsyms.  Needs root (reading
 * /proc/kcore takes CAP_SYS_RAWIO, and kallsyms shows addresses to
 * privileged readers only).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kcore.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* _stext and _etext from kallsyms; copies the file to out */
static int read_kallsyms(const char *out, uint64_t *start, uint64_t *end, char *err,
			 size_t errlen)
{
	FILE *in = fopen("/proc/kallsyms", "r"), *o;
	unsigned long long a;
	char line[512], t, name[256];

	*start = *end = 0;
	if (!in)
		return fail(err, errlen, "/proc/kallsyms: %s", strerror(errno));
	o = fopen(out, "w");
	if (!o) {
		fclose(in);
		return fail(err, errlen, "%s: %s", out, strerror(errno));
	}
	while (fgets(line, sizeof(line), in)) {
		fputs(line, o);
		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
			continue;
		if (!strcmp(name, "_stext"))
			*start = a;
		else if (!strcmp(name, "_etext"))
			*end = a;
	}
	fclose(in);
	if (fclose(o))
		return fail(err, errlen, "%s: %s", out, strerror(errno));
	if (!*start || *end <= *start)
		return fail(err, errlen,
			    "/proc/kallsyms has no _stext/_etext addresses (kptr_restrict? run as root)");
	return 0;
}

struct piece {
	uint64_t	vaddr, off, size;	/* off: in /proc/kcore */
};

int kcore_copy(const char *dir, char *err, size_t errlen)
{
	struct piece p[16];
	size_t i, nr = 0, n;
	uint64_t start, end, pos;
	char path[4096];
	Elf *in = NULL, *out = NULL;
	GElf_Ehdr eh;
	int ifd = -1, ofd = -1, ret = -1;
	uint8_t *buf = NULL;

	elf_version(EV_CURRENT);
	snprintf(path, sizeof(path), "%s", dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/kcore_dir", dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/kcore_dir/kallsyms", dir);
	if (read_kallsyms(path, &start, &end, err, errlen))
		return -1;

	ifd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (ifd < 0)
		return fail(err, errlen, "/proc/kcore: %s%s", strerror(errno),
			    errno == ENOENT ? " (a kernel without CONFIG_PROC_KCORE)" : "");
	in = elf_begin(ifd, ELF_C_READ, NULL);
	if (!in || !gelf_getehdr(in, &eh) || elf_getphdrnum(in, &n)) {
		fail(err, errlen, "/proc/kcore: not an ELF file: %s", elf_errmsg(-1));
		goto out;
	}
	/* the pieces of [start, end) that kcore has */
	for (i = 0; i < n && nr < ARRAY_SIZE(p); i++) {
		GElf_Phdr ph;
		uint64_t lo, hi;

		if (!gelf_getphdr(in, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		lo = ph.p_vaddr > start ? ph.p_vaddr : start;
		hi = ph.p_vaddr + ph.p_memsz < end ? ph.p_vaddr + ph.p_memsz : end;
		if (lo >= hi)
			continue;
		p[nr].vaddr = lo;
		p[nr].off = ph.p_offset + (lo - ph.p_vaddr);
		p[nr++].size = hi - lo;
	}
	if (!nr) {
		fail(err, errlen, "/proc/kcore has no segment with the kernel text 0x%llx-0x%llx",
		     (unsigned long long)start, (unsigned long long)end);
		goto out;
	}

	snprintf(path, sizeof(path), "%s/kcore_dir/kcore", dir);
	ofd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ofd < 0) {
		fail(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	out = elf_begin(ofd, ELF_C_WRITE, NULL);
	if (!out || !gelf_newehdr(out, ELFCLASS64) || !gelf_newphdr(out, nr)) {
		fail(err, errlen, "%s: %s", path, elf_errmsg(-1));
		goto out;
	}
	/* libelf writes the headers; the segments go where we put them */
	elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);
	gelf_getehdr(out, &eh);
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(Elf64_Ehdr);
	eh.e_shoff = 0;
	gelf_update_ehdr(out, &eh);
	pos = (sizeof(Elf64_Ehdr) + nr * sizeof(Elf64_Phdr) + 4095) & ~4095ULL;
	for (i = 0; i < nr; i++) {
		GElf_Phdr ph = {
			.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = pos,
			.p_vaddr = p[i].vaddr, .p_filesz = p[i].size, .p_memsz = p[i].size,
			.p_align = 4096,
		};

		gelf_update_phdr(out, i, &ph);
		pos += (p[i].size + 4095) & ~4095ULL;
	}
	if (elf_update(out, ELF_C_WRITE) < 0) {
		fail(err, errlen, "%s: %s", path, elf_errmsg(-1));
		goto out;
	}
	buf = malloc(1 << 20);
	if (!buf) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	pos = (sizeof(Elf64_Ehdr) + nr * sizeof(Elf64_Phdr) + 4095) & ~4095ULL;
	for (i = 0; i < nr; i++) {
		uint64_t done = 0;

		while (done < p[i].size) {
			size_t len = p[i].size - done < (1 << 20) ? p[i].size - done : (1 << 20);
			ssize_t r = pread(ifd, buf, len, p[i].off + done);

			if (r <= 0 || pwrite(ofd, buf, r, pos + done) != r) {
				fail(err, errlen, "copying the kernel text at 0x%llx: %s",
				     (unsigned long long)(p[i].vaddr + done),
				     r < 0 ? strerror(errno) : "short read");
				goto out;
			}
			done += r;
		}
		pos += (p[i].size + 4095) & ~4095ULL;
	}
	ret = 0;
out:
	free(buf);
	if (out)
		elf_end(out);
	if (in)
		elf_end(in);
	if (ofd >= 0 && close(ofd) && !ret)
		ret = fail(err, errlen, "%s: %s", path, strerror(errno));
	if (ifd >= 0)
		close(ifd);
	return ret;
}
