// SPDX-License-Identifier: GPL-2.0
/*
 * The example program of Documentation/userspace-api/itrace.rst, taken
 * from the document itself at build time (see the Makefile), must build,
 * run and leave a trace that starts with a PSB: the documentation's example
 * stays in step with the kernel.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/wait.h>

/* The document's program, its main() renamed */
#define main itrace_doc_example_main
#include "doc_example.inc"
#undef main

#include "../kselftest_harness.h"

#define PT_TYPE_FILE	"/sys/bus/event_source/devices/intel_pt/type"

static const unsigned char psb[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

TEST(example_program)
{
	char trace[] = "/tmp/itrace-doc-trace.XXXXXX";
	char out[] = "/tmp/itrace-doc-out.XXXXXX";
	unsigned long long said = 0;
	unsigned char start[16];
	int tfd, ofd, status;
	struct stat st;
	FILE *f;
	pid_t pid;

	if (access(PT_TYPE_FILE, R_OK))
		SKIP(return, "no intel_pt PMU");

	tfd = mkstemp(trace);
	ASSERT_LE(0, tfd);
	ofd = mkstemp(out);
	ASSERT_LE(0, ofd);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *argv[3] = { "itrace-example", trace, NULL };

		dup2(ofd, STDOUT_FILENO);
		dup2(ofd, STDERR_FILENO);
		exit(itrace_doc_example_main(2, argv));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fscanf(f, "%llu bytes of trace", &said));
	fclose(f);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* What it says it wrote, a whole trace from its first PSB */
	ASSERT_EQ(0, fstat(tfd, &st));
	TH_LOG("%llu bytes of trace", said);
	EXPECT_LT(0, said);
	EXPECT_EQ(said, (unsigned long long)st.st_size);
	ASSERT_EQ(sizeof(start), pread(tfd, start, sizeof(start), 0));
	EXPECT_EQ(0, memcmp(start, psb, sizeof(psb)));

	close(tfd);
	close(ofd);
	unlink(trace);
	unlink(out);
}

TEST_HARNESS_MAIN
