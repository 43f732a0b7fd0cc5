// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/bus/event_source/devices/<pmu>/itrace/: which itrace PMU serves
 * RLIMIT_ITRACE core dumps (coredump) and with which perf_event_attr::config
 * (coredump_config).
 *
 * Needs intel_pt (the only itrace PMU of the test machine) and root; each
 * test puts back what it changed.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "itrace_test.h"

#define DEVICES		"/sys/bus/event_source/devices"
#define PT_ITRACE	DEVICES "/intel_pt/itrace"
#define COREDUMP	PT_ITRACE "/coredump"
#define CONFIG		PT_ITRACE "/coredump_config"

FIXTURE(itrace_sysfs)
{
	char	config[64];	/* coredump_config before the test */
};

FIXTURE_SETUP(itrace_sysfs)
{
	struct stat st;

	if (stat(DEVICES "/intel_pt", &st))
		SKIP(return, "no intel_pt PMU");
	if (geteuid())
		SKIP(return, "not root");
	ASSERT_EQ(0, stat(PT_ITRACE, &st)) TH_LOG("no " PT_ITRACE);
	ASSERT_EQ(0, read_file(CONFIG, self->config, sizeof(self->config)));
}

FIXTURE_TEARDOWN(itrace_sysfs)
{
	if (self->config[0])
		EXPECT_EQ(0, write_file(CONFIG, self->config));
}

/* Fresh from boot, the only itrace PMU serves core dumps with config 0. */
TEST_F(itrace_sysfs, defaults)
{
	char buf[64];

	ASSERT_EQ(0, read_file(COREDUMP, buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ("0x0\n", buf);
}

/* Only itrace PMUs have the directory. */
TEST_F(itrace_sysfs, only_itrace_pmus)
{
	struct stat st;

	EXPECT_EQ(-1, stat(DEVICES "/software/itrace", &st));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, stat(DEVICES "/cpu/itrace", &st));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(itrace_sysfs, modes)
{
	struct stat st;

	ASSERT_EQ(0, stat(COREDUMP, &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_EQ(0, stat(CONFIG, &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
}

TEST_F(itrace_sysfs, config_write_read_back)
{
	char buf[64];

	/* tsc, branch: bits every intel_pt accepts (branch with bit 0) */
	ASSERT_EQ(0, write_file(CONFIG, "0x2401"));
	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ("0x2401\n", buf);

	/* Hex without 0x, and a trailing newline as from echo */
	ASSERT_EQ(0, write_file(CONFIG, "400\n"));
	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ("0x400\n", buf);

	/* Selecting the PMU that is selected already keeps its config */
	ASSERT_EQ(0, write_file(COREDUMP, "1"));
	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ("0x400\n", buf);
	ASSERT_EQ(0, read_file(COREDUMP, buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
}

TEST_F(itrace_sysfs, coredump_junk_einval)
{
	static const char * const junk[] = {
		"0", "2", "-1", "yes", "1x", "", "4294967296", "0x100000001",
	};
	char buf[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(junk); i++) {
		int ret = write_file(COREDUMP, junk[i]);

		/* an empty write() never reaches the file */
		if (!junk[i][0]) {
			EXPECT_EQ(0, ret);
			continue;
		}
		EXPECT_EQ(-EINVAL, ret) TH_LOG("coredump <- \"%s\"", junk[i]);
	}
	ASSERT_EQ(0, read_file(COREDUMP, buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
}

TEST_F(itrace_sysfs, config_junk_einval)
{
	static const char * const junk[] = {
		"zz", "0x", "1 2", "0x10000000000000000",
		/* bits intel_pt does not accept (reserved in RTIT_CTL) */
		"0x8000000000000000", "0x1000000000",
		/* branch without bit 0 (intel_pt's pt_event_valid()) */
		"0x2000",
	};
	char buf[64];
	size_t i;

	ASSERT_EQ(0, write_file(CONFIG, "0x400"));
	for (i = 0; i < ARRAY_SIZE(junk); i++) {
		int ret = write_file(CONFIG, junk[i]);

		EXPECT_EQ(-EINVAL, ret) TH_LOG("coredump_config <- \"%s\"",
					       junk[i]);
	}
	/* Nothing changed */
	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ("0x400\n", buf);
}

/*
 * The check event of a coredump_config write yields its PMU, as core-dump
 * events do: neither the writer's own intel_pt event nor a CPU-wide one
 * makes the write fail with EBUSY.
 */
TEST_F(itrace_sysfs, config_write_beside_pt_events)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.disabled = 1,
		.exclude_kernel = 1,
	};
	char buf[64];
	int fd;

	attr.type = pt_type();
	fd = sys_perf_event_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("own intel_pt event: %s", strerror(errno));
	EXPECT_EQ(0, write_file(CONFIG, "0x400"));
	close(fd);

	fd = sys_perf_event_open(&attr, -1, 0, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("CPU-wide intel_pt event: %s", strerror(errno));
	EXPECT_EQ(0, write_file(CONFIG, "0x2001"));
	close(fd);

	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ("0x2001\n", buf);
}

/*
 * Only root writes: the file mode stops others at open() (EACCES), and the
 * store checks CAP_SYS_ADMIN of the writer (EPERM) for a file root opened
 * and handed down.
 */
TEST_F(itrace_sysfs, non_root_write)
{
	int cfd, dfd, status;
	char buf[64];
	pid_t pid;

	cfd = open(CONFIG, O_WRONLY);
	ASSERT_LE(0, cfd);
	dfd = open(COREDUMP, O_WRONLY);
	ASSERT_LE(0, dfd);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int bad = 0;

		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		if (open(CONFIG, O_WRONLY) != -1 || errno != EACCES)
			bad |= 1;
		if (open(COREDUMP, O_WRONLY) != -1 || errno != EACCES)
			bad |= 2;
		if (write(cfd, "0x400", 5) != -1 || errno != EPERM)
			bad |= 4;
		if (write(dfd, "1", 1) != -1 || errno != EPERM)
			bad |= 8;
		/* Reading is for everybody */
		if (read_file(COREDUMP, buf, sizeof(buf)) ||
		    strcmp(buf, "1\n"))
			bad |= 16;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("failed checks %#x (1, 2: open; 4, 8: write; 16: read)",
		       WEXITSTATUS(status));
	close(cfd);
	close(dfd);

	ASSERT_EQ(0, read_file(CONFIG, buf, sizeof(buf)));
	EXPECT_STREQ(self->config, buf);
}

TEST_HARNESS_MAIN
