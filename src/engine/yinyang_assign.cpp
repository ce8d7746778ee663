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
#include "yinyang_groups.h"

#include <algorithm>
#include <limits>

namespace pgkm
{

/*
 * The drift bounds are kept as cumulative sums per pass (rounded up, and a
 * copy rounded down), so a row's bounds can stay as they were at its last
 * visit tau: at pass `now` they are lowered by cum_up[now] - cum_lo[tau] >=
 * the sum of the drift bounds in between >= the distance moved (triangle
 * inequality). A row first meets the global test with its own global lower
 * bound lowered by the cumulative largest drift, in O(1); only when that
 * fails are its t group bounds brought up to date. After a dense pass a
 * row's group bounds are all its one lower bound (flat), written out when
 * the row is next searched.
 *
 * Rows are taken in batches of YY_BATCH: the rows of a batch that need a
 * search get their groups chosen first, then each group's block is read
 * once for all the rows that need it (gemm_rows_block, GEMM_ROWS at a
 * time: the blocked kernel's efficiency, where a row at a time would reload
 * the block from cache for every row), then each row settles its label and
 * bounds (exact_bounds.h point 6 for the GEMM-form values).
 */
static constexpr int32_t YY_BATCH = 32;

/*
 * Passes back that the drift table reaches: a row that passes the global
 * test once its group bounds are brought to this pass keeps them as they
 * were (only their minimum, glb, is stored, as of now), so most opened rows
 * write nothing back; the bounds are written out when the row is searched
 * or its pass falls off the table.
 */
static constexpr int32_t YY_LAG_PASSES = 8;

class YinyangAssign : public BoundedAssign
{
public:
	YinyangAssign(const float *x, int64_t n, int32_t d, int32_t kmax, const double *mean,
				  ThreadPool *pool)
		: BoundedAssign(PGKM_METHOD_YINYANG, x, n, d, kmax, mean, pool), tmax_(yinyang_groups(kmax))
	{
		/* unwritten: every pass after a reset writes each row's (bounded_assign.h) */
		u_.resize(n);
		lb_.resize((size_t) n * tmax_);
		glb_.resize(n);
		gtau_.resize(n);
		tau_.resize(n);
		flat_.resize(n);
		group_of_.assign(kmax, 0);
		lane_.assign(kmax, 0);
		lagh_.assign((size_t) YY_LAG_PASSES * tmax_, 0.0f);
		work_.resize(scratch_.size());
		for (Work &w : work_)
		{
			w.lag.resize(tmax_);
			w.gmin.resize(tmax_);
			w.glo.resize(tmax_);
			w.xc.resize((size_t) YY_BATCH * d);
			w.F.resize((size_t) YY_BATCH * tmax_ * BLOCK);
			w.GM.resize((size_t) YY_BATCH * tmax_);
			w.slot.resize(YY_BATCH);
			w.groups.resize((size_t) YY_BATCH * tmax_);
			w.pend.resize((size_t) tmax_ * YY_BATCH);
			w.npend.resize(tmax_);
		}
	}

protected:
	void		on_centroids(bool reset, bool passed) override;

	void		init_bounds(int64_t i, int32_t b, double hi, Scratch &s) override
	{
		u_[i] = hi;
		tau_[i] = now_;
		gtau_[i] = now_;
		flat_[i] = 0;
		float	   *lb = &lb_[(size_t) i * tmax_];
		if (s.slow)
		{
			std::fill(lb, lb + t_, 0.0f);
			glb_[i] = 0.0f;
			return;
		}
		Work	   &w = work_[&s - scratch_.data()];
		block_mins(s.F.data(), t_, w.gmin.data());
		const int32_t gb = group_of_[b];
		w.gmin[gb] = min_f_except(s, gb * BLOCK, (gb + 1) * BLOCK, b);
		float		g = std::numeric_limits<float>::infinity();
		for (int32_t q = 0; q < t_; q++)
		{
			lb[q] = to_float_down(lo_any(s, w.gmin[q]));
			g = std::min(g, lb[q]);
		}
		glb_[i] = g;
	}

	void		init_dense(int64_t i, int32_t, double hi, double lo) override
	{
		u_[i] = hi;
		glb_[i] = to_float_down(lo);
		tau_[i] = now_;
		gtau_[i] = now_;
		flat_[i] = 1;
	}

	bool		would_keep_row(int64_t i) const override
	{
		const double u = up(u_[i] + geo_.drift(label_[i]));
		return sub_down(glb_[i], lag(t_, gtau_[i])) > geo_.margins().thr(u);
	}

	void		assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;
	void		fresh_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out) override;

private:
	/* A row of the batch being searched. */
	struct Slot
	{
		int64_t		i;
		int32_t		a;			/* its label before the pass (-1: none, a fresh search) */
		int32_t		ng;			/* groups to search */
		double		lo_a, hi_a;	/* interval of its distance to a */
		GemmRow		gr;
	};
	struct Work
	{
		std::vector<float> lag;		/* group drift bounds since a row's tau */
		std::vector<float> gmin;	/* per searched group: the smallest value but the label's */
		std::vector<float> glo;		/* their lower bounds */
		std::vector<float> xc;		/* YY_BATCH x d centred rows */
		std::vector<float> F;		/* YY_BATCH x (tmax BLOCK) values by block position */
		std::vector<float> GM;		/* YY_BATCH x tmax: each computed group's smallest value */
		std::vector<Slot> slot;
		std::vector<int32_t> groups;	/* YY_BATCH x tmax: each slot's groups */
		std::vector<uint8_t> pend;	/* tmax x YY_BATCH: each group's slots */
		std::vector<int32_t> npend;
		int32_t		ns = 0;
	};
	/* Upper bound of group g's drift (g = t_: any centroid's) from pass tau to now. */
	double		lag(int32_t g, int32_t tau) const
	{
		return up(cum_up_[(size_t) now_ * (t_ + 1) + g] - cum_lo_[(size_t) tau * (t_ + 1) + g]);
	}
	void		open_row(int64_t i, Scratch &s, Work &w, int32_t *out);
	bool		open_slot(int64_t i, int32_t a, Work &w, Slot **slot);
	void		compute_groups(Scratch &s, Work &w);
	void		close_row(const Slot &sl, Scratch &s, Work &w, int32_t *out);

	int32_t		tmax_, t_ = 0;
	RowArray<double> u_;
	RowArray<float> lb_;		/* n x tmax group lower bounds, as of tau */
	RowArray<float> glb_;		/* a lower bound of every group bound of a row, as of gtau */
	RowArray<int32_t> gtau_;	/* the pass glb is of */
	RowArray<int32_t> tau_;		/* the pass a row's group bounds are of */
	RowArray<uint8_t> flat_;	/* every group bound of the row is glb, as of gtau (a dense pass set it) */
	std::vector<int32_t> group_of_, lane_;	/* each centroid's group and lane in it */
	std::vector<int32_t> members_;
	int32_t		now_ = 0;		/* the current (or next) pass since the reset */
	std::vector<double> cum_up_, cum_lo_;	/* (passes) x (t + 1) cumulative drift bounds */
	std::vector<float> lagh_;	/* row h: lag(g, now - 1 - h) as floats, h < YY_LAG_PASSES */
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
		geo_.set_order(yinyang_group_order(geo_, t_));
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
	else if (now_ == 0)
		return;					/* no pass since the reset: the next starts every row at 0 */
	const size_t row = (size_t) now_ * (t_ + 1), prev = row - (t_ + 1);
	cum_up_.resize(row + t_ + 1);
	cum_lo_.resize(row + t_ + 1);
	const int32_t k = geo_.k();
	std::vector<double> gd(t_ + 1, 0.0);
	for (int32_t c = 0; c < k; c++)
		gd[group_of_[c]] = std::max(gd[group_of_[c]], geo_.drift(c));
	for (int32_t g = 0; g < t_; g++)
		gd[t_] = std::max(gd[t_], gd[g]);
	for (int32_t g = 0; g <= t_; g++)
	{
		cum_up_[row + g] = up(cum_up_[prev + g] + gd[g]);
		cum_lo_[row + g] = std::max(0.0, down(cum_lo_[prev + g] + gd[g]));
	}
	for (int32_t h = 0; h < YY_LAG_PASSES && h < now_; h++)
		for (int32_t g = 0; g < t_; g++)
			lagh_[(size_t) h * tmax_ + g] = to_float_up(lag(g, now_ - 1 - h));
}

void
YinyangAssign::assign_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	Work	   &w = work_[&s - scratch_.data()];
	for (int64_t b0 = r0; b0 < r1; b0 += YY_BATCH)
	{
		const int64_t b1 = std::min<int64_t>(r1, b0 + YY_BATCH);
		w.ns = 0;
		for (int64_t i = b0; i < b1; i++)
		{
			const int32_t a = label_[i];
			const double u = up(u_[i] + geo_.drift(a));
			out[i - r0] = a;
			u_[i] = u;
			s.tested++;
			if (sub_down(glb_[i], lag(t_, gtau_[i])) > m.thr(u))
			{
				s.kept++;
				continue;
			}
			open_row(i, s, w, out + (i - r0));
		}
		compute_groups(s, w);
		for (int32_t q = 0; q < w.ns; q++)
			close_row(w.slot[q], s, w, out + (w.slot[q].i - r0));
	}
}

/* The first pass: every group of every row, through the same batches. */
void
YinyangAssign::fresh_rows(int64_t r0, int64_t r1, Scratch &s, int32_t *out)
{
	Work	   &w = work_[&s - scratch_.data()];
	for (int64_t b0 = r0; b0 < r1; b0 += YY_BATCH)
	{
		const int64_t b1 = std::min<int64_t>(r1, b0 + YY_BATCH);
		w.ns = 0;
		for (int64_t i = b0; i < b1; i++)
		{
			tau_[i] = now_;
			gtau_[i] = now_;
			flat_[i] = 0;
			Slot	   *sl;
			if (!open_slot(i, -1, w, &sl))
			{
				double		hi;
				const int32_t b = full_search(i, s, &hi);
				init_bounds(i, b, hi, s);
				label_[i] = b;
				out[i - r0] = b;
				continue;
			}
			for (int32_t g = 0; g < t_; g++)
			{
				w.groups[(size_t) (w.ns - 1) * tmax_ + sl->ng++] = g;
				w.pend[(size_t) g * YY_BATCH + w.npend[g]++] = (uint8_t) (w.ns - 1);
			}
		}
		compute_groups(s, w);
		for (int32_t q = 0; q < w.ns; q++)
			close_row(w.slot[q], s, w, out + (w.slot[q].i - r0));
	}
}

/*
 * Centres row i into the batch's next slot, with its distance to a (a >= 0)
 * as an interval. False (no slot) when the row's values could overflow the
 * float kernels: then the caller searches it with full_search, which
 * handles that.
 */
bool
YinyangAssign::open_slot(int64_t i, int32_t a, Work &w, Slot **slot)
{
	if (w.ns == 0)
		std::fill(w.npend.begin(), w.npend.begin() + t_, 0);
	float	   *xc = &w.xc[(size_t) w.ns * d_];
	double		n2;
	const float Fa = centre_dist(x_ + i * d_, geo_.mean(), geo_.rowf(a >= 0 ? a : 0), d_, xc, &n2);
	if (!(n2 <= 0x1p118) || !(geo_.gemm().c_up() <= 0x1p59))
		return false;
	const ExactMargins &m = geo_.margins();
	Slot	   &sl = w.slot[w.ns++];
	sl.i = i;
	sl.a = a;
	sl.ng = 0;
	sl.gr = geo_.gemm().row_exact(n2, ExactMargins::row_error(std::sqrt(n2)));
	sl.lo_a = 0;
	sl.hi_a = std::numeric_limits<double>::infinity();
	if (a >= 0)
	{
		const double ea = up(sl.gr.ex + geo_.err(a));
		sl.lo_a = m.lo_float(Fa, ea);
		sl.hi_a = m.hi_float(Fa, ea);
	}
	*slot = &sl;
	return true;
}

/*
 * A row the O(1) test did not settle: bring its group bounds to this pass,
 * then Ding et al.'s filters: the global one (with the upper bound
 * tightened by its distance to a), then the groups whose bound is not above
 * the threshold, which compute_groups evaluates.
 */
void
YinyangAssign::open_row(int64_t i, Scratch &s, Work &w, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	const int32_t t = t_, a = label_[i];
	float	   *lb = &lb_[(size_t) i * tmax_];
	if (flat_[i])
	{
		std::fill(lb, lb + t, glb_[i]);
		tau_[i] = gtau_[i];
		flat_[i] = 0;
	}
	const int32_t tau = tau_[i];
	const float *lagv;
	if (tau < now_ && now_ - tau <= YY_LAG_PASSES)
		lagv = &lagh_[(size_t) (now_ - tau - 1) * tmax_];
	else
	{
		for (int32_t g = 0; g < t; g++)
			w.lag[g] = to_float_up(lag(g, tau));
		lagv = w.lag.data();
	}
	/* the group bounds brought to this pass: first only their minimum */
	const float glb = lower_bounds_drift_min(lb, lagv, t);
	glb_[i] = glb;
	gtau_[i] = now_;
	double		u = u_[i];
	const bool	settled = glb > m.thr(u);
	if (!settled || now_ - tau >= YY_LAG_PASSES)
	{
		/* written out: the row is searched next, or its pass leaves the table */
		lower_bounds_drift(lb, lagv, t);
		tau_[i] = now_;
	}
	if (settled)
		return;
	Slot	   *sl;
	if (!open_slot(i, a, w, &sl))
	{
		/* searched whole, like a fresh row */
		double		hi;
		const int32_t b = full_search(i, s, &hi);
		init_bounds(i, b, hi, s);
		label_[i] = b;
		*out = b;
		return;
	}
	s.distances++;
	u = std::min(u, sl->hi_a);
	u_[i] = u;
	if (glb > m.thr(u))
	{
		w.ns--;
		return;
	}
	const float thf = to_float_up(m.thr(u));	/* lb > thf proves a group worse */
	int32_t    *gl = &w.groups[(size_t) (w.ns - 1) * tmax_];
	const int32_t ng = select_le(lb, t, thf, gl);
	const uint8_t q = (uint8_t) (w.ns - 1);
	for (int32_t p = 0; p < ng; p++)
		w.pend[(size_t) gl[p] * YY_BATCH + w.npend[gl[p]]++] = q;
	sl->ng = ng;
}

/* Each group's block once for all the batch's rows that need it. */
void
YinyangAssign::compute_groups(Scratch &s, Work &w)
{
	if (w.ns == 0)
		return;
	const int32_t kp = tmax_ * BLOCK;
	const float *xs[GEMM_ROWS];
	float	   *outs[GEMM_ROWS], *mins[GEMM_ROWS];
	for (int32_t g = 0; g < t_; g++)
	{
		const int32_t np = w.npend[g];
		const uint8_t *pl = &w.pend[(size_t) g * YY_BATCH];
		for (int32_t p0 = 0; p0 < np; p0 += GEMM_ROWS)
		{
			const int32_t nr = std::min(GEMM_ROWS, np - p0);
			for (int32_t r = 0; r < nr; r++)
			{
				xs[r] = &w.xc[(size_t) pl[p0 + r] * d_];
				outs[r] = &w.F[(size_t) pl[p0 + r] * kp + (size_t) g * BLOCK];
				mins[r] = &w.GM[(size_t) pl[p0 + r] * tmax_ + g];
			}
			gemm_rows_block(xs, nr, geo_.blocks() + (size_t) g * d_ * BLOCK,
							geo_.block_norms() + (size_t) g * BLOCK, d_, outs, mins);
		}
		for (int32_t p = 0; p < np; p++)
		{
			const int32_t a = w.slot[pl[p]].a;	/* its distance is known already */
			s.distances += members_[g] - (a >= 0 && group_of_[a] == g);
		}
	}
}

/*
 * The row's label among a and the searched groups: the smallest value
 * first (so the cut is tight at once), then every other value under the
 * cut, as intervals (point 6) in the near-tie set; then its bounds: the
 * searched groups' from their smallest value other than the label's.
 */
void
YinyangAssign::close_row(const Slot &sl, Scratch &s, Work &w, int32_t *out)
{
	const ExactMargins &m = geo_.margins();
	const GemmMargins &gm = geo_.gemm();
	const std::vector<int32_t> &order = geo_.order();
	const int64_t i = sl.i;
	const int32_t a = sl.a, ng = sl.ng;
	const int32_t *gl = &w.groups[(size_t) (&sl - w.slot.data()) * tmax_];
	const float *F = &w.F[(size_t) (&sl - w.slot.data()) * tmax_ * BLOCK];
	const float *GM = &w.GM[(size_t) (&sl - w.slot.data()) * tmax_];
	const double emax = up(sl.gr.ex + geo_.err_max());
	s.nt.clear();
	if (a >= 0)
		s.nt.add(a, sl.lo_a, sl.hi_a, m);
	const int32_t ga = a >= 0 ? group_of_[a] : -1;
	float		vmin = std::numeric_limits<float>::infinity();
	int32_t		gmin = -1, qa = -1;
	for (int32_t q = 0; q < ng; q++)
	{
		const float v = GM[gl[q]];
		w.gmin[q] = v;
		gmin = v < vmin ? q : gmin;
		vmin = v < vmin ? v : vmin;
		qa = gl[q] == ga ? q : qa;
	}
	int32_t		first = -1;
	if (gmin >= 0)
	{
		const int32_t g = gl[gmin];
		int32_t		p = 0;
		while (F[(size_t) g * BLOCK + p] != vmin)
			p++;
		first = order[(size_t) g * BLOCK + p];
		if (first != a)
		{
			const double e = up(sl.gr.ex + geo_.err(first));
			s.nt.add(first, gm.lo(sl.gr, vmin, e), gm.hi(sl.gr, vmin, e), m);
		}
	}
	float		cut = gm.vcut(sl.gr, m.thr(s.nt.best_hi()), emax);
	for (int32_t q = 0; q < ng; q++)
	{
		if (w.gmin[q] > cut)
			continue;
		const int32_t g = gl[q], mem = members_[g];
		const float *Fg = F + (size_t) g * BLOCK;
		const int32_t *oc = &order[(size_t) g * BLOCK];
		for (int32_t p = 0; p < mem; p++)
		{
			if (!(Fg[p] <= cut) || oc[p] == a || oc[p] == first)
				continue;
			const double e = up(sl.gr.ex + geo_.err(oc[p]));
			const double before = s.nt.best_hi();
			s.nt.add(oc[p], gm.lo(sl.gr, Fg[p], e), gm.hi(sl.gr, Fg[p], e), m);
			if (s.nt.best_hi() != before)
				cut = gm.vcut(sl.gr, m.thr(s.nt.best_hi()), emax);
		}
	}
	double		hi;
	const int32_t b = resolve(i, s, &hi);
	const int32_t gb = group_of_[b];
	float	   *lb = &lb_[(size_t) i * tmax_];
	int32_t		qb = b == first ? gmin : b == a ? qa : -1;
	if (qb < 0)
		for (int32_t q = 0; q < ng; q++)
			qb = gl[q] == gb ? q : qb;
	if (qb >= 0)	/* b's own group: the smallest value of its other members */
	{
		const float *Fg = F + (size_t) gb * BLOCK;
		const int32_t *oc = &order[(size_t) gb * BLOCK];
		float		m2 = std::numeric_limits<float>::infinity();
		for (int32_t p = 0; p < members_[gb]; p++)
			m2 = oc[p] != b && Fg[p] < m2 ? Fg[p] : m2;
		w.gmin[qb] = m2;
	}
	gemm_lo_array(w.gmin.data(), ng, sl.gr, emax, w.glo.data());
	for (int32_t q = 0; q < ng; q++)
		lb[gl[q]] = w.glo[q];
	if (a >= 0 && b != a && qa < 0)
		lb[ga] = std::min(lb[ga], to_float_down(sl.lo_a));
	glb_[i] = min_f(lb, t_);
	gtau_[i] = now_;
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
