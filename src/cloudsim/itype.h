/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itype.h - the instance types of the simulator: figures and quota bucket
 *
 * EC2 counts On-Demand quotas in vCPUs per "instance bucket": every G and VT
 * family shares the G/VT bucket, every P family the P bucket.  The types and
 * their figures (vCPUs, memory, GPUs, EFA, network cards, placement) come
 * from libconf's catalog (gb_catalog_all), the one list the product uses;
 * the bucket is derived from the family.  p4d.24xlarge and p5.48xlarge are
 * known for the P bucket even while the catalog lacks them (vCPUs and
 * architecture only: DescribeInstanceTypes does not describe them); once
 * the catalog has a type, its entry is the one used.
 */
#ifndef GB_CLOUDSIM_ITYPE_H
#define GB_CLOUDSIM_ITYPE_H

#include <stddef.h>

struct gb_instance_type;

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
	const struct gb_instance_type *ct;	/* the catalog's entry; NULL: an extra */
};

/* RET BORROWED entry for [name] (stable until gb_itype_catalog_set), or NULL. */
const struct gb_itype *gb_itype_find(const char *name);

/* RET BORROWED every known type, in catalog order (extras last); *n set. */
const struct gb_itype *gb_itype_all(size_t *n);

/* RET the quota name of [b] for messages ("G and VT"). */
const char *gb_itype_bucket_name(enum gb_itype_bucket b);

/* RET the bucket of a family: "p*" is P, everything else (G, VT) G. */
enum gb_itype_bucket gb_itype_bucket_of(const char *family);

/*
 * RET EC2's GPU name (GpuInfo.Gpus.Name, "H100") for a Slurm gres type
 * ("h100"), BORROWED; unknown names are written upper case into [buf].
 */
const char *gb_itype_gpu_name(const char *gres, char *buf, size_t n);

/*
 * Tests: use the [n] entries of [v] (BORROWED, must outlive every use)
 * instead of libconf's catalog; NULL: the catalog again.  Call before any
 * scenario is parsed: every gb_itype pointer given out before is invalid.
 */
void gb_itype_catalog_set(const struct gb_instance_type *v, size_t n);

#endif /* GB_CLOUDSIM_ITYPE_H */
