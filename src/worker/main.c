/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburst-worker: drains the request queue (started detached by
 * gpuburst-resume, -suspend and -resume-fail)
 */
#include "config.h"

#include "gb_worker.h"

int main(int argc, char **argv)
{
	return gb_worker_main(argc, argv);
}
