/*
 * yinyang_assign.cpp: Yinyang k-means (Ding et al., ICML 2015): the centroids
 * are split into groups of at most 16 (one SIMD block each); a row keeps an
 * upper bound on its distance and one lower bound per group, lowered each
 * pass by the group's largest drift. The global filter skips a row whose
 * upper bound is below every group bound; otherwise only the groups whose
 * bound is not above the best so far are computed, a block at a time. O(nk/16)
 * memory; the method of choice at large k. Exactness: exact_bounds.h.
 */
#include "bounded_assign.h"

#include <algorithm>
#include <limits>

namespace pgkm
{

int32_t
yinyang_groups(int32_t k)
{
	return (k + BLOCK - 1) / BLOCK;
}

/*
 * Groups of close centroids: a few Lloyd steps on the (centred float)
 * centroids from evenly spaced ones, then each centroid to its nearest group
 * with room left (pairs taken in order of distance), so no group exceeds a
 * block. Any grouping is exact; close groups prune more.
 */
static std::vector<int32_t>
group_order(const CentroidGeometry &geo, int32_t t)
{
	const int32_t k = geo.k(), d = geo.d();
	std::vector<double> ctr((size_t) t * d);
	for (int32_t g = 0; g < t; g++)
		for (int32_t j = 0; j < d; j++)
			ctr[(size_t) g * d + j] = geo.rowf((int32_t) ((int64_t) g * k / t))[j];
	auto		sq = [&](int32_t c, int32_t g) {
		double		s = 0;
		for (int32_t j = 0; j < d; j++)
		{
			double		v = geo.rowf(c)[j] - ctr[(size_t) g * d + j];
			s += v * v;
		}
		return s;
	};
	std::vector<int32_t> of(k, 0);
	for (int it = 0; it < 5 && t > 1; it++)
	{
		for (int32_t c = 0; c < k; c++)
		{
			double		best = sq(c, 0);
			of[c] = 0;
			for (int32_t g = 1; g < t; g++)
			{
				double		v = sq(c, g);
				if (v < best)
				{
					best = v;
					of[c] = g;
				}
			}
		}
		std::vector<double> sum((size_t) t * d, 0.0);
		std::vector<int32_t> cnt(t, 0);
		for (int32_t c = 0; c < k; c++)
		{
			cnt[of[c]]++;
			for (int32_t j = 0; j < d; j++)
				sum[(size_t) of[c] * d + j] += geo.rowf(c)[j];
		}
		for (int32_t g = 0; g < t; g++)
			if (cnt[g] > 0)
				for (int32_t j = 0; j < d; j++)
					ctr[(size_t) g * d + j] = sum[(size_t) g * d + j] / cnt[g];
	}
	struct Pair
	{
		double		dist;
		int32_t		c, g;
	};
	std::vector<Pair> pairs;
	pairs.reserve((size_t) k * t);
	for (int32_t c = 0; c < k; c++)
		for (int32_t g = 0; g < t; g++)
			pairs.push_back({sq(c, g), c, g});
	std::sort(pairs.begin(), pairs.end(), [](const Pair &p, const Pair &q) {
		return p.dist < q.dist || (p.dist == q.dist && (p.c < q.c || (p.c == q.c && p.g < q.g)));
	});
	std::vector<int32_t> fill(t, 0), order((size_t) t * BLOCK, -1);
	std::vector<char> done(k, 0);
	for (const Pair &p : pairs)
	{
		if (done[p.c] || fill[p.g] == BLOCK)
			continue;
		done[p.c] = 1;
		order[(size_t) p.g * BLOCK + fill[p.g]++] = p.c;
	}
	for (int32_t g = 0; g < t; g++)
		std::sort(order.begin() + (size_t) g * BLOCK, order.begin() + (size_t) g * BLOCK + fill[g]);
	return order;
}

/*
 * The drift bounds are kept as cumulative sums per pass (rounded up, and a
 * copy rounded down), so a row's bounds can stay as they were at its last
 * visit tau: at pass `now` they are lowered by cum_up[now] - cum_lo[tau] >=
 * the sum of the drift bounds in between >= the distance moved (triangle
 * inequality). A row first meets the global test with its own global lower
 * bound lowered by the cumulative largest drift, in O(1); only when that
 * fails are its t group bounds brought up to date.
 */
class YinyangAssign : public BoundedAssign
{
public:
	YinyangAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				  ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_YINYANG, x, n, d, kmax, mean, pool), tmax_(yinyang_groups(kmax))
	{
		u_.assign(n, 0.0);
		lb_.assign((size_t) n * tmax_, 0.0f);
		glb_.assign(n, 0.0f);
		tau_.assign(n, 0);
		group_of_.assign(kmax, 0);
		lane_.assign(kmax, 0);
		lag1_.assign(tmax_, 0.0f);
		work_.resize(scratch_.size());
		for (Work &w : work_)
		{
			w.searched.resize(tmax_);
			w.lag.resize(tmax_);
			w.min1.resize(tmax_);
			w.finite.resize(tmax_);
		}
	}

protected:
	void		on_centroids(bool reset, bool passed) override;

	void		init_bounds(int64_t i, int32_t b, double hi, Scratch &s) override
	{
		u_[i] = hi;
		tau_[i] = now_;
		float	   *lb = &lb_[(size_t) i * tmax_];
		if (s.slow)
		{
			std::fill(lb, lb + t_, 0.0f);
			glb_[i] = 0.0f;
			return;
		}
		Work	   &w = work_[&s - scratch_.data()];
		block_mins(s.F.data(), t_, w.min1.data());
		const int32_t gb = group_of_[b];
		w.min1[gb] = min_f_except(s, gb * BLOCK, (gb + 1) * BLOCK, b);
		float		g = std::numeric_limits<float>::infinity();
		for (int32_t q = 0; q < t_; q++)
		{
			lb[q] = to_float_down(lo_any(s, w.min1[q]));
			g = std::min(g, lb[q]);
		}
		glb_[i] = g;
	}

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;

private:
	struct Work
	{
		std::vector<char> searched;
		std::vector<float> lag;		/* group drift bounds since a row's tau */
		std::vector<float> min1;	/* per searched group: the smallest F */
		std::vector<char> finite;	/* no float distance in the group overflowed */
	};
	/* Upper bound of group g's drift (g = t_: any centroid's) from pass tau to now. */
	double		lag(int32_t g, int32_t tau) const
	{
		return up(cum_up_[(size_t) now_ * (t_ + 1) + g] - cum_lo_[(size_t) tau * (t_ + 1) + g]);
	}
	void		search_row(int64_t i, Scratch &s, Work &w, int32_t *out);

	int32_t		tmax_, t_ = 0;
	std::vector<double> u_;
	std::vector<float> lb_;		/* n x tmax group lower bounds, as of tau */
	std::vector<float> glb_;	/* min of a row's group bounds, as of tau */
	std::vector<int32_t> tau_;	/* the pass a row's lower bounds are of */
	std::vector<int32_t> group_of_, lane_;	/* each centroid's group and lane in it */
	std::vector<int32_t> members_;
	int32_t		now_ = 0;		/* the current (or next) pass since the reset */
	std::vector<double> cum_up_, cum_lo_;	/* (passes) x (t + 1) cumulative drift bounds */
	std::vector<float> lag1_;	/* lag(g, now - 1) as floats, the common case */
	std::vector<Work> work_;	/* per worker */
};

/* Passes before the drift history starts over (a fresh pass): bounds its memory. */
static constexpr int32_t YINYANG_MAX_PASSES = 4096;

void
YinyangAssign::on_centroids(bool reset, bool passed)
{
	if (!reset && passed && now_ + 1 >= YINYANG_MAX_PASSES)
	{
		restart();
		set_centroids(geo_.cent(), geo_.k());
		return;
	}
	if (reset)
	{
		t_ = yinyang_groups(geo_.k());
		geo_.set_order(group_order(geo_, t_));
		members_.assign(t_, 0);
		for (int32_t p = 0; p < t_ * BLOCK; p++)
			if (geo_.order()[p] >= 0)
			{
				group_of_[geo_.order()[p]] = p / BLOCK;
				lane_[geo_.order()[p]] = p % BLOCK;
				members_[p / BLOCK]++;
			}
		now_ = 0;
		cum_up_.assign(t_ + 1, 0.0);
		cum_lo_.assign(t_ + 1, 0.0);
		return;
	}
	if (passed)
		now_++;
	const size_t row = (size_t) now_ * (t_ + 1), prev = row - (t_ + 1);
	cum_up_.resize(row + t_ + 1);
	cum_lo_.resize(row + t_ + 1);
	std::vector<double> gd(t_ + 1, 0.0);
	for (int32_t c = 0; c < geo_.k(); c++)
		gd[group_of_[c]] = std::max(gd[group_of_[c]], geo_.drift(c));
	for (int32_t g = 0; g < t_; g++)
		gd[t_] = std::max(gd[t_], gd[g]);
	for (int32_t g = 0; g <= t_; g++)
	{
		cum_up_[row + g] = up(cum_up_[prev + g] + gd[g]);
		cum_lo_[row + g] = std::max(0.0, down(cum_lo_[prev + g] + gd[g]));
	}
	for (int32_t g = 0; g < t_; g++)
		lag1_[g] = to_float_up(lag(g, now_ - 1));
}

void
YinyangAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	Work	   &w = work_[&s - scratch_.data()];
	for (int64_t i = r0; i < r1; i++)
	{
		const int32_t a = label_[i];
		const double u = up(u_[i] + geo_.drift(a));
		const int32_t tau = tau_[i];
		out[i - r0] = a;
		u_[i] = u;
		if (sub_down(glb_[i], lag(t_, tau)) > m.thr(u))
			continue;
		search_row(i, s, w, out + (i - r0));
	}
}

/*
 * A row the O(1) test did not settle: bring its group bounds to this pass,
 * then Ding et al.'s filters: the global one (with the tightened upper
 * bound), then group by group, each group a block of the float kernel.
 */
void
YinyangAssign::search_row(int64_t i, Scratch &s, Work &w, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	const std::vector<int32_t> &order = geo_.order();
	const int32_t t = t_, a = label_[i], tau = tau_[i];
	float	   *lb = &lb_[(size_t) i * tmax_];
	const float *lagv = lag1_.data();
	if (tau != now_ - 1)
	{
		for (int32_t g = 0; g < t; g++)
			w.lag[g] = to_float_up(lag(g, tau));
		lagv = w.lag.data();
	}
	float		glb = lower_bounds_drift(lb, lagv, t);
	tau_[i] = now_;
	glb_[i] = glb;
	double		u = u_[i];
	if (glb > m.thr(u))
		return;
	centre(i, s);
	float		Fa = dist(s, a);
	const double lo_a = m.lo_float(Fa, err(s, a));
	u = m.hi_float(Fa, err(s, a));
	u_[i] = u;
	if (glb > m.thr(u))
		return;
	s.nt.clear();
	s.nt.add(a, lo_a, u, m);
	float		cf = cut(s);
	const int32_t ga = group_of_[a];
	double		bh = s.nt.best_hi();
	float		thf = to_float_up(m.thr(bh));	/* lb > thf proves a group worse */
	for (int32_t g = 0; g < t; g++)
	{
		w.searched[g] = 0;
		if (lb[g] > thf)
			continue;
		w.searched[g] = 1;
		float	   *F = s.F.data() + (size_t) g * BLOCK;
		fsqdist_blocks(s.xc.data(), geo_.blocks() + (size_t) g * d_ * BLOCK, d_, 1, F);
		const int32_t mem = members_[g];	/* real lanes first, padding after */
		const int32_t *oc = &order[(size_t) g * BLOCK];
		s.distances += mem - (g == ga);	/* a's distance is known */
		for (int32_t p = mem; p < BLOCK; p++)
			F[p] = std::numeric_limits<float>::infinity();
		float		m1 = std::numeric_limits<float>::infinity();
		bool		finite = true;
		for (int32_t p = 0; p < BLOCK; p++)
		{
			m1 = F[p] < m1 ? F[p] : m1;
			finite &= (p >= mem) | (F[p] <= std::numeric_limits<float>::max());
		}
		w.finite[g] = finite;
		if (m1 <= cf || !finite)
		{
			for (int32_t p = 0; p < mem; p++)
				if (oc[p] != a && (F[p] <= cf || !(F[p] <= std::numeric_limits<float>::max())))
					consider(s, oc[p], F[p], cf);
			if (s.nt.best_hi() != bh)
			{
				bh = s.nt.best_hi();
				thf = to_float_up(m.thr(bh));
			}
		}
		w.min1[g] = finite ? m1 : 0.0f;	/* overflow: no lower bound (lo_any) */
	}
	double		hi;
	int32_t		b = resolve(i, s, &hi);
	const int32_t gb = group_of_[b];
	if (w.searched[gb])	/* b's own group: the smallest distance of its other members */
	{
		const float *F = s.F.data() + (size_t) gb * BLOCK;
		const int32_t *oc = &order[(size_t) gb * BLOCK];
		float		m2 = std::numeric_limits<float>::infinity();
		for (int32_t p = 0; p < members_[gb]; p++)
			if (oc[p] != b && F[p] < m2)
				m2 = F[p];
		w.min1[gb] = w.finite[gb] ? m2 : 0.0f;
	}
	float		g_all = std::numeric_limits<float>::infinity();
	for (int32_t g = 0; g < t; g++)
	{
		if (w.searched[g])
			lb[g] = to_float_down(lo_any(s, w.min1[g]));
		g_all = std::min(g_all, lb[g]);
	}
	if (b != a && !w.searched[ga])
	{
		lb[ga] = std::min(lb[ga], to_float_down(lo_a));
		g_all = std::min(g_all, lb[ga]);
	}
	glb_[i] = g_all;
	u_[i] = hi;
	label_[i] = b;
	*out = b;
}

std::unique_ptr<BoundedAssign>
make_yinyang_assign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
					ThreadPool *pool)
{
	return std::unique_ptr<BoundedAssign>(new YinyangAssign(x, n, d, kmax, mean, pool));
}

}							/* namespace pgkm */
