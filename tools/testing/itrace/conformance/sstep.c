// SPDX-License-Identifier: GPL-2.0
/*
 * sstep: the conformance suite's ground truth.  Runs a program under
 * ptrace(PTRACE_SINGLESTEP) to its exit and writes the address of every
 * user-mode instruction of its main thread that retired, one hex address a
 * line, in order -- without anything from the trace hardware or its
 * emulator.
 *
 *   sstep -o FILE [-s ADDR] -- PROG [ARGS...]
 *                                     single-step PROG, addresses to FILE;
 *                                     -s: run at full speed to the first
 *                                     execution of ADDR (hex), step from
 *                                     there (a breakpoint: int3)
 *                                     -r: stop stepping when the function
 *                                     at ADDR returns (the stack pointer
 *                                     rises above its value at ADDR); the
 *                                     program then runs on untraced
 *   sstep -x -- PROG [ARGS...]        only exec PROG the same way (no ASLR)
 *   sstep -m DIR -- PROG...           run each PROG (no arguments) in turn,
 *                                     the same way, as a child: stdin
 *                                     /dev/null, stdout DIR/NAME.out,
 *                                     stderr DIR/NAME.err, exit status to
 *                                     DIR/NAME.rc (NAME: PROG's basename);
 *                                     exit 0 when all exited 0.  For one
 *                                     perf record of many programs.
 *
 * Both run PROG with personality(ADDR_NO_RANDOMIZE), so that a traced run
 * started with -x and a stepped run see the same addresses.
 *
 * What "retired" means here, from the stop that follows each step:
 *  - a single-step trap (SIGTRAP, si_code TRAP_TRACE or TRAP_BRKPT after a
 *    system call) or the exec SIGTRAP: the instruction stepped retired;
 *  - the SIGTRAP Linux reports on entry to a signal handler while stepping
 *    (si_code SIGTRAP, from signal_setup_done()): the instruction stepped
 *    did not run -- the signal was delivered before it, or it faulted and
 *    the fault is the signal; PT does not show it either;
 *  - a signal-delivery stop: nothing retired yet; the signal is passed on.
 * Consecutive equal addresses are written once: a REP string instruction
 * traps once per iteration but is one instruction in a PT decode.
 * A 32-bit (compat mode) program is stepped the same way: a 64-bit tracer
 * sees its registers as struct user_regs_struct too, rip and rsp holding
 * eip and esp zero-extended, and PEEKTEXT/POKETEXT work on its addresses.
 * Only the thread that execs is stepped: threads it creates are not traced
 * (no PTRACE_O_TRACECLONE), and copy_process() clears single-stepping in
 * children.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#ifndef TRAP_BRKPT
#define TRAP_BRKPT	1
#endif
#ifndef TRAP_TRACE
#define TRAP_TRACE	2
#endif

static FILE *out;
static unsigned long last_emitted = ~0UL;
static unsigned long long nr_emitted, nr_steps, nr_signals;

static void emit(unsigned long ip)
{
	if (ip == last_emitted)
		return;
	last_emitted = ip;
	nr_emitted++;
	fprintf(out, "%lx\n", ip);
}

static unsigned long get_ip(pid_t pid)
{
	errno = 0;
	return ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user_regs_struct, rip), 0);
}

static unsigned long get_sp(pid_t pid)
{
	errno = 0;
	return ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user_regs_struct, rsp), 0);
}

/* Run to the first execution of @addr with a breakpoint there. */
static int run_to(pid_t pid, unsigned long addr)
{
	unsigned long word;
	int status, sig = 0;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, addr, 0);
	if (errno || ptrace(PTRACE_POKETEXT, pid, addr, (word & ~0xffUL) | 0xcc)) {
		perror("sstep: breakpoint");
		return -1;
	}
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, 0, sig) ||
		    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
			fprintf(stderr, "sstep: never reached 0x%lx\n", addr);
			return -1;
		}
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP && get_ip(pid) == addr + 1)
			break;
		if (sig == SIGTRAP)
			sig = 0;
	}
	if (ptrace(PTRACE_POKETEXT, pid, addr, word) ||
	    ptrace(PTRACE_POKEUSER, pid, offsetof(struct user_regs_struct, rip), addr)) {
		perror("sstep: breakpoint removal");
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sstep -o FILE [-s ADDR [-r]] -- PROG [ARGS...]\n"
		"       sstep -x -- PROG [ARGS...]\n"
		"       sstep -m DIR -- PROG...\n");
	exit(2);
}

static int run(char **argv)
{
	if (personality(ADDR_NO_RANDOMIZE) < 0) {	/* (inherited: a no-op then) */
		perror("sstep: personality");
		return 127;
	}
	execvp(argv[0], argv);
	fprintf(stderr, "sstep: %s: %s\n", argv[0], strerror(errno));
	return 127;
}

/* Open @dir/@name@ext as descriptor @fd. */
static int redirect(int fd, const char *dir, const char *name, const char *ext)
{
	char path[4096];
	int f;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext);
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f < 0 || dup2(f, fd) < 0) {
		perror(path);
		return -1;
	}
	close(f);
	return 0;
}

/* sstep -m: run each program of @progs in turn, see the usage above. */
static int run_many(const char *dir, char **progs)
{
	int bad = 0;

	for (; *progs; progs++) {
		char *copy = strdup(*progs), *name = basename(copy);
		char *argv[] = { *progs, NULL };
		char path[4096];
		int status = -1;
		FILE *rc;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("sstep: fork");
			return 1;
		}
		if (!pid) {
			int in = open("/dev/null", O_RDONLY);

			if (in < 0 || dup2(in, 0) < 0 ||
			    redirect(1, dir, name, ".out") || redirect(2, dir, name, ".err"))
				_exit(127);
			if (in)
				close(in);
			_exit(run(argv));
		}
		if (waitpid(pid, &status, 0) != pid) {
			perror("sstep: waitpid");
			return 1;
		}
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		bad |= status != 0;
		snprintf(path, sizeof(path), "%s/%s.rc", dir, name);
		rc = fopen(path, "w");
		if (!rc || fprintf(rc, "%d\n", status) < 0 || fclose(rc)) {
			perror(path);
			bad = 1;
		}
		free(copy);
	}
	return bad;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	unsigned long start = 0, sp0 = 0;
	int until_ret = 0;
	unsigned long pending = 0;
	int have_pending = 0, status, sig = 0, opt, exec_only = 0;
	const char *many = NULL;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+m:o:rs:x")) != -1) {
		switch (opt) {
		case 'm':
			many = optarg;
			break;
		case 'o':
			path = optarg;
			break;
		case 'r':
			until_ret = 1;
			break;
		case 's':
			start = strtoul(optarg, NULL, 16);
			break;
		case 'x':
			exec_only = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || (!path && !exec_only && !many) || (until_ret && !start))
		usage();
	if (exec_only)
		return run(argv + optind);
	if (many)
		return run_many(many, argv + optind);

	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return 1;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	pid = fork();
	if (pid < 0) {
		perror("sstep: fork");
		return 1;
	}
	if (!pid) {
		fclose(out);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0)) {
			perror("sstep: PTRACE_TRACEME");
			_exit(127);
		}
		_exit(run(argv + optind));
	}

	/* the first stop: the exec SIGTRAP, at the program's first instruction */
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGTRAP) {
		fprintf(stderr, "sstep: %s did not stop at exec (status 0x%x)\n",
			argv[optind], status);
		return 1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	if (start && run_to(pid, start))
		return 1;
	/* at the function's first instruction: sp0 holds its return address */
	sp0 = get_sp(pid);
	pending = get_ip(pid);
	have_pending = 1;

	for (;;) {
		siginfo_t si;

		if (ptrace(PTRACE_SINGLESTEP, pid, 0, sig)) {
			perror("sstep: PTRACE_SINGLESTEP");
			return 1;
		}
		nr_steps++;
		sig = 0;
		if (waitpid(pid, &status, 0) != pid) {
			perror("sstep: waitpid");
			return 1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			/* the exit_group system call (or the fatal instruction) */
			if (have_pending && WIFEXITED(status))
				emit(pending);
			break;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) != SIGTRAP) {
			/* signal-delivery stop: deliver it on the next step */
			sig = WSTOPSIG(status);
			nr_signals++;
			continue;
		}
		if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si)) {
			perror("sstep: PTRACE_GETSIGINFO");
			return 1;
		}
		if (si.si_code == SIGTRAP) {
			/* entry to a signal handler: the stepped insn did not run */
		} else if (have_pending) {
			emit(pending);
		}
		pending = get_ip(pid);
		have_pending = 1;
		if (until_ret && get_sp(pid) > sp0) {
			/* returned: let it run to its end untraced */
			have_pending = 0;
			if (ptrace(PTRACE_DETACH, pid, 0, 0)) {
				perror("sstep: PTRACE_DETACH");
				return 1;
			}
			while (waitpid(pid, &status, 0) == pid &&
			       !WIFEXITED(status) && !WIFSIGNALED(status))
				;
			break;
		}
	}
	if (fclose(out)) {
		perror(path);
		return 1;
	}
	fprintf(stderr, "sstep: %s: %llu instructions, %llu steps, %llu signals, %s %d\n",
		argv[optind], nr_emitted, nr_steps, nr_signals,
		WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
