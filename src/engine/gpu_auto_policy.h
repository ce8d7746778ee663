/*
 * gpu_auto_policy.h: what method => 'auto' runs on the GPU, pass by pass.
 *
 * Every GPU method labels each pass alike (the fp64 argmin), so switching
 * between them changes the time, never the run. The GPU device runs Lloyd's
 * passes and times them; then it tries one bounded method (the candidate,
 * chosen by shape) and keeps it while its passes are faster than Lloyd's,
 * as Wu & Hong's hybrid does with its pruning rate, but measured in
 * seconds. A try's first bounded pass computes every distance (it starts
 * the bounds) and is not judged; a later one a little slower than Lloyd's
 * while the rows that move fall fast (the bounds are tightening) earns the
 * try another pass, a few times at most. A candidate pass slower than
 * Lloyd's loses the difference; tries are repeated only while all such
 * losses, with the next try's expected one, stay under TRY_BUDGET of the
 * run's time (savings are not counted: they would buy tries that give them
 * back), so 'auto' is never much slower than 'lloyd' where nothing prunes.
 * Plain data and arithmetic: the device feeds it seconds, tests feed it
 * any sequence.
 */
#ifndef PGKM_GPU_AUTO_POLICY_H
#define PGKM_GPU_AUTO_POLICY_H

#include "pgkm_engine.h"

#include <cstdint>

namespace pgkm
{

/*
 * The bounded method 'auto' tries on the GPU for this shape, or
 * PGKM_METHOD_LLOYD for none. Measured on the H100 (bench/RESULTS.md,
 * "All five methods on the GPU"): at k = 32 every bounded method was slower
 * than Lloyd at every spread (0.56-0.76x); Yinyang's groups of 64 centroids
 * pay from d = 64 (10M x 128, k = 1024: 8.8x per pass against Hamerly's
 * 6.4x); below that Hamerly was as fast or faster (10M x 16: 2.18x against
 * 2.11x; n = 245,760, d = 32, k = 256: 1.27x against 1.08x).
 */
int32_t		gpu_auto_candidate(int32_t d, int32_t k);

class GpuAutoPolicy
{
public:
	/* Of the run's time, what failed tries may cost. */
	static constexpr double TRY_BUDGET = 0.03;
	/* Lloyd passes timed before the first try (the run's first pass, warming up, is not one). */
	static constexpr int LLOYD_SAMPLES = 2;
	/*
	 * A bounded pass at most IMPROVING_SLOWER times Lloyd's, with at most
	 * IMPROVING_MOVED of the last pass's moved rows, is given another pass,
	 * IMPROVING_PASSES times in a try at most. On the H200's traces of
	 * bench/RESULTS.md ("'auto' on the GPU") a try judged by its first
	 * bounded pass alone lost 10M x 16, k = 1024 until pass 81 (Hamerly's
	 * pass 5: 1.06 Lloyd passes, pass 6: 0.96, pass 7: 0.61).
	 */
	static constexpr double IMPROVING_SLOWER = 1.2;
	static constexpr double IMPROVING_MOVED = 0.75;
	static constexpr int IMPROVING_PASSES = 3;

	/* candidate: the bounded method to try; PGKM_METHOD_LLOYD: Lloyd's passes only. */
	explicit GpuAutoPolicy(int32_t candidate = PGKM_METHOD_LLOYD) : candidate_(candidate) {}

	/* The method of the next pass. */
	int32_t		next() const { return next_; }

	/*
	 * The pass just run: the method that ran it (the plugin's report; Lloyd
	 * when the candidate's state did not fit), its wall seconds and the rows
	 * whose label it changed.
	 */
	void		record(int32_t ran, double seconds, int64_t moved);

	/* Lloyd's pass time the candidate is compared with (0 until measured). */
	double		lloyd_seconds() const;
	/* Seconds the candidate's passes cost beyond Lloyd's so far (negative: saved). */
	double		excess() const { return excess_; }
	int			tries() const { return tries_; }

private:
	void		leave_candidate();

	int32_t		candidate_;
	int32_t		next_ = PGKM_METHOD_LLOYD;
	int64_t		passes_ = 0;
	double		total_ = 0;		/* seconds of every pass */
	double		lloyd_[3] = {0, 0, 0};	/* the last Lloyd passes' seconds, newest first */
	int			lloyd_count_ = 0;
	double		excess_ = 0;	/* sum over candidate passes of (seconds - Lloyd's) */
	double		lost_ = 0;		/* the same over the passes slower than Lloyd's */
	double		try_start_excess_ = 0;
	double		try_cost_ = 0;	/* what the last losing try cost: the next one is priced at it */
	int			tries_ = 0;
	int			try_passes_ = 0;	/* candidate passes since the switch (the first is a full pass) */
	bool		won_ = false;	/* a judged pass of this try was faster than Lloyd's */
	int			improving_ = 0; /* passes this try was given for improving */
	int			slower_ = 0;	/* consecutive judged candidate passes not faster than Lloyd's */
	int64_t		prev_moved_ = -1;	/* the last pass's moved rows */
};

}							/* namespace pgkm */

#endif							/* PGKM_GPU_AUTO_POLICY_H */
