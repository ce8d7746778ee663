/*
 * test_row_distance.cpp: the row distance kernel of every instruction set
 * this CPU runs (row_distance.h) against sqdist_exact bit for bit: d from 1
 * to 768 (tails of every length), row counts that are no multiple of any
 * block, and values where any other order or a fused multiply-add would
 * round differently (subnormals, 1e30, large offsets, centroids no float
 * can hold).
 */
#include "exact_distance.h"
#include "row_distance.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace pgkm;

namespace
{

enum class Values
{
	Offset,						/* 1000 + N(0, 3), centroids near the rows in fp64 */
	Extreme						/* subnormals, zeros, 1e30, 3e38, mixed signs and scales */
};

struct Data
{
	int64_t		n;
	int32_t		d, k;
	std::vector<float> x;
	std::vector<double> c;
	std::vector<int32_t> labels;
};

float
extreme_float(std::mt19937_64 &g)
{
	static const float pool[] = {0.0f, -0.0f, 1e-45f, -3e-42f, 1.17e-38f, 1e-20f, 1.0f, -1.5f,
		3.0e7f, 1e30f, -1e30f, 3.0e38f, 16777217.0f, 0.1f};
	std::uniform_int_distribution<int> pick(0, (int) (sizeof(pool) / sizeof(pool[0])) - 1);
	std::uniform_real_distribution<float> u(-1.0f, 1.0f);
	return g() % 4 == 0 ? u(g) : pool[pick(g)];
}

Data
make_data(int64_t n, int32_t d, Values v, uint64_t seed, int32_t k = 5)
{
	std::mt19937_64 g(seed);
	std::normal_distribution<double> nd(0.0, 3.0);
	Data		p{n, d, k, {}, {}, {}};
	p.x.resize((size_t) n * d);
	p.c.resize((size_t) p.k * d);
	for (float &t : p.x)
		t = v == Values::Offset ? (float) (1000.0 + nd(g)) : extreme_float(g);
	for (size_t i = 0; i < p.c.size(); i++)
	{
		if (v == Values::Offset)
			p.c[i] = 1000.0 + nd(g) / 7.0 + 1e-9 * (double) (i % 13);	/* no float holds it */
		else
		{
			const double t = (double) extreme_float(g);
			p.c[i] = g() % 3 == 0 ? t * (1.0 + 0x1p-40) : t;
		}
	}
	p.labels.resize(n);
	for (int32_t &l : p.labels)
		l = (int32_t) (g() % p.k);
	return p;
}

/* Each set this CPU runs; the dispatch falls back to the best one for the others. */
std::vector<Isa>
runnable_isas()
{
	std::vector<Isa> v;
	for (Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512})
		if ((int32_t) isa <= (int32_t) best_isa())
			v.push_back(isa);
	return v;
}

/* The kernel of isa on p against sqdist_exact bit for bit, and nothing written past the last row. */
void
check_kernel(Isa isa, const Data &p, int *checked)
{
	const int64_t n = p.n;
	const int32_t d = p.d;
	std::vector<double> out(n + 1, -7.0);
	row_distance_kernel(isa) (p.x.data(), n, d, p.c.data(), p.labels.data(), out.data());
	for (int64_t i = 0; i < n; i++)
	{
		const double want = sqdist_exact(&p.x[(size_t) i * d], &p.c[(size_t) p.labels[i] * d], d);
		ASSERT_EQ(0, std::memcmp(&want, &out[i], sizeof(double)))
			<< "row " << i << ": " << out[i] << " vs " << want;
		(*checked)++;
	}
	ASSERT_EQ(out[n], -7.0) << "wrote past the last row";
}

}							/* namespace */

TEST(RowDistance, EqualsSqdistExactBitForBitOnEverySet)
{
	int			checked = 0;
	for (Isa isa : runnable_isas())
		for (Values v : {Values::Offset, Values::Extreme})
			for (int32_t d : {1, 2, 3, 7, 17, 33, 768})
				for (int64_t n : {1, 3, 13, 37, 101})
				{
					SCOPED_TRACE("isa " + std::to_string((int) isa) + " d=" + std::to_string(d) +
								 " n=" + std::to_string(n) + (v == Values::Offset ? " offset" : " extreme"));
					ASSERT_NO_FATAL_FAILURE(check_kernel(isa, make_data(n, d, v, 1000 * d + n), &checked));
				}
	EXPECT_GT(checked, 0);
}

/*
 * Below 8 features the AVX-512 kernel takes rows in lanes: the rows' floats
 * permuted out of the block (d <= 4) or gathered, the centroids permuted out
 * of two registers (k d <= 16) or gathered. Every d below 8 with k on both
 * sides of 16 / d, full blocks of 8 and every tail; centroids exactly k x d
 * (the permutes never read past them).
 */
TEST(RowDistance, SmallDimensionsEveryCentroidLayout)
{
	int			checked = 0;
	for (Isa isa : runnable_isas())
		for (Values v : {Values::Offset, Values::Extreme})
			for (int32_t d = 1; d < 8; d++)
				for (int32_t k : {1, 2, 16 / d, 16 / d + 1, 40})
					for (int64_t n : {7, 8, 9, 16, 23, 67})
					{
						SCOPED_TRACE("isa " + std::to_string((int) isa) + " d=" + std::to_string(d) +
									 " k=" + std::to_string(k) + " n=" + std::to_string(n));
						ASSERT_NO_FATAL_FAILURE(
							check_kernel(isa, make_data(n, d, v, 7000 * d + 31 * k + n, k), &checked));
					}
	EXPECT_GT(checked, 0);
}

/*
 * The data can catch what the kernels must not do: subnormal floats and
 * squares of 1e60 occur, summing a row in reverse order changes some sums,
 * and so does fusing any multiply-add.
 */
TEST(RowDistance, DataSeesOrderAndFusedMultiplyAdd)
{
	for (Values v : {Values::Offset, Values::Extreme})
	{
		const Data	p = make_data(101, 33, v, 33101);
		bool		subnormal = false, huge = false, order = false, fused = false;
		for (int64_t i = 0; i < p.n; i++)
		{
			const float *x = &p.x[(size_t) i * p.d];
			const double *c = &p.c[(size_t) p.labels[i] * p.d];
			double		rev = 0, fma = 0;
			for (int32_t j = p.d - 1; j >= 0; j--)
				rev += ((double) x[j] - c[j]) * ((double) x[j] - c[j]);
			for (int32_t j = 0; j < p.d; j++)
			{
				const double t = (double) x[j] - c[j];
				fma = std::fma(t, t, fma);
				subnormal |= std::fpclassify(x[j]) == FP_SUBNORMAL;
				huge |= t * t >= 1e60;
			}
			order |= rev != sqdist_exact(x, c, p.d);
			fused |= fma != sqdist_exact(x, c, p.d);
		}
		SCOPED_TRACE(v == Values::Offset ? "offset" : "extreme");
		EXPECT_TRUE(order);
		EXPECT_TRUE(fused);
		if (v == Values::Extreme)
		{
			EXPECT_TRUE(subnormal);
			EXPECT_TRUE(huge);
		}
	}
}

TEST(RowDistance, DispatchFollowsTheCpu)
{
	EXPECT_EQ(row_distance_kernel(Isa::Portable), &row_distance_portable);
#if defined(__x86_64__)
	EXPECT_EQ(row_distance_kernel(Isa::Avx512),
			  best_isa() == Isa::Avx512 ? &row_distance_avx512
			  : best_isa() == Isa::Avx2 ? &row_distance_avx2 : &row_distance_portable);
#endif
	EXPECT_EQ(current_row_distance_kernel(), row_distance_kernel(current_argmin_kernel().isa));
}
