// SPDX-License-Identifier: GPL-2.0
/*
 * System calls through libc and through syscall(2): each is one SYSCALL
 * instruction the user-only trace leaves with TIP.PGD and re-enters at the
 * next instruction.  Nothing whose result changes control flow from run to
 * run (no pids, times or sizes printed or compared).
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include "conf.h"

int main(void)
{
	char buf[64];
	struct utsname u;
	int p[2], fd, i, ok = 0;

	for (i = 0; i < 5; i++) {
		syscall(SYS_getppid);
		getuid();
	}
	fd = open("/dev/null", O_WRONLY);
	for (i = 0; i < 5; i++)
		ok += write(fd, "x", 1) == 1;
	close(fd);
	if (pipe(p) == 0) {
		for (i = 0; i < 3; i++) {
			ok += write(p[1], "abc", 3) == 3;
			ok += read(p[0], buf, sizeof(buf)) == 3;
		}
		close(p[0]);
		close(p[1]);
	}
	for (i = 0; i < 3; i++) {
		void *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ok += m != MAP_FAILED && munmap(m, 8192) == 0;
	}
	ok += uname(&u) == 0;
	say("syscall\n");
	return ok != 15;
}
