/*
 * units.h: the caller's units and the engine's float units.
 *
 * The caller narrows its values X to the float32 buffer the engine reads as
 * x = float((X - shift) * 2^e), one fp64 shift per column and one power-of-
 * two scale for all columns (pgkm_options.shift, scale_log2). The scale
 * changes no distance order and the float arithmetic is invariant under it,
 * so the engine works in x's units throughout and converts only at the
 * boundary: given centroids in, centroids, distances and inertia out, in
 * fp64. An output beyond double's range is an error (PGKM_ERR_RANGE).
 */
#ifndef PGKM_UNITS_H
#define PGKM_UNITS_H

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace pgkm
{

class ThreadPool;

/*
 * The largest |x| the float32 kernels take for d features: every float
 * value they form (sum of d squared differences, ||c||^2 - 2 x.c on
 * centred data) stays below 2^120, far from float overflow (2^128).
 */
double		max_safe_abs(int32_t d);

class Units
{
public:
	/* shift: d values or nullptr (all 0); throws EngineError on a bad transform. */
	Units(const double *shift, int32_t scale_log2, int32_t d);

	bool		identity() const { return identity_; }
	/* Whether distances are the same in both units (no scale, whatever the shift). */
	bool		identity_distances() const { return e_ == 0; }
	/* A coordinate in the caller's units to the engine's, in fp64 (may be +-inf). */
	double		to_engine(double v, int32_t j) const;
	/* to_engine rounded to float as the buffer holds it (not rounded where float overflows). */
	double		to_buffer(double v, int32_t j) const;
	/* Engine units to the caller's: a coordinate, a distance, a squared distance. */
	double		coordinate(double v, int32_t j) const;
	double		distance(double v) const;
	double		squared(double v) const;

private:
	std::vector<double> shift_;
	int32_t		e_;
	bool		identity_;
	/* 2^-e and 2^-2e where they are normal doubles (0: ldexp): a product by them rounds as ldexp */
	double		inv_scale_ = 0, inv_scale2_ = 0;
};

/*
 * A finished run's results into the caller's units, in fp64, in place:
 * squared distances dist (n of them) become Euclidean distances, the sums of
 * squares (cluster_inertia, inertia) and the coordinates (each k x d) are
 * converted; scaled_distances false keeps distances and sums as they are
 * (kernel k-means' feature-space ones, which the scale does not change).
 * A value beyond double's range throws EngineError(PGKM_ERR_RANGE). The
 * distances are converted on pool's threads when given (a few ms a million
 * rows on one; the same bits either way).
 */
void		results_to_callers_units(const Units &u, int32_t d, bool scaled_distances,
									 double *dist, int64_t n,
									 std::vector<double> &cluster_inertia, double &inertia,
									 std::initializer_list<std::vector<double> *> coordinates,
									 ThreadPool *pool = nullptr);

}							/* namespace pgkm */

#endif							/* PGKM_UNITS_H */
