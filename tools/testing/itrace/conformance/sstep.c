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
 *   sstep -c DIR -s ADDR [-r] -- PROG [ARGS...]
 *                                     run the window -o steps at full
 *                                     speed, when told, for perf stat
 *                                     to count (below)
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
 *
 * The summary line on stderr also counts the branch instructions among
 * them, from their opcodes (Intel SDM Vol. 2, opcode map): Jcc, JMP,
 * CALL and RET near and far, LOOP/LOOPcc, JCXZ/JECXZ/JRCXZ, IRET, INT n,
 * INT3, INTO, SYSCALL, SYSRET, SYSENTER, SYSEXIT -- what the emulated
 * CPU's "branch instructions retired" counts (its qemu/README.md).
 *
 * -c DIR: the window run at full speed instead of stepped, for a counter
 * (guest.sh: perf stat -t of the pids, its counters enabled while it
 * runs).  sstep stops PROG at START as above, writes PROG's pid to
 * DIR/pid and waits for a line on the FIFO DIR/go.  Then it lets PROG
 * run; with -r a hardware breakpoint (DR0, an instruction breakpoint: a
 * fault, nothing at it retires) stops PROG at the return address of the
 * function at START when it returns, and PROG stays stopped there.
 * sstep writes DIR/done and, with -r, waits for a second line on DIR/go,
 * then lets PROG run on to its exit.  Without -r the window ends at the
 * exit.  So the counter, enabled between "go" and "done" and disabled
 * before the second line, counts what -o would step.
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
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>

#ifndef TRAP_BRKPT
#define TRAP_BRKPT	1
#endif
#ifndef TRAP_TRACE
#define TRAP_TRACE	2
#endif
#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT	4
#endif

static FILE *out;
static unsigned long last_emitted = ~0UL;
static unsigned long long nr_emitted, nr_branches, nr_steps, nr_signals;

/*
 * Whether the instruction at @b is a branch instruction (see the top),
 * in 64-bit mode or not (@mode64: there 40H-4FH are REX prefixes, and
 * far CALL/JMP immediate and INTO do not exist).
 */
static int is_branch(const unsigned char *b, int len, int mode64)
{
	int i = 0;

	for (; i < len - 2; i++) {
		switch (b[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64:
		case 0x65: case 0x66: case 0x67: case 0xf0: case 0xf2:
		case 0xf3:
			continue;
		}
		if (mode64 && (b[i] & 0xf0) == 0x40)
			continue;
		break;
	}
	switch (b[i]) {
	case 0x70 ... 0x7f:	/* Jcc rel8 */
	case 0xe0 ... 0xe3:	/* LOOPNE, LOOPE, LOOP, JCXZ */
	case 0xe8:		/* CALL rel */
	case 0xe9: case 0xeb:	/* JMP rel */
	case 0xc2: case 0xc3:	/* RET */
	case 0xca: case 0xcb:	/* RET far */
	case 0xcc: case 0xcd:	/* INT3, INT n */
	case 0xcf:		/* IRET */
		return 1;
	case 0x9a: case 0xea:	/* CALL far, JMP far */
	case 0xce:		/* INTO */
		return !mode64;
	case 0xff:		/* CALL, CALL far, JMP, JMP far indirect */
		return ((b[i + 1] >> 3) & 7) >= 2 && ((b[i + 1] >> 3) & 7) <= 5;
	case 0x0f:
		switch (b[i + 1]) {
		case 0x80 ... 0x8f:	/* Jcc rel */
		case 0x05: case 0x07:	/* SYSCALL, SYSRET */
		case 0x34: case 0x35:	/* SYSENTER, SYSEXIT */
			return 1;
		}
	}
	return 0;
}

/*
 * Whether the instruction at @ip of @pid is a branch.  Cached: code does
 * not change under the corpus's programs, except across an exec, after
 * which the caller calls it with @pid 0 to forget all.
 */
#define BRANCH_CACHE	65536
static struct {
	unsigned long ip;
	unsigned int gen;
	unsigned char branch;
} branch_cache[BRANCH_CACHE];
static unsigned int branch_gen = 1;

static int branch_at(pid_t pid, unsigned long ip)
{
	unsigned int h = (ip ^ (ip >> 16)) % BRANCH_CACHE;
	union { long w[2]; unsigned char b[16]; } code;
	int len = 16, mode64;

	if (!pid) {
		branch_gen++;
		return 0;
	}
	if (branch_cache[h].gen == branch_gen && branch_cache[h].ip == ip)
		return branch_cache[h].branch;
	errno = 0;
	code.w[0] = ptrace(PTRACE_PEEKTEXT, pid, ip, 0);
	if (errno)
		return 0;
	code.w[1] = ptrace(PTRACE_PEEKTEXT, pid, ip + 8, 0);
	if (errno)
		len = 8;	/* the next page is not mapped */
	errno = 0;
	/* CS 0x33: 64-bit user code; 0x23: compat mode (Linux x86-64) */
	mode64 = ptrace(PTRACE_PEEKUSER, pid,
			offsetof(struct user_regs_struct, cs), 0) == 0x33;
	branch_cache[h].ip = ip;
	branch_cache[h].gen = branch_gen;
	branch_cache[h].branch = is_branch(code.b, len, mode64);
	return branch_cache[h].branch;
}

static void emit(unsigned long ip, int branch)
{
	if (ip == last_emitted)
		return;
	last_emitted = ip;
	nr_emitted++;
	nr_branches += branch;
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

/* sstep -c: the FIFO DIR/go. */
static int make_fifo(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/go", dir);
	unlink(path);
	if (mkfifo(path, 0600)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* sstep -c: wait for a line on DIR/go. */
static int wait_go(const char *dir)
{
	char path[4096], c;
	int fd;

	snprintf(path, sizeof(path), "%s/go", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	while (read(fd, &c, 1) == 1 && c != '\n')
		;
	close(fd);
	return 0;
}

/* sstep -c: write DIR/NAME holding @val. */
static int put_file(const char *dir, const char *name, long val)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%ld\n", val) < 0 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* DR0 = @addr, an instruction breakpoint, on (DR7 L0) or off. */
static int hw_breakpoint(pid_t pid, unsigned long addr, int on)
{
	if (on && ptrace(PTRACE_POKEUSER, pid,
			 offsetof(struct user, u_debugreg[0]), addr)) {
		perror("sstep: DR0");
		return -1;
	}
	if (ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]),
		   on ? 1 : 0)) {
		perror("sstep: DR7");
		return -1;
	}
	return 0;
}

/*
 * sstep -c: @pid stopped at START, the stack pointer @sp0 there.  See the
 * top: DIR/pid, "go", the window, DIR/done, (-r) "go" again, the exit.
 */
static int count_window(pid_t pid, const char *dir, int until_ret,
			unsigned long sp0, const char *prog)
{
	unsigned long ret_ip = 0;
	int status, sig = 0, in_window = 1;

	if (until_ret) {
		errno = 0;
		ret_ip = ptrace(PTRACE_PEEKDATA, pid, sp0, 0);
		if (errno || hw_breakpoint(pid, ret_ip, 1)) {
			perror("sstep: return address");
			return 1;
		}
	}
	if (put_file(dir, "pid", pid) || wait_go(dir))
		return 1;
	for (;;) {
		siginfo_t si;

		if (ptrace(PTRACE_CONT, pid, 0, sig) || waitpid(pid, &status, 0) != pid) {
			perror("sstep: PTRACE_CONT");
			return 1;
		}
		sig = 0;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status);
			nr_signals++;
			continue;
		}
		/* the exec SIGTRAP of exec, or the breakpoint */
		if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) || si.si_code != TRAP_HWBKPT)
			continue;
		if (!in_window || get_sp(pid) <= sp0 || get_ip(pid) != ret_ip) {
			fprintf(stderr, "sstep: unexpected breakpoint at 0x%lx\n", get_ip(pid));
			return 1;
		}
		/* returned: the instruction at ret_ip has not run */
		in_window = 0;
		if (put_file(dir, "done", 0) || wait_go(dir) || hw_breakpoint(pid, 0, 0))
			return 1;
	}
	if (until_ret && in_window) {
		fprintf(stderr, "sstep: %s never returned\n", prog);
		return 1;
	}
	if (in_window && put_file(dir, "done", 0))
		return 1;
	fprintf(stderr, "sstep: %s: run for a counter, %llu signals, %s %d\n", prog,
		nr_signals, WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void usage(void)
{
	fprintf(stderr, "usage: sstep -o FILE [-s ADDR [-r]] -- PROG [ARGS...]\n"
		"       sstep -x -- PROG [ARGS...]\n"
		"       sstep -c DIR -s ADDR [-r] -- PROG [ARGS...]\n"
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
	int have_pending = 0, pending_branch = 0, status, sig = 0, opt;
	int exec_only = 0;
	const char *many = NULL, *count_dir = NULL;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+c:m:o:rs:x")) != -1) {
		switch (opt) {
		case 'c':
			count_dir = optarg;
			break;
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
	if (optind >= argc || (!path && !exec_only && !many && !count_dir) ||
	    (until_ret && !start) || (count_dir && !start))
		usage();
	if (exec_only)
		return run(argv + optind);
	if (many)
		return run_many(many, argv + optind);

	if (count_dir) {
		path = "/dev/null";
		if (make_fifo(count_dir))
			return 1;
	}
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
	if (count_dir)
		return count_window(pid, count_dir, until_ret, sp0, argv[optind]);
	pending = get_ip(pid);
	pending_branch = branch_at(pid, pending);
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
				emit(pending, pending_branch);
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
			emit(pending, pending_branch);
		}
		if (si.si_code != TRAP_TRACE)
			branch_at(0, 0);	/* perhaps an exec: new code */
		pending = get_ip(pid);
		pending_branch = branch_at(pid, pending);
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
	fprintf(stderr, "sstep: %s: %llu instructions, %llu branches, %llu steps, %llu signals, %s %d\n",
		argv[optind], nr_emitted, nr_branches, nr_steps, nr_signals,
		WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
