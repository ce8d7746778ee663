/*
 * centroid_geometry.h: what the pruned assignment methods derive from the
 * centroids each time they change: how far each moved since the pass the
 * bounds refer to (drift), centred float copies (row-major, transposed in
 * blocks of 16 in a method-chosen order, and in the panels of Lloyd's tiled
 * kernel), their float squared norms (the GEMM form's n_c), each copy's
 * rounding error, and lower bounds of the inter-centroid distances.
 * exact_bounds.h gives the rounding rules; every value here is a rigorous
 * bound.
 */
#ifndef PGKM_CENTROID_GEOMETRY_H
#define PGKM_CENTROID_GEOMETRY_H

#include "argmin_kernels.h"
#include "exact_bounds.h"
#include "float_kernels.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace pgkm
{

class ThreadPool;

class CentroidGeometry
{
public:
	CentroidGeometry(int32_t d, int32_t kmax, const double *mean);

	struct Change
	{
		bool		reset;			/* first centroids or a different k: bounds start over */
		bool		passed;			/* a pass used the previous centroids (bounds refer to them) */
	};

	/*
	 * New centroids (k x d). Drift is measured from the centroids of the
	 * last pass over the rows, however many changes came in between.
	 */
	Change		set(const double *centroids, int32_t k);

	/* A pass over the rows is using the current centroids (any thread). */
	void		mark_pass() { passed_.store(true, std::memory_order_relaxed); }

	/* Block positions -> centroid (-1 = padding); identity until set. Rebuilds the blocks. */
	void		set_order(const std::vector<int32_t> &order);

	/* x' = fl32(x - m) into xc (d floats); returns e_x (exact_bounds.h point 3). */
	double		centre(const float *x, float *xc) const { double n2; return centre(x, xc, &n2); }
	/* The same, and *n2 = the fp64 sum of the squares of x' (point 6). */
	double		centre(const float *x, float *xc, double *n2) const;

	/*
	 * Lower bounds of delta(a, c) for every c, one row a at a time:
	 * row(a, lo) with lo[c] (lo[a] = 0), rows spread over the pool.
	 */
	void		icd_rows(ThreadPool *pool, const std::function<void(int32_t, const double *)> &row) const;

	const ExactMargins &margins() const { return m_; }
	const GemmMargins &gemm() const { return gm_; }
	/* Lloyd's tiled kernel and the centroids in its panels (natural order, +inf norms past k). */
	const ArgminKernel &kernel() const { return kern_; }
	const float *panels() const { return panels_.data(); }
	const float *panel_norms() const { return pnorm_.data(); }
	const float *mean() const { return meanf_.data(); }
	int32_t		d() const { return d_; }
	int32_t		k() const { return k_; }
	const double *cent() const { return cur_.data(); }
	const double *centroid(int32_t c) const { return cur_.data() + (size_t) c * d_; }
	const float *rowf(int32_t c) const { return rowf_.data() + (size_t) c * d_; }
	double		err(int32_t c) const { return err_[c]; }
	double		err_max() const { return err_max_; }
	double		drift(int32_t c) const { return drift_[c]; }
	const std::vector<double> &drifts() const { return drift_; }
	/* The largest drift among centroids other than c. */
	double		drift_max_except(int32_t c) const { return c == drift_arg_ ? drift_2nd_ : drift_max_; }
	const float *blocks() const { return blocks_.data(); }
	/* n_c by block position (+inf at padding), BLOCK per block. */
	const float *block_norms() const { return bnorm_.data(); }
	int32_t		nblocks() const { return (int32_t) (order_.size() / BLOCK); }
	const std::vector<int32_t> &order() const { return order_; }
	const std::vector<int32_t> &padding() const { return pad_; }

private:
	void		rebuild_floats();
	void		rebuild_blocks();

	int32_t		d_, kmax_, k_ = 0;
	ExactMargins m_;
	std::vector<float> meanf_;
	std::vector<double> cur_, ref_;
	std::vector<double> drift_;
	double		drift_max_ = 0, drift_2nd_ = 0;
	int32_t		drift_arg_ = -1;
	std::vector<float> rowf_;	/* k x d, centred */
	std::vector<float> cnorm_;	/* fl(||c'||^2) in float */
	GemmMargins gm_;
	const ArgminKernel &kern_;
	std::vector<float> panels_, pnorm_;
	std::vector<double> err_;	/* up(e_c + 2^-60) */
	double		err_max_ = 0;
	std::vector<int32_t> order_;
	std::vector<int32_t> pad_;	/* padding positions */
	std::vector<float> blocks_;
	std::vector<float> bnorm_;
	std::atomic<bool> passed_ {false};
};

}							/* namespace pgkm */

#endif							/* PGKM_CENTROID_GEOMETRY_H */
