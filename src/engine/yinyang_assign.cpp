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

class YinyangAssign : public BoundedAssign
{
public:
	YinyangAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				  ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_YINYANG, x, n, d, kmax, mean, pool), tmax_(yinyang_groups(kmax))
	{
		u_.assign(n, 0.0);
		lb_.assign((size_t) n * tmax_, 0.0f);
		group_of_.assign(kmax, 0);
		gdrift_.assign(tmax_, 0.0f);
		searched_.resize(scratch_.size());
		for (auto &v : searched_)
			v.resize(tmax_);
	}

protected:
	void		on_centroids(bool reset) override
	{
		if (reset)
		{
			t_ = yinyang_groups(geo_.k());
			geo_.set_order(group_order(geo_, t_));
			members_.assign(t_, 0);
			for (int32_t p = 0; p < t_ * BLOCK; p++)
				if (geo_.order()[p] >= 0)
				{
					group_of_[geo_.order()[p]] = p / BLOCK;
					members_[p / BLOCK]++;
				}
		}
		std::fill(gdrift_.begin(), gdrift_.end(), 0.0f);
		for (int32_t c = 0; c < geo_.k(); c++)
			gdrift_[group_of_[c]] = std::max(gdrift_[group_of_[c]], to_float_up(geo_.drift(c)));
	}

	void		init_bounds(int64_t i, int32_t b, double hi, Scratch &s) override
	{
		u_[i] = hi;
		float	   *lb = &lb_[(size_t) i * tmax_];
		for (int32_t g = 0; g < t_; g++)
			lb[g] = s.slow ? 0.0f : to_float_down(lo_any(s, min_f_except(s, g * BLOCK, (g + 1) * BLOCK, b)));
	}

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;

private:
	int32_t		tmax_, t_ = 0;
	std::vector<double> u_;
	std::vector<float> lb_;		/* n x tmax group lower bounds */
	std::vector<int32_t> group_of_;
	std::vector<int32_t> members_;
	std::vector<float> gdrift_;	/* largest drift in each group, rounded up */
	std::vector<std::vector<char>> searched_;	/* per worker */
};

void
YinyangAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	const std::vector<int32_t> &order = geo_.order();
	const int32_t t = t_;
	char	   *searched = searched_[&s - scratch_.data()].data();
	for (int64_t i = r0; i < r1; i++)
	{
		const int32_t a = label_[i];
		float	   *lb = &lb_[(size_t) i * tmax_];
		double		u = up(u_[i] + geo_.drift(a));
		const double glb = lower_bounds_drift(lb, gdrift_.data(), t);
		out[i - r0] = a;
		if (glb > m.thr(u))
		{
			u_[i] = u;
			continue;
		}
		centre(i, s);
		float		Fa = dist(s, a);
		const double lo_a = m.lo_float(Fa, err(s, a));
		u = m.hi_float(Fa, err(s, a));
		if (glb > m.thr(u))
		{
			u_[i] = u;
			continue;
		}
		s.nt.clear();
		s.nt.add(a, lo_a, u, m);
		float		cf = cut(s);
		for (int32_t g = 0; g < t; g++)
		{
			searched[g] = 0;
			if ((double) lb[g] > m.thr(s.nt.best_hi()))
				continue;
			searched[g] = 1;
			float	   *F = s.F.data() + (size_t) g * BLOCK;
			fsqdist_blocks(s.xc.data(), geo_.blocks() + (size_t) g * d_ * BLOCK, d_, 1, F);
			s.distances += members_[g] - (g == group_of_[a]);	/* a's distance is known */
			for (int32_t p = 0; p < BLOCK; p++)
			{
				const int32_t c = order[(size_t) g * BLOCK + p];
				if (c < 0)
					F[p] = std::numeric_limits<float>::infinity();
				else
				{
					if (c != a)
						consider(s, c, F[p], cf);
					if (!(F[p] <= std::numeric_limits<float>::max()))
						F[p] = 0.0f;	/* overflow: no lower bound (lo_any) */
				}
			}
		}
		double		hi;
		int32_t		b = resolve(i, s, &hi);
		for (int32_t g = 0; g < t; g++)
			if (searched[g])
				lb[g] = to_float_down(lo_any(s, min_f_except(s, g * BLOCK, (g + 1) * BLOCK, b)));
		const int32_t ga = group_of_[a];
		if (b != a && !searched[ga])
			lb[ga] = std::min(lb[ga], to_float_down(lo_a));
		u_[i] = hi;
		label_[i] = b;
		out[i - r0] = b;
	}
}

std::unique_ptr<BoundedAssign>
make_yinyang_assign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
					ThreadPool *pool)
{
	return std::unique_ptr<BoundedAssign>(new YinyangAssign(x, n, d, kmax, mean, pool));
}

}							/* namespace pgkm */
