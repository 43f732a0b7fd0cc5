// SPDX-License-Identifier: GPL-2.0
/* Disassembly through libcapstone, opened with dlopen(); see disasm.h. */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "disasm.h"
#include "itrace.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* The soname of Debian's libcapstone4; the unversioned name is -dev only. */
static const char * const libs[] = {
	"libcapstone.so.4", "libcapstone.so.5", "libcapstone.so",
};

/* capstone's functions, of the types <capstone/capstone.h> declares */
struct disasm {
	void			*lib;
	__typeof__(cs_open)	*open;
	__typeof__(cs_option)	*option;
	__typeof__(cs_disasm)	*disasm;
	__typeof__(cs_free)	*free;
	__typeof__(cs_close)	*close;
	csh			h[3];		/* 64-, 32- and 16-bit code */
	int			have[3];
	char			text[192];
};

static const cs_mode modes[3] = { CS_MODE_64, CS_MODE_32, CS_MODE_16 };

struct disasm *disasm_open(void)
{
	struct disasm *d = calloc(1, sizeof(*d));
	size_t i;

	if (!d)
		itrace_oom();	/* not "no capstone": that is silent */
	for (i = 0; i < ARRAY_SIZE(libs) && !d->lib; i++)
		d->lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (!d->lib)
		goto fail;
	*(void **)&d->open = dlsym(d->lib, "cs_open");
	*(void **)&d->option = dlsym(d->lib, "cs_option");
	*(void **)&d->disasm = dlsym(d->lib, "cs_disasm");
	*(void **)&d->free = dlsym(d->lib, "cs_free");
	*(void **)&d->close = dlsym(d->lib, "cs_close");
	if (!d->open || !d->option || !d->disasm || !d->free || !d->close)
		goto fail;
	for (i = 0; i < 3; i++) {
		if (d->open(CS_ARCH_X86, modes[i], &d->h[i]) != CS_ERR_OK)
			continue;
		d->option(d->h[i], CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		d->have[i] = 1;
	}
	if (d->have[0])
		return d;
fail:
	disasm_close(d);
	return NULL;
}

void disasm_close(struct disasm *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < 3; i++)
		if (d->have[i])
			d->close(&d->h[i]);
	if (d->lib)
		dlclose(d->lib);
	free(d);
}

const char *disasm_insn(struct disasm *d, const uint8_t *raw, size_t size, uint64_t ip,
			enum pt_exec_mode mode)
{
	int m = mode == ptem_32bit ? 1 : mode == ptem_16bit ? 2 : 0;
	cs_insn *insn;
	size_t n;

	if (!d || !d->have[m])
		return NULL;
	n = d->disasm(d->h[m], raw, size, ip, 1, &insn);
	if (!n)
		return NULL;
	snprintf(d->text, sizeof(d->text), "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "",
		 insn->op_str);
	d->free(insn, n);
	return d->text;
}
