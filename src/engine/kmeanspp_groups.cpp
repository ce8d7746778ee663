/*
 * kmeanspp_groups.cpp: greedy k-means++'s grouped candidate evaluation
 * (kmeanspp_groups.h).
 *
 * Why a pick is the row-order pass's pick (u = 2^-53, v = 2^-24):
 * - The row-order pass sums, per candidate t, the terms fl(w_i min(D_i,
 *   F_it)) (F its float distance, features in order) in chunks of
 *   chunk_rows rows, then the nchunks chunk sums: recursive sums of
 *   non-negative terms, so S_t is within eS = (chunk_rows + nchunks + 2) u
 *   (1.02) of the real sum T_t of its terms; so is the potential pot of T_P.
 *   Rows where F_it >= D_i add the potential's own term p_i = fl(w_i D_i),
 *   so T_t = T_P - Gamma_t, Gamma_t the real sum of p_i - fl(w_i F_it) over
 *   the rows where F_it < D_i.
 * - Here F'_it is the float distance summed in any order, with or without
 *   FMA: both are within gf = gamma_{d+2}(v) of the real sum of the same
 *   rounded squares (exact_bounds.h, point 3), so |F - F'| <= delta =
 *   4 (d + 2) v F' + 2^-100 for d <= 2^16. A row with F' >= D + delta has
 *   F >= D (no gain, no update); the others ("near" pairs) add p - w F'
 *   when F' < D, and w delta + 8u p to the error e_t whether or not.
 *   Rows that the skip test rules out have F >= D (kmeanspp_cpu's proof).
 *   A partial sum P' of some of F''s terms, in any order, is at most
 *   (1 + gf) of their real sum plus 2^-130, so P' > cap >= D (1 + 4 (d + 2)
 *   v) + 2^-100 >= ((1 + gf) D + 2^-129) / (1 - gf) gives F >= D too: the
 *   distance stops there (F' = +inf, not near).
 * - The gain g_t is a sum of non-negative terms in some order: within
 *   m u g_t of the real sum of the terms, m = n + workers + 8. So
 *   |Gamma_t - g_t| <= Err_t, and b is picked when for every other
 *   distinct t, (g_b - Err_b) - (g_t + Err_t) > 2 eS pot / (1 - eS) >=
 *   eS (T_t + T_b): then S_b < S_t. Bitwise equal candidates have equal
 *   sums, and the pass takes the first of them (rep).
 */
#include "kmeanspp_groups.h"
#include "internal_hooks.h"
#include "simd.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace pgkm
{

/* Member-list positions per work item. */
static constexpr int64_t KPP_GROUP_BLOCK = 2048;

/* Rows per parallel chunk of items at least (groups are small at large k: a chunk takes several). */
static constexpr int64_t KPP_CHUNK_MIN_ROWS = 128;

/* Below this many rows or pairs, a step's bookkeeping loop runs on the calling thread alone. */
static constexpr int64_t KPP_SERIAL_WORK = 8192;

/* Near pairs a worker keeps per step (8 bytes each): above that, take_near searches again. */
static constexpr int64_t KPP_NEAR_ROOM = (int64_t) 1 << 15;
static std::atomic<int64_t> kpp_near_room {KPP_NEAR_ROOM};

extern "C" int64_t
pgkm_internal_set_kpp_near_room(int64_t pairs)
{
	return kpp_near_room.exchange(std::min(std::max<int64_t>(pairs, 0), KPP_NEAR_ROOM));
}

/* Rows ahead that eval_rows prefetches. */
static constexpr int64_t KPP_AHEAD = 16;

/* 4 (d + 2) v: relative bound on |F - F'| (the header's delta is float_error(d) F' + 2^-100). */
static inline double
float_error(int32_t d)
{
	return 4.0 * (d + 2) * 0x1p-24;
}

/* delta for the float distance f: a row with f >= D + delta has F >= D. */
static inline double
near_delta(double f, double eps_f)
{
	return eps_f * f + 0x1p-100;
}

/* The header's cap for a row of D^2 = c: a partial distance above it proves F >= D. */
static inline float
near_cap(double c, double eps_f)
{
	return (float) (c * (1.0 + eps_f) * (1.0 + 0x1p-20)) + 0x1p-100f;
}

static inline __attribute__((always_inline)) float
hsum(vf8 v)
{
	return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

/*
 * The squared distance in any order (four chains of 8 lanes; FMA where the
 * clone has it), or +inf once a partial sum (any order, a subset of the same
 * non-negative terms) exceeds cap: checked every 64 features.
 */
static inline __attribute__((always_inline)) float
any_order_sqdist(const float *a, const float *b, int32_t d, float cap)
{
	vf8			acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
	int32_t		j = 0;
	for (; j + 32 <= d; j += 32)
	{
		if ((j & 32) && hsum((acc0 + acc1) + (acc2 + acc3)) > cap)
			return __builtin_inff();
		vf8			a0, a1, a2, a3, b0, b1, b2, b3;
		memcpy(&a0, a + j, 32);
		memcpy(&a1, a + j + 8, 32);
		memcpy(&a2, a + j + 16, 32);
		memcpy(&a3, a + j + 24, 32);
		memcpy(&b0, b + j, 32);
		memcpy(&b1, b + j + 8, 32);
		memcpy(&b2, b + j + 16, 32);
		memcpy(&b3, b + j + 24, 32);
		a0 -= b0;
		a1 -= b1;
		a2 -= b2;
		a3 -= b3;
		acc0 += a0 * a0;
		acc1 += a1 * a1;
		acc2 += a2 * a2;
		acc3 += a3 * a3;
	}
	for (; j + 8 <= d; j += 8)
	{
		vf8			a0, b0;
		memcpy(&a0, a + j, 32);
		memcpy(&b0, b + j, 32);
		a0 -= b0;
		acc0 += a0 * a0;
	}
	float		s = 0;
	for (; j < d; j++)
	{
		float		t = a[j] - b[j];
		s += t * t;
	}
	if (d < 8)
		return s;
	return hsum((acc0 + acc1) + (acc2 + acc3)) + s;
}


/* One work item: gains, error terms and near pairs of the candidates in act[0..na). */
PGKM_TARGET_CLONES_V4 static void
eval_rows(const float *x, int32_t d, const int32_t *rows, int64_t cnt, const float *closest,
		  const double *weights, const float *cand, const float *ccg, const int *act, int na,
		  double thr, double eps_f, double *gain, double *err, std::vector<int64_t> &near, size_t room)
{
	float		ccmin = ccg[act[0]];
	for (int a = 1; a < na; a++)
		ccmin = std::min(ccmin, ccg[act[a]]);
	for (int64_t r = 0; r < cnt; r++)
	{
		/* members are scattered rows: fetch ahead */
		if (r + KPP_AHEAD < cnt)
		{
			const int64_t ia = rows[r + KPP_AHEAD];
			__builtin_prefetch(closest + ia);
			for (int32_t j = 0; j < d; j += 16)
				__builtin_prefetch(x + ia * d + j);
		}
		const int64_t i = rows[r];
		const double c = closest[i];
		const double lim = kpp_skip_limit(thr, c);
		if ((double) ccmin >= lim)
			continue;
		const double w = weights ? weights[i] : 1.0;
		const double p = w * c;
		const float cap = near_cap(c, eps_f);
		const float *xi = x + i * d;
		for (int a = 0; a < na; a++)
		{
			const int	t = act[a];
			if ((double) ccg[t] >= lim)
				continue;
			const double f = any_order_sqdist(xi, cand + (size_t) t * d, d, cap);
			const double delta = near_delta(f, eps_f);
			if (f < c + delta)
			{
				/* kept for the winner's update while there is room; then one -1: take_near searches again */
				if (near.size() < room)
					near.push_back(i * 32 + t);
				else if (near.size() == room)
					near.push_back(-1);
				if (f < c)
					gain[t] += p - w * f;
				err[t] += w * delta + 0x1p-50 * p;
			}
		}
	}
}

/* any_order_sqdist in the clones (take_near's loop is not cloned). */
PGKM_TARGET_CLONES_V4 static float
winner_sqdist(const float *a, const float *b, int32_t d, float cap)
{
	return any_order_sqdist(a, b, d, cap);
}

/*
 * Squared distances of the listed rows to c, each summed over features in
 * order without FMA (no FMA in either clone), as kmeanspp_cpu's sqdist_f:
 * the same floats. Lanes hold 8 rows.
 */
PGKM_TARGET_CLONES static void
exact_rows(const float *x, int32_t d, const int32_t *rows, int64_t cnt, const float *c, float *out)
{
	for (int64_t g = 0; g < cnt; g += 8)
	{
		const int64_t nr = std::min<int64_t>(8, cnt - g);
		const float *xr[8];
		for (int r = 0; r < 8; r++)
			xr[r] = x + (int64_t) rows[g + std::min<int64_t>(r, nr - 1)] * d;
		vf8			acc = {};
		for (int32_t j = 0; j < d; j++)
		{
			vf8			xv = {xr[0][j], xr[1][j], xr[2][j], xr[3][j], xr[4][j], xr[5][j], xr[6][j], xr[7][j]};
			vf8			t = xv - splat(c[j]);
			acc += t * t;
		}
		for (int64_t r = 0; r < nr; r++)
			out[g + r] = acc[r];
	}
}

/*
 * Each worker's statistics of the row-order update: k values, then 16 unused
 * (64 bytes of floats, 128 of int64), so that no two workers' values share a
 * cache line wherever the array starts; every row of the update writes one.
 */
static int64_t
worker_stride(int32_t k)
{
	return ((int64_t) k + 15) / 16 * 16 + 16;
}

KppGroups::KppGroups(const float *x, int64_t n, int32_t d, int32_t k, const double *weights,
					 ThreadPool *pool)
	: x_(x), n_(n), d_(d), weights_(weights), pool_(pool), nw_(pool->size()), members_(k),
	  size_(k, 0), gmax_(k, 0.0f), stride_(worker_stride(k)), wmax_((size_t) nw_ * stride_),
	  wsize_((size_t) nw_ * stride_),
	  reached_((k + REACH_BLOCK - 1) / REACH_BLOCK),
	  share_(nw_), room_((size_t) kpp_near_room.load(std::memory_order_relaxed))
{
}

void
KppGroups::start(const float *closest, const int32_t *owner)
{
	owner_ = owner;
	lists_ = true;
	size_[0] = n_;
	members_[0].resize(n_);
	float		m = 0;
	for (int64_t i = 0; i < n_; i++)
	{
		members_[0][i] = (int32_t) i;
		m = std::max(m, closest[i]);
	}
	gmax_[0] = m;
	ngroups_ = 1;
}

void
KppGroups::reach(int64_t b, const int *rep, int trials, const float *cc, int32_t tp, double thr)
{
	Reached    &r = reached_[b];
	r.groups.clear();
	r.masks.clear();
	r.rows = 0;
	const int32_t g1 = std::min<int32_t>(ngroups_, (int32_t) (b + 1) * REACH_BLOCK);
	for (int32_t g = (int32_t) b * REACH_BLOCK; g < g1; g++)
	{
		const double lim = kpp_skip_limit(thr, gmax_[g]);	/* >= each member's limit */
		uint32_t	mask = 0;
		for (int t = 0; t < trials && size_[g] > 0; t++)
			if (rep[t] == t && !((double) cc[(size_t) g * tp + t] >= lim))
				mask |= 1u << t;
		if (mask)
		{
			r.groups.push_back(g);
			r.masks.push_back(mask);
			r.rows += size_[g];
		}
	}
}

bool
KppGroups::plan(int64_t max_rows)
{
	const int64_t nblocks = (ngroups_ + REACH_BLOCK - 1) / REACH_BLOCK;
	int64_t		rows = 0;
	for (int64_t b = 0; b < nblocks; b++)
		rows += reached_[b].rows;
	if (rows > max_rows)
		return false;
	if (!lists_)
	{
		/* rows by center, ascending: a counting sort of owner */
		for (int32_t g = 0; g < ngroups_; g++)
		{
			members_[g].clear();
			members_[g].reserve(size_[g]);
		}
		for (int64_t i = 0; i < n_; i++)
			members_[owner_[i]].push_back((int32_t) i);
		lists_ = true;
	}
	/*
	 * Chunks of about rows / (8 workers) rows, for balance: of several small
	 * groups, or of a piece of a large one.
	 */
	const int64_t grain = std::max<int64_t>(KPP_CHUNK_MIN_ROWS, rows / (8 * nw_));
	const int64_t piece = std::min(KPP_GROUP_BLOCK, grain);
	items_.clear();
	chunk_items_.assign(1, 0);
	int64_t		in_chunk = 0;
	for (int64_t rb = 0; rb < nblocks; rb++)
		for (size_t q = 0; q < reached_[rb].groups.size(); q++)
		{
			const int32_t g = reached_[rb].groups[q];
			for (int64_t b = 0; b < size_[g]; b += piece)
			{
				const int64_t e = std::min(size_[g], b + piece);
				items_.push_back({g, b, e, reached_[rb].masks[q]});
				in_chunk += e - b;
				if (in_chunk >= grain)
				{
					chunk_items_.push_back(items_.size());
					in_chunk = 0;
				}
			}
		}
	if (chunk_items_.back() != items_.size())
		chunk_items_.push_back(items_.size());
	return true;
}

template <typename Body>
void
KppGroups::for_each(int64_t count, int64_t work, const Body &body)
{
	if (work <= KPP_SERIAL_WORK)
		for (int64_t q = 0; q < count; q++)
			body(q, 0);
	else
		pool_->parallel_for(count, body);
}

template <typename Body>
void
KppGroups::for_items(const Body &body)
{
	pool_->parallel_for((int64_t) chunk_items_.size() - 1, [&](int64_t c, int w) {
		for (size_t it = chunk_items_[c]; it < chunk_items_[c + 1]; it++)
			body(items_[it], w);
	});
}

void
KppGroups::begin_rows(int32_t center)
{
	for (int w = 0; w < nw_; w++)
	{
		std::fill_n(&wmax_[(size_t) w * stride_], center + 1, 0.0f);
		std::fill_n(&wsize_[(size_t) w * stride_], center + 1, 0);
	}
}

void
KppGroups::end_rows(int32_t center)
{
	for (int32_t g = 0; g <= center; g++)
	{
		float		m = 0;
		int64_t		size = 0;
		for (int w = 0; w < nw_; w++)
		{
			m = std::max(m, wmax_[(size_t) w * stride_ + g]);
			size += wsize_[(size_t) w * stride_ + g];
		}
		gmax_[g] = m;
		size_[g] = size;
	}
	ngroups_ = center + 1;
	lists_ = false;
}

int
KppGroups::evaluate(const float *cand, const int *rep, int trials, const float *cc, int32_t tp,
					double thr, const float *closest, double pot, int64_t chunk_rows,
					int64_t nchunks)
{
	for (int w = 0; w < nw_; w++)
	{
		std::fill_n(share_[w].gain, trials, 0.0);
		std::fill_n(share_[w].err, trials, 0.0);
		share_[w].near.clear();
	}
	const double eps_f = float_error(d_);
	for_items([&](const Item &item, int w) {
		int			act[32], na = 0;
		for (int t = 0; t < trials; t++)
			if (item.mask >> t & 1)
				act[na++] = t;
		eval_rows(x_, d_, members_[item.group].data() + item.begin, item.end - item.begin, closest,
				  weights_, cand, cc + (size_t) item.group * tp, act, na, thr, eps_f,
				  share_[w].gain, share_[w].err, share_[w].near, room_);
	});

	/* reduce, then the pick of the header's proof */
	double		g[32] = {}, e[32] = {};
	for (int w = 0; w < nw_; w++)
		for (int t = 0; t < trials; t++)
		{
			g[t] += share_[w].gain[t];
			e[t] += share_[w].err[t];
		}
	int			best = -1;
	for (int t = 0; t < trials; t++)
		if (rep[t] == t && (best < 0 || g[t] > g[best]))
			best = t;
	const double mu = (double) (n_ + nw_ + 8) * 0x1p-53 * 1.02;
	double		bound[32];
	for (int t = 0; t < trials; t++)
		bound[t] = (e[t] * (1.0 + 1e-9) + g[t] * mu) * (1.0 + mu) + 0x1p-1000;
	const double es = (double) (chunk_rows + nchunks + 2) * 0x1p-53 * 1.02;
	const double slack = 2.0 * es * pot / (1.0 - es) * (1.0 + 1e-9);
	if (!(pot < 1e300))
		return KPP_UNDECIDED;
	for (int t = 0; t < trials; t++)
	{
		if (rep[t] != t || t == best)
			continue;
		const double lo = g[best] - bound[best], hi = g[t] + bound[t];
		const double round = 0x1p-50 * (g[best] + bound[best] + g[t] + bound[t]);
		if (!(lo - hi > slack + round))
			return KPP_UNDECIDED;
	}
	return best;
}

void
KppGroups::clear_moved()
{
	for (int l = 0; l < nw_; l++)
	{
		share_[l].moved.clear();
		share_[l].moved_from.clear();
	}
}

void
KppGroups::take_near(int best, const float *winner, int32_t center, const float *cc, int32_t tp,
					 double thr, float *closest, int32_t *owner)
{
	/*
	 * The rows the winner may take: its near pairs, or when a worker ran
	 * out of room for them, evaluate()'s test again (group, row, then the
	 * any-order distance against D + delta). They get their exact D^2, and
	 * those it is closer to move.
	 */
	clear_moved();
	auto		take = [&](const std::vector<int32_t> &rows, int w) {
		std::vector<float> f(rows.size());
		exact_rows(x_, d_, rows.data(), (int64_t) rows.size(), winner, f.data());
		for (size_t r = 0; r < rows.size(); r++)
		{
			const int32_t i = rows[r];
			if (f[r] < closest[i])
			{
				closest[i] = f[r];
				share_[w].moved.push_back(i);
				share_[w].moved_from.push_back(owner[i]);
				owner[i] = center;
			}
		}
	};
	bool		kept = true;
	int64_t		pairs = 0;
	for (int w = 0; w < nw_; w++)
	{
		kept = kept && share_[w].near.size() <= room_;
		pairs += (int64_t) share_[w].near.size();
	}
	if (kept)
	{
		auto		take_listed = [&](int64_t l, int w) {
			std::vector<int32_t> rows;
			for (int64_t p : share_[l].near)
				if ((p & 31) == best)
					rows.push_back((int32_t) (p >> 5));
			take(rows, w);
		};
		for_each(nw_, pairs, take_listed);
		return;
	}
	const double eps_f = float_error(d_);
	for_items([&](const Item &item, int w) {
		if (!(item.mask >> best & 1))
			return;
		const double a2 = cc[(size_t) item.group * tp + best];
		std::vector<int32_t> rows;
		for (int64_t q = item.begin; q < item.end; q++)
		{
			const int32_t i = members_[item.group][q];
			const double c = closest[i];
			if (a2 >= kpp_skip_limit(thr, c))
				continue;
			const float cap = near_cap(c, eps_f);
			const double f = winner_sqdist(x_ + (int64_t) i * d_, winner, d_, cap);
			if (f < c + near_delta(f, eps_f))
				rows.push_back(i);
		}
		take(rows, w);
	});
}

void
KppGroups::regroup(int32_t center, const float *closest, const int32_t *owner, int64_t chunk_rows,
				   std::vector<int64_t> *dirty)
{
	std::vector<int32_t> &mine = members_[center];
	mine.clear();
	std::vector<int32_t> from;
	for (int l = 0; l < nw_; l++)
	{
		mine.insert(mine.end(), share_[l].moved.begin(), share_[l].moved.end());
		from.insert(from.end(), share_[l].moved_from.begin(), share_[l].moved_from.end());
	}
	std::sort(mine.begin(), mine.end());
	std::sort(from.begin(), from.end());
	from.erase(std::unique(from.begin(), from.end()), from.end());
	float		m = 0;
	dirty->clear();
	for (int32_t i : mine)
	{
		m = std::max(m, closest[i]);
		const int64_t ch = i / chunk_rows;
		if (dirty->empty() || dirty->back() != ch)
			dirty->push_back(ch);
	}
	gmax_[center] = m;
	size_[center] = (int64_t) mine.size();
	ngroups_ = center + 1;
	/* the groups that lost rows: drop them, and tighten the bound */
	int64_t		members = 0;
	for (int32_t g : from)
		members += (int64_t) members_[g].size();
	auto		drop_moved = [&](int64_t q, int) {
		const int32_t g = from[q];
		std::vector<int32_t> &mem = members_[g];
		float		mx = 0;
		size_t		o = 0;
		for (int32_t i : mem)
			if (owner[i] == g)
			{
				mem[o++] = i;
				mx = std::max(mx, closest[i]);
			}
		mem.resize(o);
		size_[g] = (int64_t) o;
		gmax_[g] = mx;
	};
	for_each((int64_t) from.size(), members, drop_moved);
}

}							/* namespace pgkm */
