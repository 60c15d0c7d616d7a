/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburst-resume-fail: ResumeFailProgram
 */
#include "config.h"

#include "gb_prog.h"

int main(int argc, char **argv)
{
	return gb_prog_main(GB_PROG_RESUME_FAIL, argc, argv);
}
