/*
 * test_stats.cpp: the data statistics pass (stats.h) against a long double
 * reference, bit for bit the same at any thread count, on both of its loops
 * (interleaved row accumulators up to 16 features, row order beyond) and
 * row counts that are no multiple of a chunk; each column's largest |x|
 * exactly; and the first bad value named
 * wherever it lies among the chunks.
 */
#include "errors.h"
#include "stats.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using pgkm::DataStats;
using pgkm::ThreadPool;

namespace
{

/* Columns with offsets far above their spread (epoch-seconds-like), which a careless sum loses. */
std::vector<float>
offset_rows(int64_t n, int32_t d, uint32_t seed)
{
	std::mt19937 gen(seed);
	std::normal_distribution<float> z(0, 1);
	std::vector<float> x((size_t) n * d);
	for (int64_t i = 0; i < n; i++)
		for (int32_t j = 0; j < d; j++)
			x[(size_t) i * d + j] = 1000.0f * (float) (j % 5) + (float) (j + 1) * z(gen);
	return x;
}

}							/* namespace */

TEST(Stats, MeansAndVarianceAgainstLongDoubleForAnyThreadCount)
{
	for (int32_t d : {1, 2, 3, 4, 5, 16, 17, 40})
	{
		const int64_t n = 70001;	/* no multiple of any chunk */
		std::vector<float> x = offset_rows(n, d, 5 + d);
		x[(size_t) 69999 * d + d - 1] = -7777.0f;	/* a column's largest |x|, negative, in the last chunk */
		std::vector<long double> mean(d, 0), var(d, 0);
		std::vector<float> maxabs(d, 0.0f);
		for (int64_t i = 0; i < n; i++)
			for (int32_t j = 0; j < d; j++)
			{
				mean[j] += x[(size_t) i * d + j];
				maxabs[j] = std::max(maxabs[j], std::fabs(x[(size_t) i * d + j]));
			}
		for (int32_t j = 0; j < d; j++)
			mean[j] /= n;
		for (int64_t i = 0; i < n; i++)
			for (int32_t j = 0; j < d; j++)
			{
				const long double t = x[(size_t) i * d + j] - mean[j];
				var[j] += t * t;
			}
		long double mean_var = 0;
		for (int32_t j = 0; j < d; j++)
			mean_var += var[j] / n;
		mean_var /= d;
		DataStats	first;
		for (int threads : {1, 3, 7})
		{
			SCOPED_TRACE("d=" + std::to_string(d) + " threads=" + std::to_string(threads));
			ThreadPool	pool(threads, nullptr, nullptr);
			const DataStats s = pgkm::data_statistics(x.data(), n, d, &pool);
			for (int32_t j = 0; j < d; j++)
				EXPECT_NEAR(s.mean[j], (double) mean[j], 1e-12 * (1 + std::fabs((double) mean[j])));
			EXPECT_NEAR(s.mean_var, (double) mean_var, 1e-12 * (double) mean_var);
			EXPECT_EQ(s.maxabs, maxabs);
			if (threads == 1)
				first = s;
			else
			{
				EXPECT_EQ(0, std::memcmp(s.mean.data(), first.mean.data(), d * sizeof(double)));
				EXPECT_EQ(s.mean_var, first.mean_var);
			}
		}
	}
}

TEST(Stats, FirstBadValueWhereverItLies)
{
	for (int32_t d : {3, 40})
	{
		const int64_t n = 50000;	/* several chunks: 21,846 rows at d = 3, 1,639 at d = 40 */
		std::vector<float> x = offset_rows(n, d, 9);
		x[(size_t) 45000 * d + 1] = INFINITY;	/* a later chunk */
		x[(size_t) 30001 * d + 2] = 1e30f;		/* finite but beyond the limit */
		x[(size_t) 30002 * d] = NAN;
		ThreadPool	pool(3, nullptr, nullptr);
		try
		{
			pgkm::data_statistics(x.data(), n, d, &pool);
			ADD_FAILURE() << "no error at d = " << d;
		}
		catch (const pgkm::EngineError &e)
		{
			EXPECT_NE(std::string(e.what()).find("row 30001 (0-based) feature 2 (0-based) is 1e+30, beyond"),
					  std::string::npos) << e.what();
		}
		x[(size_t) 30001 * d + 2] = 0;
		try
		{
			pgkm::data_statistics(x.data(), n, d, &pool);
			ADD_FAILURE() << "no error at d = " << d;
		}
		catch (const pgkm::EngineError &e)
		{
			EXPECT_NE(std::string(e.what()).find("row 30002 (0-based) feature 0 (0-based) is NaN"), std::string::npos)
				<< e.what();
		}
	}
}
