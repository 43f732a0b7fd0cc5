// SPDX-License-Identifier: GPL-2.0
/*
 * A program of known length for the emulated CPU's performance counters
 * (pmu.sh): no C library, no dynamic linker, so every instruction of the
 * process is here.  It retires
 *   1 + 4 * PMU_LOOP_ITERS + 3 instructions, PMU_LOOP_ITERS + 1 branches:
 * _start (1), the loop body (4, one branch), the exit system call (3, the
 * SYSCALL a branch); pmu.sh computes the instruction at any position from
 * these addresses (nm: _start, loop, done).
 */
#ifndef PMU_LOOP_ITERS
#define PMU_LOOP_ITERS 5000000
#endif
#define STR(x) #x
#define XSTR(x) STR(x)

asm(".text\n"
    ".globl _start, loop, done\n"
    "_start:\n"
    "	mov $" XSTR(PMU_LOOP_ITERS) ", %ecx\n"
    "loop:\n"
    "	add $3, %rax\n"
    "	xor %rax, %rdx\n"
    "	dec %ecx\n"
    "	jnz loop\n"
    "done:\n"
    "	mov $60, %eax\n"
    "	xor %edi, %edi\n"
    "	syscall\n");
