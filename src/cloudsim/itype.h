/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itype.h - the instance types of the simulator: vCPUs and quota bucket
 *
 * EC2 counts On-Demand quotas in vCPUs per "instance bucket": every G and VT
 * family shares the G/VT bucket, every P family the P bucket.  The G types
 * and their vCPUs come from libconf's catalog (gb_catalog_find), the one
 * list the product uses; p4d.24xlarge and p5.48xlarge are added for the P
 * bucket.
 */
#ifndef GB_CLOUDSIM_ITYPE_H
#define GB_CLOUDSIM_ITYPE_H

enum gb_itype_bucket {
	GB_ITYPE_BUCKET_G = 0,	/* "Running On-Demand G and VT instances" */
	GB_ITYPE_BUCKET_P,	/* "Running On-Demand P instances" */
	GB_ITYPE_BUCKET_COUNT
};

struct gb_itype {
	const char *name;	/* "g5.xlarge" */
	int vcpus;
	enum gb_itype_bucket bucket;
	const char *arch;	/* "x86_64" | "arm64" */
};

/* RET BORROWED entry for [name] (stable for the process), or NULL. */
const struct gb_itype *gb_itype_find(const char *name);

/* RET the quota name of [b] for messages ("G and VT"). */
const char *gb_itype_bucket_name(enum gb_itype_bucket b);

#endif /* GB_CLOUDSIM_ITYPE_H */
