// SPDX-License-Identifier: GPL-2.0
/*
 * A program with known branches for the emulated Branch Trace Store under
 * Linux's intel_bts driver and Debian's perf (bts.sh): no C library, no
 * dynamic linker, so every user-mode branch of the process is here.  In
 * program order its taken branches are
 *   call f; jmp (in f); jnz loop 4 times (the 5th falls through);
 *   call *%rax (g); ret (g); ret (f); syscall (write); syscall (exit).
 * bts.sh takes their addresses from the ELF (objdump).
 */
asm(".text\n"
    ".globl _start, f, g, loop, msg\n"
    "_start:\n"
    "	call f\n"
    "	mov $1, %eax\n"
    "	mov $1, %edi\n"
    "	lea msg(%rip), %rsi\n"
    "	mov $4, %edx\n"
    "	syscall\n"
    "	mov $60, %eax\n"
    "	xor %edi, %edi\n"
    "	syscall\n"
    "f:\n"
    "	jmp 1f\n"
    "	ud2\n"
    "1:	mov $5, %ecx\n"
    "loop:\n"
    "	dec %ecx\n"
    "	jnz loop\n"
    "	lea g(%rip), %rax\n"
    "	call *%rax\n"
    "	ret\n"
    "g:\n"
    "	ret\n"
    ".section .rodata\n"
    "msg:	.ascii \"bts\\n\"\n");
