/*
 * yinyang_groups.h: Yinyang's grouping of the centroids (yinyang_groups in
 * bounded_assign.h gives their count).
 */
#ifndef PGKM_YINYANG_GROUPS_H
#define PGKM_YINYANG_GROUPS_H

#include "centroid_geometry.h"

#include <vector>

namespace pgkm
{

/*
 * t groups of close centroids of geo, as block positions: t x BLOCK
 * centroid numbers, each group's members first (ascending), -1 after.
 */
std::vector<int32_t> yinyang_group_order(const CentroidGeometry &geo, int32_t t);

}							/* namespace pgkm */

#endif
