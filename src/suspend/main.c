/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburst-suspend: SuspendProgram
 */
#include "config.h"

#include "gb_prog.h"

int main(int argc, char **argv)
{
	return gb_prog_main(GB_PROG_SUSPEND, argc, argv);
}
