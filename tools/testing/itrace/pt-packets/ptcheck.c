// SPDX-License-Identifier: GPL-2.0
/*
 * ptcheck - check an Intel PT trace with libipt.
 *
 *   ptcheck TRACE                     packet layer only
 *   ptcheck TRACE ELF [SYM=COUNT...]  also decode the instruction flow of a
 *                                     user-only trace of the static, non-PIE
 *                                     ELF; count executions of each SYM
 *                                     (address in hex) and compare
 *
 * Prints TAP lines ("ok N name" / "not ok N name"); exits non-zero if any
 * check failed.
 */
#include <fcntl.h>
#include <gelf.h>
#include <errno.h>
#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_fail;

static void tap(int ok, const char *fmt, const char *name)
{
	printf("%sok %d %s%s\n", ok ? "" : "not ", ++tap_n, fmt, name);
	if (!ok)
		tap_fail++;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n ? n : 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

static const char *const pkt_names[] = {
	[ppt_invalid] = "invalid", [ppt_unknown] = "unknown",
	[ppt_pad] = "pad", [ppt_psb] = "psb", [ppt_psbend] = "psbend",
	[ppt_fup] = "fup", [ppt_tip] = "tip", [ppt_tip_pge] = "tip.pge",
	[ppt_tip_pgd] = "tip.pgd", [ppt_tnt_8] = "tnt.8",
	[ppt_tnt_64] = "tnt.64", [ppt_mode] = "mode", [ppt_pip] = "pip",
	[ppt_vmcs] = "vmcs", [ppt_cbr] = "cbr", [ppt_tsc] = "tsc",
	[ppt_tma] = "tma", [ppt_mtc] = "mtc", [ppt_cyc] = "cyc",
	[ppt_stop] = "stop", [ppt_ovf] = "ovf", [ppt_mnt] = "mnt",
	[ppt_exstop] = "exstop", [ppt_mwait] = "mwait", [ppt_pwre] = "pwre",
	[ppt_pwrx] = "pwrx", [ppt_ptw] = "ptw",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NR_PKT ARRAY_SIZE(pkt_names)

static void init_config(struct pt_config *cfg, uint8_t *buf, size_t len)
{
	pt_config_init(cfg);
	cfg->begin = buf;
	cfg->end = buf + len;
	/* The emulated CPU: GenuineIntel family 6 model 158 stepping 10. */
	cfg->cpu.vendor = pcv_intel;
	cfg->cpu.family = 6;
	cfg->cpu.model = 158;
	cfg->cpu.stepping = 10;
	pt_cpu_errata(&cfg->errata, &cfg->cpu);
}

static int check_packets(uint8_t *buf, size_t len)
{
	unsigned long count[NR_PKT] = { 0 };
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct pt_config cfg;
	uint64_t off = 0;
	int err, errors = 0;
	size_t i;

	init_config(&cfg, buf, len);
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	err = pt_pkt_sync_set(dec, 0);
	tap(err >= 0 && len >= 16 && !memcmp(buf, "\x02\x82\x02\x82", 4),
	    "", "trace starts with PSB");
	for (;;) {
		pt_pkt_get_offset(dec, &off);
		err = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (err == -pte_eos)
			break;
		if (err < 0) {
			fprintf(stderr, "packet error at offset 0x%" PRIx64
				": %s\n", off, pt_errstr(pt_errcode(err)));
			errors++;
			/* Skip to the next PSB. */
			if (pt_pkt_sync_forward(dec) < 0)
				break;
			continue;
		}
		if ((size_t)pkt.type < NR_PKT)
			count[pkt.type]++;
	}
	pt_pkt_free_decoder(dec);

	printf("# %zu bytes:", len);
	for (i = 0; i < NR_PKT; i++)
		if (count[i])
			printf(" %s=%lu", pkt_names[i], count[i]);
	printf("\n");
	tap(errors == 0, "", "every packet decodes");
	tap(count[ppt_invalid] == 0 && count[ppt_unknown] == 0, "",
	    "no unknown packets");
	tap(count[ppt_psb] == count[ppt_psbend] && count[ppt_psb] > 0, "",
	    "PSB and PSBEND pair up");
	tap(count[ppt_tip_pge] > 0, "", "TIP.PGE present");
	return errors;
}

/* Add the executable PT_LOAD segments of an ELF file (either class). */
static int add_elf(struct pt_image *image, const char *path)
{
	GElf_Phdr ph;
	size_t i, nph;
	int fd, n = 0;
	Elf *elf;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &nph)) {
		n = -1;
		goto out;
	}
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph)) {
			n = -1;
			break;
		}
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (pt_image_add_file(image, path, ph.p_offset, ph.p_filesz,
				      NULL, ph.p_vaddr) < 0) {
			n = -1;
			break;
		}
		n++;
	}
out:
	elf_end(elf);
	close(fd);
	return n;
}

struct expect {
	uint64_t ip;
	unsigned long want, seen;
	const char *arg;
};

static int check_insns(uint8_t *buf, size_t len, const char *elf,
		       struct expect *exp, int nexp)
{
	struct pt_insn_decoder *dec;
	struct pt_config cfg;
	struct pt_insn insn;
	unsigned long insns = 0, errors = 0, enables = 0, disables = 0;
	uint64_t off;
	int status, i;
	char name[128];

	init_config(&cfg, buf, len);
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec || add_elf(pt_insn_get_image(dec), elf) <= 0) {
		tap(0, "", "load ELF image");
		return -1;
	}
	status = pt_insn_sync_forward(dec);
	while (status != -pte_eos) {
		if (status < 0) {
			pt_insn_get_offset(dec, &off);
			fprintf(stderr, "decode error at offset 0x%" PRIx64
				": %s\n", off, pt_errstr(pt_errcode(status)));
			errors++;
			status = pt_insn_sync_forward(dec);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			if (ev.type == ptev_enabled)
				enables++;
			else if (ev.type == ptev_disabled ||
				 ev.type == ptev_async_disabled)
				disables++;
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			continue;
		insns++;
		for (i = 0; i < nexp; i++)
			if (insn.ip == exp[i].ip)
				exp[i].seen++;
	}
	pt_insn_free_decoder(dec);

	printf("# instructions %lu, enables %lu, disables %lu, errors %lu\n",
	       insns, enables, disables, errors);
	tap(errors == 0 && insns > 0, "", "instruction flow decodes");
	for (i = 0; i < nexp; i++) {
		snprintf(name, sizeof(name), "%s executed %lu times (want %lu)",
			 exp[i].arg, exp[i].seen, exp[i].want);
		tap(exp[i].seen == exp[i].want, "", name);
	}
	return errors;
}

int main(int argc, char **argv)
{
	struct expect *exp;
	uint8_t *buf;
	size_t len;
	int i, nexp = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s TRACE [ELF [ADDR=COUNT...]]\n",
			argv[0]);
		return 2;
	}
	buf = read_file(argv[1], &len);
	if (!buf) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	check_packets(buf, len);
	if (argc > 2) {
		exp = calloc(argc, sizeof(*exp));
		for (i = 3; i < argc; i++) {
			char *eq = strchr(argv[i], '=');

			if (!eq)
				continue;
			exp[nexp].ip = strtoull(argv[i], NULL, 16);
			exp[nexp].want = strtoul(eq + 1, NULL, 0);
			exp[nexp].arg = argv[i];
			nexp++;
		}
		check_insns(buf, len, argv[2], exp, nexp);
	}
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}
