/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itype.h - the simulator's small catalog of GPU instance types
 *
 * EC2 counts On-Demand quotas in vCPUs per "instance bucket": every G and VT
 * family shares the G/VT bucket, every P family the P bucket.  The simulator
 * needs only the vCPU count and the bucket of the types a scenario names.
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
};

/* RET BORROWED static entry for [name], or NULL when not in the catalog. */
const struct gb_itype *gb_itype_find(const char *name);

/* RET the quota name of [b] for messages ("G and VT"). */
const char *gb_itype_bucket_name(enum gb_itype_bucket b);

#endif /* GB_CLOUDSIM_ITYPE_H */
