// SPDX-License-Identifier: GPL-2.0
// C++ names for the demangling test: built with gcc -x c++ (no libstdc++),
// traced on the host by ptsim; decode must show ns::twice(int).
namespace ns {
__attribute__((noinline)) int twice(int x)
{
	return 2 * x;
}
}

int main(int argc, char **argv)
{
	(void)argv;
	return ns::twice(argc) == 2 ? 0 : 1;
}
