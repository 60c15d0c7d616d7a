/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regions.c - public AWS regions and their coordinates; great-circle distance
 *
 * The coordinates are the ancestor's table (approximate city of each
 * region), so that distance orderings match it; see
 * shared/research/seed-and-protocols.md section 1.9.  The China and
 * GovCloud regions were added after it.  Which partition (and so which
 * endpoint and credentials) a region belongs to is gb_partition.h's.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "conf_int.h"

/* One X-macro row per region: name, latitude, longitude (city). */
#define GB_REGION_MAP(XX) \
	XX("ap-southeast-1", 1.35, 103.82) /* Singapore */ \
	XX("ap-southeast-2", -33.87, 151.21) /* Sydney */ \
	XX("ap-southeast-3", -6.21, 106.85) /* Jakarta */ \
	XX("ap-southeast-4", -37.81, 144.96) /* Melbourne */ \
	XX("ap-southeast-5", 3.14, 101.69) /* Kuala Lumpur */ \
	XX("ap-southeast-6", -36.85, 174.76) /* Auckland */ \
	XX("ap-southeast-7", 13.76, 100.50) /* Bangkok */ \
	XX("ap-south-1", 19.08, 72.88) /* Mumbai */ \
	XX("ap-south-2", 17.39, 78.49) /* Hyderabad */ \
	XX("ap-northeast-1", 35.68, 139.69) /* Tokyo */ \
	XX("ap-northeast-2", 37.57, 126.98) /* Seoul */ \
	XX("ap-northeast-3", 34.69, 135.50) /* Osaka */ \
	XX("ap-east-1", 22.32, 114.17) /* Hong Kong */ \
	XX("ap-east-2", 25.03, 121.57) /* Taipei */ \
	XX("af-south-1", -33.93, 18.42) /* Cape Town */ \
	XX("ca-central-1", 45.50, -73.57) /* Montreal */ \
	XX("il-central-1", 32.07, 34.78) /* Tel Aviv */ \
	XX("us-east-1", 39.05, -77.47) /* N. Virginia */ \
	XX("us-east-2", 39.96, -83.00) /* Ohio */ \
	XX("us-west-1", 37.35, -121.96) /* N. California */ \
	XX("us-west-2", 45.59, -122.60) /* Oregon */ \
	XX("eu-west-1", 53.35, -6.26) /* Dublin */ \
	XX("eu-west-2", 51.51, -0.13) /* London */ \
	XX("eu-west-3", 48.86, 2.35) /* Paris */ \
	XX("eu-central-1", 50.11, 8.68) /* Frankfurt */ \
	XX("eu-central-2", 47.37, 8.54) /* Zurich */ \
	XX("eu-north-1", 59.33, 18.07) /* Stockholm */ \
	XX("eu-south-1", 45.46, 9.19) /* Milan */ \
	XX("eu-south-2", 40.42, -3.70) /* Madrid */ \
	XX("me-south-1", 26.07, 50.56) /* Bahrain */ \
	XX("me-central-1", 24.45, 54.65) /* Abu Dhabi */ \
	XX("sa-east-1", -23.55, -46.63) /* Sao Paulo */ \
	XX("ca-west-1", 51.04, -114.07) /* Calgary */ \
	XX("mx-central-1", 19.43, -99.13) /* Mexico City */ \
	/* partition aws-cn (ec2.REGION.amazonaws.com.cn, gb_partition.h) */ \
	XX("cn-north-1", 39.90, 116.40) /* Beijing */ \
	XX("cn-northwest-1", 37.50, 105.19) /* Ningxia (Zhongwei) */ \
	/* partition aws-us-gov: AWS names only the part of the country */ \
	XX("us-gov-west-1", 45.52, -122.68) /* north-west: Portland */ \
	XX("us-gov-east-1", 39.96, -83.00) /* east: Columbus */ \
	/* End of GB_REGION_MAP */

struct region_coord {
	const char *name;
	double lat, lon;
};

static const struct region_coord coords[] = {
#define COORD_(name, lat, lon) { name, lat, lon },
	GB_REGION_MAP(COORD_)
#undef COORD_
};

static const char *const names[] = {
#define NAME_(name, lat, lon) name,
	GB_REGION_MAP(NAME_)
#undef NAME_
	NULL
};

bool gb_region_coords(const char *region, double *lat, double *lon)
{
	for (size_t i = 0; region && i < GB_ARRAY_LEN(coords); i++) {
		if (strcmp(coords[i].name, region) != 0)
			continue;
		if (lat)
			*lat = coords[i].lat;
		if (lon)
			*lon = coords[i].lon;
		return true;
	}
	return false;
}

const char *const *gb_region_names(void)
{
	return names;
}

/* Haversine, R = 6371 km, as the ancestor's region_order.py. */
double gb_region_distance_km(double lat1, double lon1, double lat2, double lon2)
{
	const double r = 6371.0, rad = M_PI / 180.0;
	double dlat = (lat2 - lat1) * rad, dlon = (lon2 - lon1) * rad;
	double a = sin(dlat / 2) * sin(dlat / 2) +
		   cos(lat1 * rad) * cos(lat2 * rad) * sin(dlon / 2) * sin(dlon / 2);

	return 2 * r * atan2(sqrt(a), sqrt(1 - a));
}
