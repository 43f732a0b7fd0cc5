/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Known code for the decoder unit test (tests/itrace-test.c encodes the
 * trace of one run of it by hand):
 *   _start: calls f three times in a loop (jnz taken 2, not taken 1),
 *           calls g through a register, then exits with a syscall;
 *   g:      jz taken once (ecx is 0), so the nop is skipped.
 */
	.text
	.globl	_start
	.type	_start, @function
_start:
	mov	$3, %ecx
1:	call	f
	dec	%ecx
	jnz	1b
	lea	g(%rip), %rax
	call	*%rax
	mov	$60, %eax
	xor	%edi, %edi
	syscall
	.size	_start, . - _start

	.globl	f
	.type	f, @function
f:	ret
	.size	f, . - f

	.globl	g
	.type	g, @function
g:	test	%ecx, %ecx
	jz	2f
	nop
2:	ret
	.size	g, . - g
	.section .note.GNU-stack, "", @progbits
