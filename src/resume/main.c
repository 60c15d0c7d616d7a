/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburst-resume: ResumeProgram
 */
#include "config.h"

#include "gb_prog.h"

int main(int argc, char **argv)
{
	return gb_prog_main(GB_PROG_RESUME, argc, argv);
}
