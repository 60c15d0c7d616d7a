/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boot.h - the boot hook: run an instance's UserData when it starts running
 *
 * With `boot: exec`, when an instance becomes running, its decoded UserData
 * is written to DIR/<instance-id>/user-data (mode 0700) and executed
 * directly with execve(2) (the kernel honours its #! line; no shell in
 * between), in a new session, stdin /dev/null, stdout and stderr appended to
 * DIR/<instance-id>/boot.log, default signal dispositions and an empty signal
 * mask, and this environment only:
 *
 *   PATH=/usr/sbin:/usr/bin:/sbin:/bin
 *   GPUBURST_SIM_INSTANCE_ID, GPUBURST_SIM_PRIVATE_IP, GPUBURST_SIM_REGION,
 *   GPUBURST_SIM_AZ, GPUBURST_SIM_INSTANCE_TYPE, and GPUBURST_SIM_TAG_<KEY>
 *   per tag (KEY upper-cased, every character other than A-Z 0-9 becoming
 *   '_'; "gpuburst:node" -> GPUBURST_SIM_TAG_GPUBURST_NODE).
 *
 * The script must start with "#!" (there is no shell to fall back to); an
 * exec failure is written to boot.log and the process exits 127.
 *
 * When the instance enters shutting-down, its boot process group gets
 * SIGTERM (terminating the instance stops, e.g., its slurmd).  Children are
 * reaped by gb_boot_reap().  gb_boot_destroy() sends SIGTERM to every group
 * still alive: the cloud goes away with its instances.
 *
 * Thread-safe (one internal mutex); never called with the sim's lock held.
 */
#ifndef GB_CLOUDSIM_BOOT_H
#define GB_CLOUDSIM_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "gb_err.h"

struct gb_sim_event;

typedef struct gb_boot gb_boot_t;

/* Create the hook; [dir] is created (0700) if missing. OUT *out NEW. */
gb_err_t gb_boot_create(const char *dir, gb_boot_t **out, gb_error_t *err);
void gb_boot_destroy(gb_boot_t *b);

/* Act on one state-change event (start, or SIGTERM the group). */
gb_err_t gb_boot_event(gb_boot_t *b, const struct gb_sim_event *ev,
		       gb_error_t *err);

/* Reap exited boot processes (non-blocking). RET how many. */
size_t gb_boot_reap(gb_boot_t *b);

/* RET the pid of [instance_id]'s boot process while alive, else 0. */
pid_t gb_boot_pid(gb_boot_t *b, const char *instance_id);

/* RET BORROWED directory of the hook. */
const char *gb_boot_dir(const gb_boot_t *b);

#endif /* GB_CLOUDSIM_BOOT_H */
