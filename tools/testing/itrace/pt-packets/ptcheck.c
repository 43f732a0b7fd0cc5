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
 * Packet fields: every packet libipt's packet decoder returns is filed
 * under a kind ("tip/ipc2", "tnt.8/5", "mode.exec/32", "cyc/3b", "pip/nr0",
 * "pip.psb/nr0", "cbr/36",
 * "fup.psb/ipc3", "fup>tip.pgd", "tip.pge.resume", ...; see file_packet()),
 * printed as one "# kinds TRACE: K=N ..." line that check.sh folds into
 * its coverage table.
 * IP packets carry the full IP, rebuilt from the compressed payload and
 * the last IP by the SDM's rules (independently of libipt's higher
 * layers).  PTCHECK_PKT="SPEC ..." checks counts of kinds against what
 * the traced program must have produced, each SPEC one TAP line:
 *
 *   KIND[@WHERE[,WHERE...]]OP
 *     KIND   a kind, or a prefix of kinds up to a '/' ("tip" = every TIP)
 *     WHERE  0xLO-0xHI (HI excluded) or 0xADDR, or an ELF symbol of the
 *            traced ELF: NAME (the symbol's whole range) or :NAME (its
 *            first byte only); only packets with an IP match, and TSC
 *            packets, whose TSC value WHERE then ranges over
 *     OP     =N, >=N, or =all (every packet of KIND is in WHERE)
 *
 * With PTCHECK_PIP=CR3 (hex), also check that every PIP carries that CR3
 * and NR=0, and that there is one.
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
	unsigned long tsc, tma, cbr, mtc, cyc, psb, psb_pip, bad_psb_pip;
	unsigned long bad_tsc, bad_tma, bad_cbr, bad_mtc, bad_cyc;
	unsigned long short_psb, long_psb, forced_psb;
	uint64_t last_tsc, psb_off, psb_tsc, period;
	int in_psb, have_period, psb_gap_open, cyc_low;
	int psb_has_fup, psb_has_pip;
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
		/*
		 * SDM 33.3.7: a PIP if ContextEn and OS.  A FUP in PSB+ means
		 * PacketEn, so ContextEn unless a CR3 filter cleared it.
		 */
		if (CTL(2) ? t->psb_has_fup && !CTL(7) && !t->psb_has_pip : t->psb_has_pip)
			t->bad_psb_pip++;
		t->psb_has_fup = 0;
		t->psb_has_pip = 0;
		break;
	case ppt_pip:
		t->psb_pip += t->in_psb;
		t->psb_has_pip |= t->in_psb;
		break;
	case ppt_fup:
		t->psb_has_fup |= t->in_psb;
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
	/* a whole IA32_RTIT_CTL value (TraceEn set) says OS */
	snprintf(name, sizeof(name), "PIP in PSB+ iff OS and ContextEn (%lu in %lu PSB+, %lu bad)",
		 t->psb_pip, t->psb, t->bad_psb_pip);
	if (CTL(0))
		tap(t->bad_psb_pip == 0 && (!CTL(2) || t->psb_pip > 0), "", name);
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

/* Packet kinds and the field checks (PTCHECK_PKT) */

#define MAX_KINDS	128
#define MAX_SPECS	32
#define MAX_WHERE	1024

static struct {
	char name[32];
	unsigned long count;
} kinds[MAX_KINDS];
static int nkinds;

struct spec {
	const char *text;
	char kind[32];
	int nwhere, op;		/* op: 0 "=N", 1 ">=N", 2 "=all" */
	uint64_t lo[MAX_WHERE], hi[MAX_WHERE];
	unsigned long want, in, total;
	int bad;
};

static struct spec specs[MAX_SPECS];
static int nspecs;
static const char *elf_path;
static uint64_t want_pip;
static int have_pip;
static unsigned long pips, bad_pips;

/* Does kind @k belong to @prefix: equal, or @prefix followed by '/'. */
static int kind_match(const char *k, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(k, prefix, n) && (k[n] == 0 || k[n] == '/');
}

/* File one packet of kind @k, with its full IP if @has_ip. */
static void pkt_kind(const char *k, int has_ip, uint64_t ip)
{
	int i, j;

	for (i = 0; i < nkinds; i++)
		if (!strcmp(kinds[i].name, k))
			break;
	if (i == nkinds && nkinds < MAX_KINDS) {
		snprintf(kinds[i].name, sizeof(kinds[i].name), "%s", k);
		nkinds++;
	}
	if (i < nkinds)
		kinds[i].count++;
	for (i = 0; i < nspecs; i++) {
		struct spec *s = &specs[i];

		if (!kind_match(k, s->kind))
			continue;
		s->total++;
		if (!s->nwhere) {
			s->in++;
			continue;
		}
		for (j = 0; has_ip && j < s->nwhere; j++) {
			if (ip >= s->lo[j] && ip < s->hi[j]) {
				s->in++;
				break;
			}
		}
	}
}

/* The address range of symbol @name in the ELF (size 0: one byte). */
static int elf_symbol(const char *name, uint64_t *lo, uint64_t *hi)
{
	Elf_Scn *scn = NULL;
	int fd, found = 0;
	Elf *elf;

	if (!elf_path)
		return 0;
	fd = open(elf_path, O_RDONLY);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, i, &sym))
				break;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_shndx != SHN_UNDEF) {
				*lo = sym.st_value;
				*hi = sym.st_value + (sym.st_size ? sym.st_size : 1);
				found = 1;
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/* Parse one SPEC (see the top of the file); returns 0 on success. */
static int parse_spec(struct spec *s, const char *text)
{
	char buf[32768], *op, *w, *save = NULL;
	size_t n;

	s->text = text;
	snprintf(buf, sizeof(buf), "%s", text);
	op = strstr(buf, ">=");
	if (op) {
		s->op = 1;
		s->want = strtoul(op + 2, NULL, 0);
	} else if ((op = strchr(buf, '='))) {
		s->op = strcmp(op + 1, "all") ? 0 : 2;
		s->want = strtoul(op + 1, NULL, 0);
	} else {
		return -1;
	}
	*op = 0;
	w = strchr(buf, '@');
	if (w)
		*w++ = 0;
	n = strlen(buf);
	if (!n || n >= sizeof(s->kind))
		return -1;
	memcpy(s->kind, buf, n + 1);
	for (w = w ? strtok_r(w, ",", &save) : NULL; w;
	     w = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		char *end;

		if (s->nwhere == MAX_WHERE)
			return -1;
		if (!strncmp(w, "0x", 2)) {
			lo = strtoull(w, &end, 16);
			hi = *end == '-' ? strtoull(end + 1, &end, 16) : lo + 1;
			if (*end || hi <= lo)
				return -1;
		} else if (*w == ':') {
			if (!elf_symbol(w + 1, &lo, &hi))
				return -1;
			hi = lo + 1;
		} else if (!elf_symbol(w, &lo, &hi)) {
			return -1;
		}
		s->lo[s->nwhere] = lo;
		s->hi[s->nwhere++] = hi;
	}
	return 0;
}

static void parse_specs(const char *env)
{
	char *copy, *t, *save = NULL;

	if (!env)
		return;
	copy = strdup(env);
	for (t = strtok_r(copy, " \t\n", &save); t && nspecs < MAX_SPECS;
	     t = strtok_r(NULL, " \t\n", &save)) {
		struct spec *s = &specs[nspecs++];

		memset(s, 0, sizeof(*s));
		s->bad = parse_spec(s, strdup(t)) != 0;
	}
	free(copy);
}

static void report_specs(void)
{
	char name[400];
	int i;

	for (i = 0; i < nspecs; i++) {
		struct spec *s = &specs[i];
		int ok;

		if (s->bad) {
			snprintf(name, sizeof(name), "packet fields: %s: bad"
				 " spec or unknown symbol", s->text);
			tap(0, "", name);
			continue;
		}
		if (s->op == 2)
			ok = s->in == s->total;
		else if (s->op == 1)
			ok = s->in >= s->want;
		else
			ok = s->in == s->want;
		snprintf(name, sizeof(name), "packet fields: %.120s%s (%lu of"
			 " %lu %s)", s->text, strlen(s->text) > 120 ? "..." : "",
			 s->in, s->total, s->kind);
		tap(ok, "", name);
	}
	if (have_pip) {
		snprintf(name, sizeof(name), "packet fields: every PIP has CR3"
			 " 0x%" PRIx64 ", NR 0 (%lu PIP, %lu bad)", want_pip,
			 pips, bad_pips);
		tap(pips > 0 && bad_pips == 0, "", name);
	}
}

static const char *const ipc_names[] = {
	[pt_ipc_suppressed] = "ipc0", [pt_ipc_update_16] = "ipc1",
	[pt_ipc_update_32] = "ipc2", [pt_ipc_sext_48] = "ipc3",
	[pt_ipc_update_48] = "ipc4", [pt_ipc_full] = "ipc6",
};

/* The packet state the kinds need: the last IP, PSB+, OVF, pairs. */
struct kind_state {
	uint64_t last_ip;
	int in_psb, after_ovf;
	char pending[32];	/* "fup" or "tip.pgd": pair with the next */
	uint64_t pending_ip;
	int pending_has_ip;
	/* How packets went off last: 0 never, 1 FUP + TIP.PGD, 2 TIP.PGD */
	int off_how;
	uint64_t off_ip;	/* the FUP's IP */
};

/*
 * Rebuild the full IP of an IP packet from its payload and the last IP
 * (SDM "IP Compression"); returns 0 if the IP is suppressed.
 */
static int full_ip(struct kind_state *ks, const struct pt_packet_ip *p,
		   uint64_t *ip)
{
	switch (p->ipc) {
	case pt_ipc_update_16:
		*ip = (ks->last_ip & ~0xffffULL) | (p->ip & 0xffff);
		break;
	case pt_ipc_update_32:
		*ip = (ks->last_ip & ~0xffffffffULL) | (p->ip & 0xffffffff);
		break;
	case pt_ipc_sext_48:
		*ip = (uint64_t)((int64_t)(p->ip << 16) >> 16);
		break;
	case pt_ipc_update_48:
		*ip = (ks->last_ip & ~0xffffffffffffULL) |
		      (p->ip & 0xffffffffffffULL);
		break;
	case pt_ipc_full:
		*ip = p->ip;
		break;
	default:
		return 0;
	}
	ks->last_ip = *ip;
	return 1;
}

static void file_packet(struct kind_state *ks, const struct pt_packet *pkt)
{
	char k[48];
	uint64_t ip = 0;
	int has_ip = 0;
	const char *base = (size_t)pkt->type < NR_PKT && pkt_names[pkt->type] ?
			   pkt_names[pkt->type] : "unknown";

	int after_fup = 0;
	uint64_t fup_ip = 0;

	/* A pair: the packet after a FUP or TIP.PGD, timing aside. */
	if (ks->pending[0] && pkt->type != ppt_mtc && pkt->type != ppt_cyc &&
	    pkt->type != ppt_pad) {
		snprintf(k, sizeof(k), "%s>%s", ks->pending, base);
		pkt_kind(k, ks->pending_has_ip, ks->pending_ip);
		after_fup = !strcmp(ks->pending, "fup");
		fup_ip = ks->pending_ip;
		ks->pending[0] = 0;
	}
	switch (pkt->type) {
	case ppt_psb:
		ks->in_psb = 1;
		ks->last_ip = 0;
		pkt_kind(base, 0, 0);
		break;
	case ppt_psbend:
		ks->in_psb = 0;
		pkt_kind(base, 0, 0);
		break;
	case ppt_ovf:
		ks->after_ovf = 1;
		ks->off_how = 0;
		pkt_kind(base, 0, 0);
		break;
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
		has_ip = full_ip(ks, &pkt->payload.ip, &ip);
		if (pkt->type == ppt_fup && ks->in_psb)
			base = "fup.psb";
		else if (pkt->type == ppt_fup && ks->after_ovf)
			base = "fup.ovf";
		ks->after_ovf = 0;
		snprintf(k, sizeof(k), "%s/%s", base,
			 (size_t)pkt->payload.ip.ipc < ARRAY_SIZE(ipc_names) &&
			 ipc_names[pkt->payload.ip.ipc] ?
			 ipc_names[pkt->payload.ip.ipc] : "ipc?");
		pkt_kind(k, has_ip, ip);
		/*
		 * Where TIP.PGE resumes: at the FUP's IP after an event took
		 * packets off (FUP + TIP.PGD), or somewhere a synchronous
		 * transfer (TIP.PGD alone: SYSCALL, a filter) returns to.
		 */
		if (pkt->type == ppt_tip_pgd) {
			ks->off_how = after_fup ? 1 : 2;
			ks->off_ip = fup_ip;
		} else if (pkt->type == ppt_tip_pge) {
			pkt_kind(ks->off_how == 0 ? "tip.pge.first" :
				 ks->off_how == 2 ? "tip.pge.sync" :
				 ks->off_ip == ip ? "tip.pge.resume" :
				 "tip.pge.elsewhere", has_ip, ip);
		}
		if (!strcmp(base, "fup") || !strcmp(base, "tip.pgd")) {
			snprintf(ks->pending, sizeof(ks->pending), "%s", base);
			ks->pending_ip = ip;
			ks->pending_has_ip = has_ip;
		}
		break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		snprintf(k, sizeof(k), "%s/%u", base, pkt->payload.tnt.bit_size);
		pkt_kind(k, 0, 0);
		break;
	case ppt_mode:
		if (pkt->payload.mode.leaf == pt_mol_tsx) {
			pkt_kind("mode.tsx", 0, 0);
			break;
		}
		switch (pt_get_exec_mode(&pkt->payload.mode.bits.exec)) {
		case ptem_64bit:
			pkt_kind("mode.exec/64", 0, 0);
			break;
		case ptem_32bit:
			pkt_kind("mode.exec/32", 0, 0);
			break;
		case ptem_16bit:
			pkt_kind("mode.exec/16", 0, 0);
			break;
		default:
			pkt_kind("mode.exec/bad", 0, 0);
			break;
		}
		break;
	case ppt_pip:
		snprintf(k, sizeof(k), "%s/nr%u", ks->in_psb ? "pip.psb" : "pip",
			 pkt->payload.pip.nr);
		pkt_kind(k, 0, 0);
		pips++;
		if (have_pip && (pkt->payload.pip.cr3 != want_pip ||
				 pkt->payload.pip.nr))
			bad_pips++;
		break;
	case ppt_tsc:
		/* The TSC value stands in for an IP: WHERE is a TSC range. */
		pkt_kind(base, 1, pkt->payload.tsc.tsc);
		break;
	case ppt_cbr:
		snprintf(k, sizeof(k), "cbr/%u", pkt->payload.cbr.ratio);
		pkt_kind(k, 0, 0);
		break;
	case ppt_cyc:
		snprintf(k, sizeof(k), "cyc/%ub", pkt->size);
		pkt_kind(k, 0, 0);
		break;
	default:
		pkt_kind(base, 0, 0);
		break;
	}
}

static void print_kinds(const char *trace)
{
	const char *base = strrchr(trace, '/');
	int i;

	printf("# kinds %s:", base ? base + 1 : trace);
	for (i = 0; i < nkinds; i++)
		printf(" %s=%lu", kinds[i].name, kinds[i].count);
	printf("\n");
}

static int check_packets(const char *trace, uint8_t *buf, size_t len)
{
	unsigned long count[NR_PKT] = { 0 };
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct pt_config cfg;
	uint64_t off = 0;
	int err, errors = 0;
	size_t i;
	struct timing tm = { 0 };
	struct kind_state ks = { 0 };

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
			memset(&ks, 0, sizeof(ks));
			continue;
		}
		if ((size_t)pkt.type < NR_PKT)
			count[pkt.type]++;
		if (have_ctl)
			timing_packet(&tm, &pkt, off);
		file_packet(&ks, &pkt);
	}
	pt_pkt_free_decoder(dec);
	print_kinds(trace);

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
	report_specs();
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
	if (getenv("PTCHECK_PIP") && *getenv("PTCHECK_PIP")) {
		want_pip = strtoull(getenv("PTCHECK_PIP"), NULL, 16);
		have_pip = 1;
	}
	elf_path = argc > 2 ? argv[2] : NULL;
	parse_specs(getenv("PTCHECK_PKT"));
	buf = read_file(argv[1], &len);
	if (!buf) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	check_packets(argv[1], buf, len);
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
