/*
 * run_phases.h: the phases of a run stepped one bounded unit at a time, and
 * what both step loops share (pgkm_run for Lloyd in driver.cpp, KernelLoop
 * in kernel_kmeans.cpp): the one step function (a step that throws leaves
 * the run Failed, and a failed run refuses further steps), the progress
 * report, and moving on to the next of n_init runs.
 */
#ifndef PGKM_RUN_PHASES_H
#define PGKM_RUN_PHASES_H

#include "errors.h"
#include "pgkm_engine.h"

namespace pgkm
{

enum class RunPhase
{
	Init,
	Iterate,
	Final,
	Done,
	Failed
};

/*
 * One step of loop in phase: its step_init, step_iterate or step_final
 * (which move phase on). PGKM_OK: more to do; PGKM_DONE: the result is
 * ready. Throws what the step threw.
 */
template <typename Loop>
int
step_phase(Loop &loop, RunPhase &phase, pgkm_progress *progress)
{
	try
	{
		switch (phase)
		{
			case RunPhase::Init:
				loop.step_init(progress);
				break;
			case RunPhase::Iterate:
				loop.step_iterate(progress);
				break;
			case RunPhase::Final:
				loop.step_final(progress);
				break;
			case RunPhase::Done:
				return PGKM_DONE;
			case RunPhase::Failed:
				throw EngineError(PGKM_ERR_INVALID, "this run failed or was interrupted; free it");
		}
	}
	catch (...)
	{
		phase = RunPhase::Failed;
		throw;
	}
	return phase == RunPhase::Done ? PGKM_DONE : PGKM_OK;
}

/* A step's report to the caller (p may be NULL). */
inline void
report_step(pgkm_progress *p, int run, int32_t iteration, double inertia, int64_t moved,
			double elapsed_s)
{
	if (!p)
		return;
	p->run = run;
	p->iteration = iteration;
	p->inertia = inertia;
	p->moved = moved;
	p->elapsed_s = elapsed_s;
}

/* After a run of n_runs ended: on to the next (phase Init, true), or false: finish. */
inline bool
next_run(int &run, int n_runs, RunPhase &phase)
{
	if (++run >= n_runs)
		return false;
	phase = RunPhase::Init;
	return true;
}

}							/* namespace pgkm */

#endif							/* PGKM_RUN_PHASES_H */
