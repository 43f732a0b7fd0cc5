// SPDX-License-Identifier: GPL-2.0
/*
 * Indirect jumps: a dense switch the compiler turns into a jump table and
 * computed gotos (labels as values), each target taken many times.
 */
#include "conf.h"

KNOWN long sw(unsigned int op, long v)
{
	switch (op) {
	case 0: return v + 1;
	case 1: return v * 3;
	case 2: return v - 7;
	case 3: return v ^ 0x55;
	case 4: return v << 1;
	case 5: return v >> 1;
	case 6: return v | 8;
	case 7: return v & 0xfff;
	case 8: return -v;
	default: return v;
	}
}

KNOWN long interp(const unsigned char *code)
{
	static void *ops[] = { &&inc, &&dbl, &&dec, &&end };
	long acc = 1;

	goto *ops[*code++];
inc:
	acc++;
	goto *ops[*code++];
dbl:
	acc *= 2;
	goto *ops[*code++];
dec:
	acc--;
	goto *ops[*code++];
end:
	return acc;
}

int main(void)
{
	static const unsigned char prog[] = { 0, 1, 0, 1, 2, 1, 0, 0, 1, 2, 3 };
	long v = 1;
	unsigned int i;

	for (i = 0; i < 50; i++)
		v = sw((i * 7) % 11, v) & 0xffff;
	for (i = 0; i < 10; i++)
		v += interp(prog);
	say("switch\n");
	return v == 0;
}
