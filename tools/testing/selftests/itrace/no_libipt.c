// SPDX-License-Identifier: GPL-2.0
/*
 * Built in place of the tests that decode trace packets with libipt when
 * libipt-dev is not installed: they skip, the others build and run.
 */
#include "../kselftest.h"

int main(void)
{
	ksft_print_header();
	ksft_set_plan(0);
	ksft_exit_skip("libipt (libipt-dev) is not installed\n");
}
