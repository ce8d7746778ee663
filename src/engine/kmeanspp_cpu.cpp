/*
 * kmeanspp_cpu.cpp: greedy k-means++ on the CPU (init.h), with exact
 * triangle-inequality row skipping and SIMD candidate distances; rows
 * grouped by closest center (kmeanspp_groups.h) skip whole groups.
 */
#include "init.h"
#include "internal_hooks.h"
#include "kmeanspp_groups.h"
#include "per_worker.h"
#include "phase_clock.h"
#include "rng.h"
#include "row_array.h"
#include "serial_or_pool.h"
#include "simd.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace pgkm
{

/* Rows per chunk for k-means++ candidate evaluation. */
static constexpr int64_t KPP_CHUNK = 1024;

static inline float
sqdist_f(const float *a, const float *b, int32_t d)
{
	float		s = 0;
	for (int32_t j = 0; j < d; j++)
	{
		float		t = a[j] - b[j];
		s += t * t;
	}
	return s;
}

/*
 * k-means++ distances: squared distances of the listed rows of x (offsets
 * into x) to the candidates held transposed in ct (d x tp, tp a multiple of
 * 8), written to out[row * tp + t]. Each distance is summed over features in
 * order exactly as sqdist_f does (no FMA in either clone), so a lane gives the
 * same float as sqdist_f(x_row, candidate) whatever else is computed.
 */
PGKM_TARGET_CLONES static void
kpp_dists(const float *x, int32_t d, const int32_t *rows, int64_t cnt, const float *ct,
		  int32_t tp, float *out)
{
	constexpr int R = 8;		/* rows in flight: independent accumulators */
	for (int64_t g = 0; g < cnt; g += R)
	{
		const int64_t nr = std::min<int64_t>(R, cnt - g);
		const float *xr[R];
		for (int r = 0; r < R; r++)
			xr[r] = x + (int64_t) rows[g + std::min<int64_t>(r, nr - 1)] * d;
		for (int32_t b = 0; b < tp; b += 8)
		{
			vf8			acc[R] = {};
			for (int32_t j = 0; j < d; j++)
			{
				vf8			cv;
				memcpy(&cv, ct + (size_t) j * tp + b, sizeof(cv));
				for (int r = 0; r < R; r++)
				{
					vf8			t = splat(xr[r][j]) - cv;
					acc[r] += t * t;
				}
			}
			for (int64_t r = 0; r < nr; r++)
				memcpy(out + (size_t) rows[g + r] * tp + b, &acc[r], sizeof(vf8));
		}
	}
}

/* The first row whose running weight (row order) reaches u times the total, among positive weights. */
static int64_t
weighted_row(const double *w, int64_t n, double u)
{
	double		total = 0;
	for (int64_t i = 0; i < n; i++)
		total += w[i];
	const double r = u * total;
	double		cum = 0;
	int64_t		last = 0;
	for (int64_t i = 0; i < n; i++)
		if (w[i] > 0)
		{
			cum += w[i];
			last = i;
			if (cum >= r)
				return i;
		}
	return last;
}

/*
 * k-means++ skips groups and rows proven unaffected (1, default), rows only
 * (2: the row-order pass every step) or computes all (0): a test hook.
 */
static std::atomic<int32_t> kpp_pruning {1};

extern "C" int32_t
pgkm_internal_set_kpp_pruning(int32_t on)
{
	return kpp_pruning.exchange(on);
}

/* Steps that the grouped evaluation took, and those of them its bounds left to the row-order pass. */
static std::atomic<int64_t> kpp_grouped_steps {0}, kpp_undecided_steps {0};

extern "C" void
pgkm_internal_kpp_steps(int64_t *grouped, int64_t *undecided)
{
	*grouped = kpp_grouped_steps.exchange(0);
	*undecided = kpp_undecided_steps.exchange(0);
}

/* How the steps choose between the pool and the calling thread (SerialOrPool::Choice), and those that took the latter. */
static std::atomic<int32_t> kpp_step_choice {SerialOrPool::CLOCK};
static std::atomic<int64_t> kpp_serial_steps {0};

extern "C" int32_t
pgkm_internal_set_kpp_step_choice(int32_t choice)
{
	return kpp_step_choice.exchange(choice);
}

extern "C" int64_t
pgkm_internal_kpp_serial_steps(void)
{
	return kpp_serial_steps.exchange(0);
}

PhaseTotals<PGKM_KPP_PHASES> kpp_phase_totals;

extern "C" void
pgkm_internal_kpp_phase_ns(int64_t *ns)
{
	kpp_phase_totals.take(ns);
}

/*
 * Greedy k-means++ as scikit-learn does it: first center uniform, then per
 * center 2 + floor(ln k) candidates drawn with probability proportional to
 * D^2, keeping the one that minimises the new potential. Stops early (fewer
 * centers) when every remaining D^2 is 0, i.e. the data has fewer distinct
 * points than k. Candidates always have D^2 > 0, so centers are distinct.
 *
 * D^2 are floats summed in feature order (sqdist_f). Each row remembers its
 * closest center; by the triangle inequality a candidate at distance A from
 * that center cannot be closer than it when A >= 2 D, so with a margin for
 * the float rounding of both sums (A^2 >= 4 (1 + m) D^2) the row's
 * min(D^2, dist) is D^2 without computing dist. Skipping is therefore exact:
 * the result is bit-identical with pruning off (test hook) and, with per-chunk
 * sums reduced in chunk order, for any thread count. The grouped evaluation
 * (kmeanspp_groups.h) proves its pick equal to that pass's or runs the pass.
 *
 * weights (NULL: all 1) make it weighted k-means++, as k-means|| reduces its
 * candidates: the first center is drawn with probability proportional to w,
 * the others to w D^2, and the potential is the sum of w D^2.
 */
int32_t
kmeanspp_cpu(const float *x, int64_t n, int32_t d, int32_t k, uint64_t seed, ThreadPool *pool,
			 double *centroids, double *potential, const double *weights)
{
	PhaseClock<PGKM_KPP_PHASES> clock(kpp_phase_totals);
	/* a row's weight multiplies its D^2 in every sum (1: the same doubles as unweighted) */
	auto		wt = [weights](int64_t i) { return weights ? weights[i] : 1.0; };
	const int64_t nchunks = (n + KPP_CHUNK - 1) / KPP_CHUNK;
	const int	trials = 2 + (int) std::log((double) k);
	const int32_t tp = (trials + 7) / 8 * 8;	/* candidate lanes */
	const int	nw = pool->size();
	SplitMix64	rng(seed);
	/* per row, unwritten: the first center's pass writes every row's (row_array.h) */
	RowArray<float> closest;
	RowArray<int32_t> owner;	/* index of the closest center */
	closest.resize(n);
	owner.resize(n);
	std::vector<double> csum(nchunks);
	std::vector<double> tpart((size_t) nchunks * trials);
	std::vector<float> cand((size_t) trials * d), ct((size_t) d * tp, 0.0f);
	std::vector<float> cf((size_t) k * d);	/* centers so far, float rows */
	std::vector<float> cc((size_t) k * tp);	/* ||center j - candidate t||^2 at [j * tp + t] */
	std::vector<float> mincc(k);	/* min over candidates */
	std::vector<int32_t> center_ids(k);
	for (int32_t c = 0; c < k; c++)
		center_ids[c] = c;

	/*
	 * Skip test: a bound of the candidate-center distance^2 far enough above
	 * D^2. The three float sums (D^2, the candidate's distance, the
	 * candidate-center distance) carry a relative error below delta = (d + 3)
	 * u (u = 2^-24); m = 8 delta + 1e-6 covers them with room to spare.
	 */
	const int32_t mode = kpp_pruning.load(std::memory_order_relaxed);
	const bool	prune = mode != 0;
	const bool	grouped = mode == 1 && KppGroups::usable(n, d);
	const double thr = 4.0 * (1.0 + 8.0 * (d + 3) * 0x1p-24 + 1e-6);
	auto		unaffected = [&](double a2, int64_t i) {
		return prune && a2 >= kpp_skip_limit(thr, closest[i]);
	};

	/*
	 * The trial pass keeps the distances it computed (row-indexed, n x tp)
	 * when that costs at most the data's own size, so the winner's need no
	 * recomputation; otherwise (small d) they are recomputed. Shape only.
	 */
	const bool	keep_trials = tp <= d;
	RowArray<float> tdist;	/* every row's lanes written by the first pass too */
	tdist.resize(keep_trials ? (size_t) n * tp : 0);
	PerWorker<std::vector<int32_t>> wlist(nw);
	PerWorker<std::vector<float>> wdist(nw);

	auto		load_candidate = [&](int t, int64_t row) {
		for (int32_t j = 0; j < d; j++)
		{
			cand[(size_t) t * d + j] = x[row * d + j];
			ct[(size_t) j * tp + t] = x[row * d + j];
		}
	};
	auto		set_center = [&](int32_t c, int64_t row) {
		for (int32_t j = 0; j < d; j++)
		{
			centroids[(size_t) c * d + j] = (double) x[row * d + j];
			cf[(size_t) c * d + j] = x[row * d + j];
		}
	};
	/*
	 * distances of the chunk's listed rows: into tdist, or the worker's
	 * buffer; the others read +inf, so that min(D^2, distance) is D^2 for
	 * them (what the skip test proved) without a branch
	 */
	auto		chunk_dists = [&](int64_t r0, int64_t r1, int w) -> float * {
		const std::vector<int32_t> &list = wlist[w];
		float	   *dist;
		if (keep_trials)
			dist = tdist.data() + (size_t) r0 * tp;
		else
		{
			wdist[w].resize((size_t) (r1 - r0) * tp);
			dist = wdist[w].data();
		}
		if ((int64_t) list.size() < r1 - r0)
			std::fill(dist, dist + (size_t) (r1 - r0) * tp, std::numeric_limits<float>::infinity());
		kpp_dists(x + r0 * d, d, list.data(), (int64_t) list.size(), ct.data(), tp, dist);
		return dist;
	};
	/* first index whose running D^2 sum reaches r, restricted to D^2 > 0 */
	auto		sample = [&](double r) -> int64_t {
		double		cum = 0;
		for (int64_t ch = 0; ch < nchunks; ch++)
		{
			if (csum[ch] > 0 && cum + csum[ch] >= r)
			{
				int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
				int64_t		last = -1;
				for (int64_t i = r0; i < r1; i++)
				{
					if (closest[i] <= 0 || wt(i) <= 0)
						continue;
					cum += wt(i) * closest[i];
					last = i;
					if (cum >= r)
						return i;
				}
				return last;
			}
			cum += csum[ch];
		}
		for (int64_t i = n - 1; i >= 0; i--)
			if (closest[i] > 0 && wt(i) > 0)
				return i;
		return 0;
	};
	auto		total = [&]() {
		double		pot = 0;
		for (double v : csum)
			pot += v;
		return pot;
	};

	/* first center: every row's D^2 */
	int64_t		first = weights ? weighted_row(weights, n, rng.uniform()) : rng.below(n);
	set_center(0, first);
	load_candidate(0, first);
	pool->parallel_for(nchunks, [&](int64_t ch, int w) {
		int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
		std::vector<int32_t> &list = wlist[w];
		list.resize(r1 - r0);
		for (int64_t i = 0; i < r1 - r0; i++)
			list[i] = (int32_t) i;
		const float *dist = chunk_dists(r0, r1, w);
		double		s = 0;
		for (int64_t i = r0; i < r1; i++)
		{
			closest[i] = dist[(size_t) (i - r0) * tp];
			owner[i] = 0;
			s += wt(i) * closest[i];
		}
		csum[ch] = s;
	});
	double		pot = total();
	int32_t		found = 1;
	std::vector<int64_t> ids(trials);
	std::vector<int> rep(trials);	/* the first candidate bitwise equal to each */
	std::unique_ptr<KppGroups> groups;
	std::vector<int64_t> dirty;
	if (grouped)
	{
		groups.reset(new KppGroups(x, n, d, k, weights, pool));
		groups->start(closest.data(), owner.data());
	}
	SerialOrPool steps(pool, (SerialOrPool::Choice) kpp_step_choice.load(std::memory_order_relaxed));
	clock.mark(KPP_START);
	while (found < k && pot > 0)
	{
		SerialOrPool::Step step(steps);
		clock.mark(KPP_SUMS);
		for (int t = 0; t < trials; t++)
		{
			ids[t] = sample(rng.uniform() * pot);
			load_candidate(t, ids[t]);
			rep[t] = t;
			for (int u = 0; u < t && rep[t] == t; u++)
				if (memcmp(&cand[(size_t) u * d], &cand[(size_t) t * d], sizeof(float) * d) == 0)
					rep[t] = u;
		}
		clock.mark(KPP_DRAW);
		/*
		 * candidate-center distances (SIMD, only ever compared with a margin),
		 * their minimum, and the candidates that may reach each center's group
		 */
		const int64_t cblk = KppGroups::REACH_BLOCK;	/* 16 blocks at k = 1024: work for 16 cores */
		pool->parallel_for((found + cblk - 1) / cblk, [&](int64_t b, int) {
			const int64_t c0 = b * cblk, c1 = std::min<int64_t>(found, c0 + cblk);
			kpp_dists(cf.data(), d, center_ids.data() + c0, c1 - c0, ct.data(), tp, cc.data());
			for (int64_t c = c0; c < c1; c++)
				mincc[c] = *std::min_element(&cc[(size_t) c * tp], &cc[(size_t) c * tp] + trials);
			if (grouped)
				groups->reach(b, rep.data(), trials, cc.data(), tp, thr);
		});
		clock.mark(KPP_CENTER_DISTANCES);
		int			best = KPP_UNDECIDED;
		/* grouped while the groups that candidates may reach hold at most half the rows */
		const bool	sparse = grouped && groups->plan(n / 2);
		clock.mark(KPP_PLAN);
		if (sparse)
		{
			best = groups->evaluate(cand.data(), rep.data(), trials, cc.data(), tp, thr,
									closest.data(), pot, KPP_CHUNK, nchunks);
			kpp_grouped_steps.fetch_add(1, std::memory_order_relaxed);
			if (best == KPP_UNDECIDED)
				kpp_undecided_steps.fetch_add(1, std::memory_order_relaxed);
			clock.mark(KPP_GROUPED);
		}
		/* otherwise: potential with each candidate added, per chunk in row order */
		if (best == KPP_UNDECIDED)
			pool->parallel_for(nchunks, [&](int64_t ch, int w) {
				int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
				std::vector<int32_t> &list = wlist[w];
				list.clear();
				for (int64_t i = r0; i < r1; i++)
					if (!unaffected(mincc[owner[i]], i))
						list.push_back((int32_t) (i - r0));
				const float *dist = chunk_dists(r0, r1, w);
				double		acc[64];
				double	   *sum = trials <= 64 ? acc : &tpart[(size_t) ch * trials];
				std::fill(sum, sum + trials, 0.0);
				for (int64_t i = r0; i < r1; i++)
				{
					const float ci = closest[i];
					const double wi = wt(i);
					const float *dr = dist + (size_t) (i - r0) * tp;
					for (int t = 0; t < trials; t++)
						sum[t] += wi * std::min(ci, dr[t]);
				}
				if (sum == acc)
					std::copy(acc, acc + trials, &tpart[(size_t) ch * trials]);
			});
		if (best == KPP_UNDECIDED)
			best = best_trial(tpart.data(), nchunks, trials);
		clock.mark(KPP_ROW_PASS);
		set_center(found, ids[best]);
		const float *cb = cand.data() + (size_t) best * d;
		if (sparse)
		{
			/* the winner's rows, then the row-order sums of the chunks they are in */
			groups->take_near(best, cb, found, cc.data(), tp, thr, closest.data(), owner.data());
			groups->regroup(found, closest.data(), owner.data(), KPP_CHUNK, &dirty);
			clock.mark(KPP_TAKE);
			pool->parallel_for((int64_t) dirty.size(), [&](int64_t q, int) {
				int64_t		r0 = dirty[q] * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
				double		s = 0;
				for (int64_t i = r0; i < r1; i++)
					s += wt(i) * closest[i];
				csum[dirty[q]] = s;
			});
			pot = total();
			found++;
			continue;
		}
		/*
		 * closest = min(closest, D^2 to the winner): from tdist (+inf where
		 * the skip test proved D^2 unchanged), or recomputed (small d, every
		 * row: where the test would skip, the value cannot be lower)
		 */
		if (grouped)
			groups->begin_rows(found);
		pool->parallel_for(nchunks, [&](int64_t ch, int w) {
			int64_t		r0 = ch * KPP_CHUNK, r1 = std::min(n, r0 + KPP_CHUNK);
			double		s = 0;
			for (int64_t i = r0; i < r1; i++)
			{
				float		v = closest[i];
				const float db = keep_trials ? tdist[(size_t) i * tp + best] : sqdist_f(x + i * d, cb, d);
				if (db < v)
				{
					v = db;
					owner[i] = found;
				}
				closest[i] = v;
				if (grouped)
					groups->note_row(w, owner[i], v);
				s += wt(i) * v;
			}
			csum[ch] = s;
		});
		if (grouped)
			groups->end_rows(found);
		clock.mark(KPP_UPDATE);
		pot = total();
		found++;
	}
	kpp_serial_steps.fetch_add(steps.serial_steps(), std::memory_order_relaxed);
	if (potential)
		*potential = pot;
	return found;
}

}							/* namespace pgkm */
