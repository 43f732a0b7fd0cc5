/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Instruction text for --insn, from capstone (as perf uses it), loaded at
 * run time: the tool works without it, and the guest, which never prints
 * disassembly, does not carry its 6 MiB.
 */
#ifndef ITRACE_DISASM_H
#define ITRACE_DISASM_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

struct disasm;

/*
 * NULL when libcapstone cannot be loaded (then nothing is disassembled);
 * out of memory, itrace_oom().
 */
struct disasm *disasm_open(void);
void disasm_close(struct disasm *d);
/* "mnemonic operands" (AT&T syntax, as objdump and perf print it), or NULL. */
const char *disasm_insn(struct disasm *d, const uint8_t *raw, size_t size, uint64_t ip,
			enum pt_exec_mode mode);

#endif
