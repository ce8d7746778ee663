/*
 * kmeanspp_groups.h: greedy k-means++'s candidate evaluation over rows
 * grouped by their closest center (kmeanspp_cpu.cpp drives it).
 *
 * A group whose every row the triangle inequality shields from a candidate
 * (candidate-center distance^2 >= thr x the group's largest D^2) is skipped
 * for that candidate as a whole, so a step costs O(k) plus the rows that a
 * candidate may reach. Each candidate's potential is the current one less
 * its gain, summed over those rows only and in any order; the gains come
 * with error bounds against the sums of kmeanspp_cpu's row-order pass
 * (float distances in any order, the summation orders of both), and a
 * candidate is picked only when the bounds prove that the row-order pass
 * picks it too. Otherwise evaluate() says so and the caller runs that pass.
 * Either way the centers, the D^2 and the potential are bit for bit those of
 * the row-order pass.
 */
#ifndef PGKM_KMEANSPP_GROUPS_H
#define PGKM_KMEANSPP_GROUPS_H

#include "per_worker.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pgkm
{

class ThreadPool;

/*
 * The skip test's limit for a row whose D^2 is d2: a candidate whose
 * distance^2 to the row's center is at least this cannot lower D^2 (thr:
 * kmeanspp_cpu's, with the float sums' error margins). One function, so the
 * row-order pass and the groups apply the same operations.
 */
inline double
kpp_skip_limit(double thr, double d2)
{
	return thr * d2 + 1e-30;
}

/* evaluate()'s answer when the bounds do not separate the best candidate from another. */
constexpr int KPP_UNDECIDED = -1;

class KppGroups
{
public:
	/* Usable for n < 2^31 rows (int32 row ids) and d <= 2^16 (the float error bound). */
	static bool usable(int64_t n, int32_t d) { return n < (int64_t) 1 << 31 && d >= 1 && d <= 1 << 16; }

	KppGroups(const float *x, int64_t n, int32_t d, int32_t k, const double *weights, ThreadPool *pool);

	/* Every row in center 0's group; closest: the D^2 to center 0; owner: each row's center. */
	void		start(const float *closest, const int32_t *owner);

	/* Groups per reach() block. */
	static constexpr int32_t REACH_BLOCK = 64;

	/*
	 * Which candidates may reach the groups of block b (groups b x
	 * REACH_BLOCK on; group c: center c's rows). Blocks may run at once;
	 * every block of the groups so far before plan(). rep[t]: the first
	 * candidate bitwise equal to t; cc[c * tp + t]: the candidate-center
	 * distances^2 that the row skip test compares with thr x D^2 (as
	 * kmeanspp_cpu's).
	 */
	void		reach(int64_t b, const int *rep, int trials, const float *cc, int32_t tp, double thr);

	/*
	 * The groups that some candidate may reach, as evaluate()'s work, when
	 * they hold at most max_rows rows (true); otherwise false, and the
	 * caller runs the row-order pass.
	 */
	bool		plan(int64_t max_rows);

	/*
	 * After plan(): the candidate that kmeanspp_cpu's row-order pass picks,
	 * or KPP_UNDECIDED. cand: trials x d float rows; pot: the current
	 * potential, summed by chunks of chunk_rows rows in nchunks chunks.
	 */
	int			evaluate(const float *cand, const int *rep, int trials, const float *cc, int32_t tp,
						 double thr, const float *closest, double pot, int64_t chunk_rows,
						 int64_t nchunks);

	/*
	 * After evaluate() (or the row-order pass in its place): the winner
	 * becomes center 'center': the rows it is closer to take it (closest,
	 * owner) and are noted as moved. cc, tp, thr: as for plan().
	 */
	void		take_near(int best, const float *winner, int32_t center, const float *cc, int32_t tp,
						  double thr, float *closest, int32_t *owner);

	/*
	 * A row-order update instead (the groups are rebuilt from owner when
	 * next needed): begin_rows(), then note_row() for every row with its
	 * final D^2 and center, then end_rows() with the new center.
	 */
	void		begin_rows(int32_t center);
	void		note_row(int worker, int32_t owner, float closest)
	{
		float	   *m = &wmax_[(size_t) worker * stride_ + owner];
		*m = std::max(*m, closest);
		wsize_[(size_t) worker * stride_ + owner]++;
	}
	void		end_rows(int32_t center);

	/*
	 * The moved rows form the new center's group and leave their old ones.
	 * dirty: the sorted chunks (chunk_rows rows each) whose D^2 changed.
	 */
	void		regroup(int32_t center, const float *closest, const int32_t *owner, int64_t chunk_rows,
						std::vector<int64_t> *dirty);

private:
	void		clear_moved();

	struct Item
	{
		int32_t		group;
		int64_t		begin, end;	/* positions in the group's member list */
		uint32_t	mask;		/* candidates not ruled out for the whole group */
	};

	/* body(item) for the items of a parallel chunk (several small groups per chunk). */
	template <typename Body> void for_items(const Body &body);
	/* body(q, worker) for q < count: on the calling thread when work (rows or pairs) is small, else on the pool. */
	template <typename Body> void for_each(int64_t count, int64_t work, const Body &body);

	const float *x_;
	int64_t		n_;
	int32_t		d_;
	const double *weights_;
	ThreadPool *pool_;
	int			nw_;
	const int32_t *owner_ = nullptr;
	std::vector<std::vector<int32_t>> members_;	/* rows by closest center, ascending */
	bool		lists_ = false;	/* members_ is up to date */
	std::vector<int64_t> size_;	/* rows per group */
	std::vector<float> gmax_;	/* an upper bound of the group's D^2 */
	int32_t		ngroups_ = 0;
	int64_t		stride_;		/* per-worker statistics of the row-order update: worker_stride(k) */
	std::vector<float> wmax_;
	std::vector<int64_t> wsize_;
	/* per block: reach()'s groups and their candidates (a mask), and their rows */
	struct alignas(64) Reached
	{
		std::vector<int32_t> groups;
		std::vector<uint32_t> masks;
		int64_t		rows = 0;
	};
	std::vector<Reached> reached_;
	std::vector<Item> items_;
	std::vector<size_t> chunk_items_;	/* items_[chunk_items_[c]..chunk_items_[c + 1]): chunk c */
	/* A worker's share of a step (trials <= 32: 2 + ln k). */
	struct Share
	{
		double		gain[32], err[32];	/* per candidate */
		std::vector<int64_t> near;	/* row * 32 + candidate, pairs that may gain; -1: out of room */
		std::vector<int32_t> moved, moved_from;	/* rows taken by the winner, their old owner */
	};
	PerWorker<Share> share_;
	size_t		room_;			/* near pairs a worker keeps */
};

}							/* namespace pgkm */

#endif							/* PGKM_KMEANSPP_GROUPS_H */
