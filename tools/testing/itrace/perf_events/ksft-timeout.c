// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD=ksft-timeout.so KSFT_TIMEOUT=SECONDS kselftest-binary
 *
 * A longer per-test timeout for an unchanged kselftest binary.  The
 * harness (tools/testing/selftests/kselftest_harness.h) waits for each
 * test with alarm(t->timeout), TEST_TIMEOUT_DEFAULT (30 s) unless the
 * test's source says otherwise, and kills the test when it fires; a test
 * written for hardware may need longer in an emulator.  This alarm()
 * arms at least KSFT_TIMEOUT seconds (alarm(0), the disarm, stays as it
 * is).  Nothing else in a kselftest binary calls alarm().
 */
#include <stdlib.h>
#include <sys/time.h>

unsigned int alarm(unsigned int seconds)
{
	const char *env = getenv("KSFT_TIMEOUT");
	unsigned long min = env ? strtoul(env, NULL, 10) : 0;
	struct itimerval it = { 0 }, old;

	if (seconds && seconds < min)
		seconds = min;
	it.it_value.tv_sec = seconds;
	if (setitimer(ITIMER_REAL, &it, &old))
		return 0;
	return old.it_value.tv_sec + (old.it_value.tv_usec >= 500000);
}
