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
 * With PTCHECK_CTL=HEX in the environment (the IA32_RTIT_CTL value the
 * trace was made with), also check the timing packets against it and
 * against the emulated CPU's CPUID leaf 0x15 (TSC/CTC = 300/2) and CBR
 * (24): TSC, TMA, CBR in every PSB+, MTC payloads, CYC thresholds, the
 * PSB period (only with PTCHECK_PSBGAP=1: a trace of one TraceEn run,
 * as each restart begins with PSB+); and that libipt's time never goes
 * backwards.
 *
 * With PTCHECK_RANGE=LO-HI (hex, HI excluded), also check that every
 * decoded instruction lies in [LO, HI): a trace made with an IP filter on
 * that range.
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

/* The emulated CPU (CPUID leaf 0x15, MSR_PLATFORM_INFO[15:8]). */
#define CTC_EAX		2
#define CTC_EBX		300
#define TSC_PER_CTC	(CTC_EBX / CTC_EAX)
#define NOM_RATIO	36

/* IA32_RTIT_CTL the trace was made with, if PTCHECK_CTL says. */
static int have_ctl, psb_gaps, have_range;
static uint64_t range_lo, range_hi;
static uint64_t ctl;
#define CTL(bit)	((ctl >> (bit)) & 1)
#define CTL_FIELD(s)	((unsigned int)(ctl >> (s)) & 0xf)
#define MTC_FREQ	CTL_FIELD(14)
#define CYC_THRESH	CTL_FIELD(19)
#define PSB_FREQ	CTL_FIELD(24)
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
	if (have_ctl) {
		cfg->cpuid_0x15_eax = CTC_EAX;
		cfg->cpuid_0x15_ebx = CTC_EBX;
		cfg->nom_freq = NOM_RATIO;
		cfg->mtc_freq = MTC_FREQ;
	}
}

/* Timing packets against what IA32_RTIT_CTL programmed. */
struct timing {
	unsigned long tsc, tma, cbr, mtc, cyc, psb;
	unsigned long bad_tsc, bad_tma, bad_cbr, bad_mtc, bad_cyc;
	unsigned long short_psb, long_psb, forced_psb;
	uint64_t last_tsc, psb_off, psb_tsc, period;
	int in_psb, have_period, psb_gap_open, cyc_low;
	uint64_t gap_off;
};

static void timing_packet(struct timing *t, const struct pt_packet *pkt,
			  uint64_t off)
{
	uint64_t psb_period = 2048ULL << PSB_FREQ, v;

	/* A CYC below CycThresh only right before an MTC or PSB. */
	if (t->cyc_low && pkt->type != ppt_mtc && pkt->type != ppt_psb)
		t->bad_cyc++;
	t->cyc_low = 0;
	switch (pkt->type) {
	case ppt_psb:
		if (t->psb && t->psb_gap_open) {
			uint64_t gap = off - t->psb_off;

			if (gap < psb_period) {
				/* Only a timing gap may bring PSB+ early. */
				t->gap_off = gap;
				t->short_psb++;
			} else if (gap > psb_period + 128) {
				t->long_psb++;
			}
		}
		t->psb++;
		t->psb_off = off;
		t->in_psb = 1;
		t->psb_gap_open = 1;
		break;
	case ppt_psbend:
		t->in_psb = 0;
		break;
	case ppt_tsc:
		t->tsc++;
		if (!t->in_psb || (t->tsc > 1 && pkt->payload.tsc.tsc <= t->last_tsc))
			t->bad_tsc++;
		if (t->short_psb && t->gap_off &&
		    pkt->payload.tsc.tsc - t->last_tsc >=
		    ((uint64_t)256 << MTC_FREQ) * TSC_PER_CTC) {
			t->forced_psb++;
		}
		t->gap_off = 0;
		t->last_tsc = pkt->payload.tsc.tsc;
		break;
	case ppt_tma:
		t->tma++;
		v = t->last_tsc / TSC_PER_CTC;
		if (!t->in_psb || pkt->payload.tma.ctc != (v & 0xffff) ||
		    pkt->payload.tma.fc != t->last_tsc - v * TSC_PER_CTC)
			t->bad_tma++;
		t->period = v >> MTC_FREQ;
		t->have_period = 1;
		break;
	case ppt_cbr:
		t->cbr++;
		if (!t->in_psb || pkt->payload.cbr.ratio != NOM_RATIO)
			t->bad_cbr++;
		break;
	case ppt_mtc:
		t->mtc++;
		/* A CTC edge since the last MTC or TMA: never the same value. */
		if (t->in_psb || (t->have_period &&
				  pkt->payload.mtc.ctc == (t->period & 0xff)))
			t->bad_mtc++;
		t->period = (t->period & ~0xffULL) | pkt->payload.mtc.ctc;
		break;
	case ppt_cyc:
		t->cyc++;
		if (t->in_psb || !pkt->payload.cyc.value)
			t->bad_cyc++;
		else if (CYC_THRESH &&
			 pkt->payload.cyc.value < (1ULL << (CYC_THRESH - 1)))
			t->cyc_low = 1;
		break;
	default:
		break;
	}
}

static void timing_report(struct timing *t)
{
	char name[200];

	printf("# timing: ctl 0x%" PRIx64 ": tsc=%lu tma=%lu cbr=%lu mtc=%lu"
	       " cyc=%lu; PSB gaps: %lu short (%lu after a timing gap),"
	       " %lu long\n", ctl, t->tsc, t->tma, t->cbr, t->mtc, t->cyc,
	       t->short_psb, t->forced_psb, t->long_psb);
	snprintf(name, sizeof(name), "TSC in every PSB+ iff TSCEn, increasing"
		 " (%lu TSC, %lu PSB, %lu bad)", t->tsc, t->psb, t->bad_tsc);
	tap(t->bad_tsc == 0 && t->tsc == (CTL(10) ? t->psb : 0), "", name);
	snprintf(name, sizeof(name), "TMA after every TSC iff MTCEn, CTC and"
		 " FastCounter = TSC / %d (%lu TMA, %lu bad)", TSC_PER_CTC,
		 t->tma, t->bad_tma);
	tap(t->bad_tma == 0 && t->tma == (CTL(9) ? t->tsc : 0), "", name);
	snprintf(name, sizeof(name), "CBR %d in every PSB+ (%lu CBR, %lu bad)",
		 NOM_RATIO, t->cbr, t->bad_cbr);
	tap(t->bad_cbr == 0 && t->cbr == t->psb, "", name);
	snprintf(name, sizeof(name), "MTC iff MTCEn, each a new CTC >> %u value"
		 " (%lu MTC, %lu bad)", MTC_FREQ, t->mtc, t->bad_mtc);
	tap(t->bad_mtc == 0 && (CTL(9) ? t->mtc > 0 : t->mtc == 0), "", name);
	snprintf(name, sizeof(name), "CYC iff CYCEn, each >= 2^(CycThresh %u - 1) or before MTC/PSB"
		 " (%lu CYC, %lu bad)", CYC_THRESH, t->cyc, t->bad_cyc);
	tap(t->bad_cyc == 0 && (CTL(1) ? t->cyc > 0 : t->cyc == 0), "", name);
	snprintf(name, sizeof(name), "PSB+ every %llu bytes (PSBFreq %u): %lu"
		 " PSB, %lu gaps short without a timing gap, %lu long",
		 2048ULL << PSB_FREQ, PSB_FREQ, t->psb,
		 t->short_psb - t->forced_psb, t->long_psb);
	if (psb_gaps)
		tap(t->psb > 1 && t->short_psb == t->forced_psb &&
		    t->long_psb == 0, "", name);
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
	struct timing tm = { 0 };

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
		if (have_ctl)
			timing_packet(&tm, &pkt, off);
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
	if (have_ctl)
		timing_report(&tm);
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
	unsigned long backwards = 0, timed = 0, outside = 0;
	uint64_t off, tsc, last_tsc = 0;
	uint32_t lost_mtc = 0, lost_cyc = 0;
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
		if (have_range && (insn.ip < range_lo || insn.ip >= range_hi) &&
		    outside++ < 3)
			fprintf(stderr, "instruction at 0x%" PRIx64
				" outside the filter range\n", insn.ip);
		if (have_ctl && pt_insn_time(dec, &tsc, &lost_mtc,
					     &lost_cyc) >= 0) {
			if (tsc < last_tsc && backwards++ < 3) {
				pt_insn_get_offset(dec, &off);
				fprintf(stderr, "time goes back at 0x%" PRIx64
					" (ip 0x%" PRIx64 "): 0x%" PRIx64
					" -> 0x%" PRIx64 "\n", off, insn.ip,
					last_tsc, tsc);
			}
			if (tsc)
				timed++;
			last_tsc = tsc;
		}
		for (i = 0; i < nexp; i++)
			if (insn.ip == exp[i].ip)
				exp[i].seen++;
	}
	pt_insn_free_decoder(dec);

	printf("# instructions %lu, enables %lu, disables %lu, errors %lu\n",
	       insns, enables, disables, errors);
	tap(errors == 0 && insns > 0, "", "instruction flow decodes");
	if (have_ctl) {
		printf("# libipt time: %lu of %lu instructions timed, lost MTC"
		       " %u, lost CYC %u, last TSC 0x%" PRIx64 "\n", timed,
		       insns, lost_mtc, lost_cyc, last_tsc);
		snprintf(name, sizeof(name), "libipt time never goes backwards"
			 " (%lu times it did)", backwards);
		tap(backwards == 0 && (!CTL(10) || timed == insns), "", name);
	}
	if (have_range) {
		snprintf(name, sizeof(name), "every instruction in [0x%" PRIx64
			 ", 0x%" PRIx64 ") (%lu outside)", range_lo, range_hi,
			 outside);
		tap(outside == 0 && insns > 0, "", name);
	}
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
	if (getenv("PTCHECK_CTL") && *getenv("PTCHECK_CTL")) {
		ctl = strtoull(getenv("PTCHECK_CTL"), NULL, 16);
		have_ctl = 1;
		psb_gaps = getenv("PTCHECK_PSBGAP") != NULL;
	}
	if (getenv("PTCHECK_RANGE") && *getenv("PTCHECK_RANGE")) {
		char *end;

		range_lo = strtoull(getenv("PTCHECK_RANGE"), &end, 16);
		range_hi = *end == '-' ? strtoull(end + 1, NULL, 16) : 0;
		have_range = 1;
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
