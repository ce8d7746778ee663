/*
 * bounded_assign.h: the common half of the pruned assignment methods
 * (hamerly_assign.cpp, elkan_assign.cpp, yinyang_assign.cpp,
 * sort_assign.cpp). Each returns exactly Lloyd's label (exact_bounds.h) and
 * differs only in the bounds it keeps to skip distance computations.
 *
 * What this base does: keeps the centroid geometry (drift, float copies),
 * the labels of the last pass, the per-worker scratch and the counts; runs
 * the first pass after a reset (a full search that initialises every row's
 * bounds, by default row by row) and dense passes (Lloyd's tiled kernel
 * over every row, its best and runner-up values turned into an upper bound
 * and one lower bound for all other centroids, exact_bounds.h point 6:
 * what 'auto' runs while pruning does not pay, so that switching back
 * costs nothing); and offers the per-row pieces the methods share (centre
 * a row, one distance as an interval, a full search, near-tie resolution).
 *
 * The per-row state (labels, bounds) is allocated unwritten (row_array.h):
 * the first pass after a reset, fresh or dense, writes every row's before
 * any is read, and a method made but never run costs no page faults.
 */
#ifndef PGKM_BOUNDED_ASSIGN_H
#define PGKM_BOUNDED_ASSIGN_H

#include "centroid_geometry.h"
#include "cpu_assign.h"
#include "row_array.h"

#include <limits>
#include <vector>

namespace pgkm
{

class ThreadPool;

class BoundedAssign : public CpuAssign
{
public:
	BoundedAssign(int32_t method, const float *x, int64_t n, int32_t d, int32_t kmax,
				  const double *mean, ThreadPool *pool);
	void		set_centroids(const double *centroids, int32_t k) override;
	void		nearest(int64_t r0, int64_t r1, int worker, int32_t *out) override;
	AssignCounts take_counts(int64_t moved) override;
	/* The next set_centroids starts the bounds over (after another method ran). */
	void		restart() { restart_ = true; }
	/*
	 * Passes from now on are dense (true: every row through Lloyd's tiled
	 * kernel, bounds recorded) or pruned (false). Between passes only.
	 */
	void		set_dense(bool on) { dense_ = on; }
	/*
	 * *kept: rows of the last pass that the method's O(1) test would let keep
	 * their label (counted in dense passes on every 8th row, in pruned
	 * passes on all), and the rows tested; read them before take_counts,
	 * which resets them.
	 */
	void		keep_counts(int64_t *kept, int64_t *tested) const;

protected:
	struct Scratch
	{
		std::vector<float> xc;	/* the centred row */
		double		ex = 0;		/* its rounding error e_x */
		std::vector<float> F;	/* float squared distances by block position */
		NearTies	nt;
		bool		slow = false;	/* the last full search had to use E for all */
		int64_t		distances = 0, exact = 0;
		int64_t		kept = 0, tested = 0;	/* keep_counts */
		/* dense_search: the tiled kernel's scratch and per-row outputs */
		std::vector<float> xt, partial, best, second, x2;
		std::vector<int32_t> idx;
		std::vector<double> hi, lo;
		std::vector<int32_t> lab;
		std::vector<float> rows;	/* gathered rows */
		std::vector<int64_t> ids;
	};

	/*
	 * Derived data for new centroids (after the geometry); reset: bounds
	 * start over; passed: a pass used the previous centroids.
	 */
	virtual void on_centroids(bool reset, bool passed) = 0;
	/* After a full search of row i gave label b: store its bounds (s.F by position). */
	virtual void init_bounds(int64_t i, int32_t b, double hi, Scratch &s) = 0;
	/*
	 * After a dense search of row i gave label b: hi >= its distance to b,
	 * lo <= its distance to every other centroid.
	 */
	virtual void init_dense(int64_t i, int32_t b, double hi, double lo) = 0;
	/* The method's O(1) test on row i's bounds as they stand before this pass. */
	virtual bool would_keep_row(int64_t i) const = 0;
	/* The bounded pass over rows r0..r1-1 (labels in label_ are the previous ones). */
	virtual void assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) = 0;
	/* The first pass after a reset: every row searched, its bounds initialised. */
	virtual void fresh_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out);

	/*
	 * Labels and bounds of m rows by Lloyd's tiled kernel: xs holds the
	 * rows (m x d), ids their row numbers; into s.lab, s.hi, s.lo. A row
	 * whose runner-up is not proven worse than its best is searched again
	 * exactly (full_search).
	 */
	void		dense_search(const float *xs, const int64_t *ids, int64_t m, Scratch &s);
	/* A dense pass over rows r0..r1-1: labels, init_dense. */
	void		dense_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out);

	/* Centres row i into s.xc and sets s.ex. */
	void		centre(int64_t i, Scratch &s) const { s.ex = geo_.centre(x_ + i * d_, s.xc.data()); }
	/* The error term of a float distance of the centred row to centroid c. */
	double		err(const Scratch &s, int32_t c) const { return up(s.ex + geo_.err(c)); }
	/* One float distance of the centred row to centroid c. */
	float		dist(Scratch &s, int32_t c) const
	{
		s.distances++;
		return fsqdist(s.xc.data(), geo_.rowf(c), d_);
	}
	/* Records centroid c with float distance F in the near-tie set, if it may still win. */
	void		consider(Scratch &s, int32_t c, float F, float &cut) const
	{
		if (F > cut)
			return;
		const ExactMargins &m = geo_.margins();
		const double e = err(s, c);
		s.nt.add(c, m.lo_float(F, e), m.hi_float(F, e), m);
		cut = m.f_cut(s.nt.best_hi(), up(s.ex + geo_.err_max()));
	}
	/* The cut for the current best (see ExactMargins::f_cut). */
	float		cut(const Scratch &s) const
	{
		return geo_.margins().f_cut(s.nt.best_hi(), up(s.ex + geo_.err_max()));
	}
	/*
	 * A lower bound of delta(x, c) for every c whose float distance is >= F;
	 * F = +inf stands for "no such c" (min_f_except of an empty set), so the
	 * callers turn a non-finite F of a real centroid into 0 first.
	 */
	double		lo_any(const Scratch &s, float F) const
	{
		if (F == std::numeric_limits<float>::infinity())
			return std::numeric_limits<double>::infinity();
		return geo_.margins().lo_float(F, up(s.ex + geo_.err_max()));
	}
	/* Every centroid against the centred row: the label, hi its upper bound; s.F by position. */
	int32_t		full_search(int64_t i, Scratch &s, double *hi);
	/* Resolves s.nt into the exact label of row i. */
	int32_t		resolve(int64_t i, Scratch &s, double *hi) const
	{
		return s.nt.resolve(x_ + i * d_, geo_.cent(), geo_.margins(), hi, &s.exact);
	}
	/* The smallest F over block positions p0..p1-1 other than centroid `not_c`; +inf if none. */
	float		min_f_except(const Scratch &s, int32_t p0, int32_t p1, int32_t not_c) const;

	int32_t		method_;		/* pgkm_method */
	const float *x_;
	int64_t		n_;
	int32_t		d_;
	int32_t		kmax_;
	ThreadPool *pool_;
	CentroidGeometry geo_;
	RowArray<int32_t> label_;	/* of the last pass */
	bool		fresh_ = true;	/* the next pass initialises every row's bounds */
	bool		restart_ = false;
	bool		dense_ = false;
	std::vector<Scratch> scratch_;
};

/* The bounded methods (pgkm_method values other than lloyd and auto). */
std::unique_ptr<BoundedAssign> make_bounded_assign(int32_t method, const float *x, int64_t n,
												   int32_t d, int32_t kmax, const double *mean,
												   ThreadPool *pool);
std::unique_ptr<BoundedAssign> make_hamerly_assign(const float *x, int64_t n, int32_t d, int32_t kmax,
											   const double *mean, ThreadPool *pool);
std::unique_ptr<BoundedAssign> make_elkan_assign(const float *x, int64_t n, int32_t d, int32_t kmax,
											 const double *mean, ThreadPool *pool);
std::unique_ptr<BoundedAssign> make_yinyang_assign(const float *x, int64_t n, int32_t d, int32_t kmax,
											   const double *mean, ThreadPool *pool);
std::unique_ptr<BoundedAssign> make_sort_assign(const float *x, int64_t n, int32_t d, int32_t kmax,
											const double *mean, ThreadPool *pool);

/* Yinyang's group count for k centroids (groups of at most BLOCK). */
int32_t		yinyang_groups(int32_t k);

/*
 * Bytes a method keeps for n rows and k centroids on top of Lloyd's (0 for
 * Lloyd; AUTO must be resolved first, auto_first_method).
 */
double		method_state_bytes(int32_t method, int64_t n, int32_t d, int32_t k, int threads);

}							/* namespace pgkm */

#endif							/* PGKM_BOUNDED_ASSIGN_H */
