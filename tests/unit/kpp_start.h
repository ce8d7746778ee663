/*
 * kpp_start.h: the engine's k-means++ start (progress step 0) against a
 * reference's chosen rows and potential (test_kmeanspp.cpp,
 * test_kmeanspp_groups.cpp).
 */
#ifndef PGKM_TEST_KPP_START_H
#define PGKM_TEST_KPP_START_H

#include "engine_run.h"
#include "kpp_reference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace pgkm_test
{

/* The engine's start from seed equals ref (computed from derive_seed(seed, 0)), row for row. */
inline void
expect_start_is(const KppReference &ref, const std::vector<float> &x, int32_t d, int32_t k,
				uint64_t seed, int threads, const char *what)
{
	pgkm_options o = cpu_options(k);
	o.seed = seed;
	o.max_iter = 1;
	o.n_threads = threads;
	EngineResult r = run_engine(x, d, o);
	ASSERT_EQ(r.status, PGKM_DONE) << what << ": " << r.err;
	ASSERT_EQ(r.init.size(), ref.rows.size() * d) << what << " threads " << threads;
	for (size_t c = 0; c < ref.rows.size(); c++)
		for (int32_t j = 0; j < d; j++)
			ASSERT_EQ(r.init[c * d + j], (double) x[ref.rows[c] * d + j])
				<< what << " threads " << threads << ": center " << c << " (reference row "
				<< ref.rows[c] << ")";
	EXPECT_EQ(r.progress[0].inertia, ref.potential) << what << " threads " << threads;
}

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_KPP_START_H */
