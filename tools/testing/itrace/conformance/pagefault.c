// SPDX-License-Identifier: GPL-2.0
/*
 * Demand paging: touch 64 pages of fresh anonymous memory (a page fault
 * per page, invisible to user-mode flow), a copy-on-write of a private file
 * mapping, and reads of a file mapping faulted in page by page.
 */
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include "conf.h"

#define PAGES 64

int main(int argc, char **argv)
{
	char *m, *f;
	long s = 0;
	int i, fd;

	(void)argc;
	m = mmap(NULL, PAGES * 4096L, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	for (i = 0; i < PAGES; i++)
		m[i * 4096L] = (char)i;
	for (i = 0; i < PAGES; i++)
		s += m[i * 4096L];
	fd = open(argv[0], O_RDONLY);
	f = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (f == MAP_FAILED)
		return 1;
	for (i = 0; i < 4; i++)
		s += f[i * 4096 + 1];
	f[0] = 0;	/* copy on write */
	s += f[0];
	say("pagefault\n");
	return s == 0;
}
