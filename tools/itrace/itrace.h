/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ITRACE_H
#define ITRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct itrace_data;
struct itrace_file_header;
struct pt_config;
struct pt_event;
struct pt_image;
struct pt_insn;
struct pt_insn_decoder;
struct pt_block;
struct pt_block_decoder;
struct pdec;
struct pt_image_section_cache;
struct symtab;

/**
 * itrace_oom() - "itrace: out of memory" on stderr, then exit(1)
 *
 * For an allocation failure the command cannot go on from (or one whose
 * loss would change its output without a word): every command exits 1
 * with that message, the status of an unusable input (itrace(1)).
 */
_Noreturn void itrace_oom(void);

/**
 * itrace_grow() - room for one more element in an array that doubles
 * @p: the array (NULL: none yet)
 * @cap: its capacity in elements, updated
 * @nr: the elements in use
 * @size: the size of an element in bytes
 * @first: the capacity of a new array, in elements
 *
 * Return: @p, or the array moved to where it has room for @nr + 1
 * elements; out of memory: itrace_oom().
 */
void *itrace_grow(void *p, size_t *cap, size_t nr, size_t size, size_t first);

/**
 * itrace_try_grow() - itrace_grow() for a caller that can do without
 * @p: the array (NULL: none yet)
 * @cap: its capacity in elements, updated only on success
 * @nr: the elements in use
 * @size: the size of an element in bytes
 * @first: the capacity of a new array, in elements
 *
 * For threads, which must not exit the process (a decode thread gives up
 * its task instead, pdec.c).  Thread-safe for distinct arrays.
 *
 * Return: @p, or the array moved to where it has room for @nr + 1
 * elements; NULL if the memory (or the size in bytes, which would
 * overflow a size_t) is not there, with @p and *@cap as they were.
 */
void *itrace_try_grow(void *p, size_t *cap, size_t nr, size_t size, size_t first);

/**
 * struct dec_count - a count in decimal, kept up to date as it grows
 * @digits: the count right-aligned, spaces before it (no NUL)
 * @v: the count @digits hold
 * @n: how many digits it has; 0: @digits hold nothing yet
 *
 * For the count of instructions at the start of every flow and --insn
 * line: zero-initialize, then dec_count_set() before each line.
 */
struct dec_count {
	char		digits[20];
	uint64_t	v;
	int		n;
};

/**
 * dec_count_set() - make @c hold @v
 * @c: the count
 * @v: its new value
 *
 * While @v / 10000 stays, only the last 4 digits are written; else @v is
 * converted whole, and the spaces before it rewritten where it has fewer
 * digits than the last.  Context: any; @c is the caller's.
 */
void dec_count_set(struct dec_count *c, uint64_t v);

/*
 * Exit status of every command (itrace(1)): 0 done; 1 the input cannot be
 * used (not a recording or core, truncated beyond use, unreadable); 2 usage;
 * 3 decoded, but with errors (trace that could not be decoded, a
 * recording cut short): everything that could be decoded was printed.
 */
enum {
	EXIT_USAGE	= 2,
	EXIT_DECODE_ERRORS = 3,
};

#define ITRACE_VERSION	"0.2"

enum decode_mode {
	DECODE_FLOW,		/* one line per call / return / jump between functions */
	DECODE_INSN,		/* one line per instruction */
	DECODE_SUMMARY,		/* human summary */
	DECODE_STATS,		/* machine readable counters (tests) */
	DECODE_SIDEBAND,	/* the perf stream's records */
};

struct decode_opts {
	enum decode_mode mode;
	const char	*name;		/* file name for messages */
	const char	*kernel;	/* --kernel: ELF image of the kernel */
	const char	*sysroot;	/* --sysroot: mapped files under it */
	const char	*exe;		/* --exe: the program's file */
	int		json;		/* --json */
	int		progress;	/* progress on stderr */
	int		no_demangle;
	const char	*buildid_dir;	/* --buildid-dir: perf's build-id cache */
	const char	*tids;		/* --tid: only these threads (comma list) */
	uint64_t	time_from;	/* --time: perf time range in ns, */
	uint64_t	time_to;	/* 0 when open */
	unsigned int	snapshot;	/* --snapshot N: only that one (0: all) */
	unsigned int	jobs;		/* --jobs: threads (0, 1: the caller's only) */
	/* report of samples (record -e) */
	int		samples;	/* --samples: each sample */
	unsigned int	nbranches;	/* -n: branches per sample */
	unsigned int	path_depth;	/* --path: branches of a path */
	unsigned int	top;		/* --top: paths and chains per location */
};

/* Returns 0, EXIT_DECODE_ERRORS (after printing everything it could). */
int itrace_decode(struct itrace_data *d, const struct decode_opts *o, FILE *out);

int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_core(int argc, char **argv);
int cmd_convert(int argc, char **argv);

/* ---- shared by decode and core (decode.c) ---- */

/* What a walk over one run of trace reports. */
struct pt_walk_ops {
	void (*insn)(void *ctx, struct pt_insn_decoder *dec, const struct pt_insn *in);
	void (*event)(void *ctx, struct pt_insn_decoder *dec, const struct pt_event *ev);
	/* err: the libipt error; then the decoder resyncs at the next PSB */
	void (*error)(void *ctx, struct pt_insn_decoder *dec, int err, uint64_t last_ip);
};

/*
 * The same with the block decoder: one call per block of instructions;
 * status: pt_blk_next()'s, negative if the block ended in an error.
 */
struct blk_walk_ops {
	void (*block)(void *ctx, struct pdec *dec, const struct pt_block *b,
		      int status);
	void (*event)(void *ctx, struct pdec *dec, const struct pt_event *ev);
	void (*error)(void *ctx, struct pdec *dec, int err, uint64_t last_ip);
};

/*
 * Bytes of sections (their mappings and libipt's block caches) the image
 * section cache keeps mapped when no decoder uses them: without a limit
 * libipt unmaps a section, and drops its block cache, whenever the last
 * decoder moves out of it.
 */
#define ITRACE_ISCACHE_LIMIT	(256ULL << 20)

/* The traced memory: an image whose file sections live in one cache. */
struct itrace_image {
	struct pt_image			*image;
	struct pt_image_section_cache	*iscache;
	int				*isids;	/* its sections in the cache, oldest first */
	bool				*is32;	/* each one's code 32-bit (an ELFCLASS32 file) */
	size_t				nr_isids;
	uint64_t			*entries;	/* programs' entry points in it */
	size_t				nr_entries;
};

int itrace_image_init(struct itrace_image *im, const char *name);
/* [offset, offset + size) of a file at vaddr, no symbols: a libipt status. */
int itrace_image_add_section(struct itrace_image *im, const char *path, uint64_t offset,
			     uint64_t size, uint64_t vaddr);
void itrace_image_fini(struct itrace_image *im);
/*
 * Up to size bytes of the image's memory at ip (the newest section that
 * holds ip, as libipt reads it): the number read, or a libipt error.
 */
int itrace_image_read(const struct itrace_image *im, uint8_t *buf, size_t size, uint64_t ip);
/*
 * The same, and in *is32 whether that section's code is 32-bit (a section
 * itrace_image_add() took from an ELFCLASS32 file: a compat-mode program,
 * the 32-bit vDSO): what BTS decoding, which has no MODE.Exec, decodes in.
 */
int itrace_image_read_mode(const struct itrace_image *im, uint8_t *buf, size_t size,
			   uint64_t ip, bool *is32);
/*
 * Whether ip is the entry point (ELF e_entry) of a file itrace_image_add()
 * mapped in im: a program's or the dynamic linker's, where user mode
 * begins after an exec.
 */
bool itrace_image_is_entry(const struct itrace_image *im, uint64_t ip);

/*
 * A decoder that goes on decoding without reading any trace follows code
 * that is not what ran: a loop of direct jumps leaves no packets, and in
 * the wrong bytes (a damaged or crafted core or recording, a file changed
 * since) libipt would follow it for ever.  Real code reads a packet at
 * least every 47 conditional branches, and libipt binds an interrupt's
 * FUP to its IP even in a loop of direct jumps, so ITRACE_STALL_INSNS
 * instructions without trace are an error: the walks report
 * ITRACE_ERR_STALL and go on at the next PSB.  The decoder's offset is
 * read every ITRACE_STALL_CHECK instructions only.
 */
#define ITRACE_STALL_INSNS	4194304		/* 2^22 */
#define ITRACE_STALL_CHECK	65536		/* 2^16 */
/* The walks' own error code, beside libipt's (-pte_*). */
#define ITRACE_ERR_STALL	(-0x100)

struct itrace_stall {
	uint64_t	offset;		/* the decoder's trace offset at the last check */
	uint64_t	same;		/* instructions since the offset last changed */
	uint32_t	insns;		/* instructions since the last check */
};

/* After n instructions: true when itrace_stalled() is due. */
static inline bool itrace_stall_due(struct itrace_stall *st, uint32_t n)
{
	st->insns += n;
	return st->insns >= ITRACE_STALL_CHECK;
}

/*
 * With the decoder's trace offset off (bytes), when itrace_stall_due():
 * true if ITRACE_STALL_INSNS or more instructions were decoded since the
 * offset last changed.
 */
bool itrace_stalled(struct itrace_stall *st, uint64_t off);

/* What a walk's error err (-pte_*, or ITRACE_ERR_STALL) says. */
const char *itrace_errstr(int err);

/* A decoder configuration for trace [trace, trace + size) of that CPU. */
void itrace_pt_config(struct pt_config *cfg, const uint8_t *trace, size_t size,
		      uint32_t vendor, uint32_t family, uint32_t model, uint32_t stepping);
/* Decode from the first PSB to the end: 0, 1 if there is no PSB, <0 on ENOMEM. */
int itrace_pt_walk(const struct pt_config *cfg, struct pt_image *image,
		   const struct pt_walk_ops *ops, void *ctx);
/*
 * Map file offset pgoff of path at [addr, addr + len) in the image and the
 * symbol table: 0, 1 if the file holds nothing there, -errno if it cannot be read.
 */
int itrace_image_add(struct itrace_image *im, struct symtab *st, const char *name,
		     const char *path, uint64_t addr, uint64_t len, uint64_t pgoff);
/*
 * buf as a file that can be opened by the name put in path (a memfd, no
 * file on disk): the fd, to close when done, or -errno.
 */
int itrace_mem_image(const char *name, const void *buf, size_t size, char *path, size_t len);
const char *itrace_base_name(const char *path);
/* A system call instruction: SYSCALL, SYSENTER, or INT 0x80 (32-bit programs). */
bool itrace_is_syscall(const uint8_t *raw, size_t size);
void itrace_cpu_ident(struct itrace_file_header *hdr);
/* A copy of this process's [vdso] image (malloc'd). */
int itrace_read_vdso(unsigned char **buf, size_t *size);

#endif
