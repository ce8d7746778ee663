/*
 * test_plan.cpp: the CUDA plugin's plan (cuda/plan.cpp) on the host, no GPU
 * needed: settings from the config, the path and product for each shape (the
 * production choices: a change here changes results), and the memory plan:
 * every plan fits its budget, resident runs keep room for k-means++'s
 * sample, and streamed runs lend it the buffers each pass fills afresh, so a
 * budget of a quarter of the data still holds the full sample.
 */
#include "failure.h"
#include "plan.h"

#include "h100_limits.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

using namespace pgkm_cuda;

static int
failure_status(const std::function<void()> &f, std::string *msg = nullptr)
{
	try
	{
		f();
	}
	catch (const Failure &e)
	{
		if (msg)
			*msg = e.msg;
		return e.status;
	}
	return 0;
}

TEST(Plan, DefaultPathsByShape)
{
	struct C { int d, k; Path path; Product product; };
	for (C c : {C {2, 8, PATH_DIRECT, PRODUCT_FP32}, C {15, 1000, PATH_DIRECT, PRODUCT_FP32},
				C {16, 8, PATH_DOT, PRODUCT_FP32}, C {31, 1024, PATH_DOT, PRODUCT_FP32},
				C {32, 8, PATH_TILED, PRODUCT_FP32}, C {64, 256, PATH_TILED, PRODUCT_FP32},
				C {64, 257, PATH_DOT, PRODUCT_FP32}, C {64, 1024, PATH_DOT, PRODUCT_FP32},
				C {65, 1024, PATH_GEMM, PRODUCT_FP32}, C {128, 256, PATH_TILED, PRODUCT_FP32},
				C {128, 257, PATH_GEMM, PRODUCT_FP32}, C {512, 128, PATH_TILED, PRODUCT_FP32},
				C {767, 256, PATH_TILED, PRODUCT_FP32}, C {768, 64, PATH_TILED, PRODUCT_FP32},
				C {768, 65, PATH_GEMM, PRODUCT_FP32}, C {1024, 8, PATH_TILED, PRODUCT_FP32},
				C {1025, 8, PATH_GEMM, PRODUCT_FP32}, C {511, 1024, PATH_GEMM, PRODUCT_FP32},
				C {512, 511, PATH_GEMM, PRODUCT_FP32}, C {512, 512, PATH_GEMM, PRODUCT_3XTF32},
				C {768, 1024, PATH_GEMM, PRODUCT_3XTF32}, C {1100, 120, PATH_GEMM, PRODUCT_FP32}})
	{
		Plan		p = make_plan(100000, c.d, c.k, Settings(), h100(), 1LL << 40);
		EXPECT_EQ(p.path, c.path) << "d=" << c.d << " k=" << c.k;
		EXPECT_EQ(p.product, c.product) << "d=" << c.d << " k=" << c.k;
		EXPECT_EQ(p.x_copies, c.product == PRODUCT_3XTF32 ? 2 : 1);
	}
}

TEST(Plan, ForcedPathsAndProducts)
{
	EXPECT_EQ(pick_path(2, 8, PGKM_CUDA_PATH_GEMM), PATH_GEMM);
	EXPECT_EQ(pick_path(16, 8, PGKM_CUDA_PATH_TILED), PATH_TILED);
	EXPECT_EQ(pick_path(1024, 1024, PGKM_CUDA_PATH_TILED), PATH_TILED);
	EXPECT_EQ(pick_path(64, 1024, PGKM_CUDA_PATH_FUSED), PATH_DOT);
	EXPECT_EQ(pick_path(15, 8, PGKM_CUDA_PATH_FUSED), PATH_DIRECT);
	std::string msg;
	EXPECT_EQ(failure_status([] { pick_path(65, 8, PGKM_CUDA_PATH_FUSED); }, &msg), PGKM_ERR_INVALID);
	EXPECT_EQ(msg, "the fused path needs d <= 64 (got 65)");
	EXPECT_EQ(failure_status([] { pick_path(1025, 8, PGKM_CUDA_PATH_TILED); }), PGKM_ERR_INVALID);
	EXPECT_EQ(failure_status([] { pick_path(16, 1025, PGKM_CUDA_PATH_TILED); }), PGKM_ERR_INVALID);

	Settings	s;
	s.product = PGKM_CUDA_PRODUCT_TF32;
	Plan		p = make_plan(100000, 16, 8, s, h100(), 1LL << 40);
	EXPECT_EQ(p.path, PATH_DOT);
	EXPECT_EQ(p.product, PRODUCT_FP32) << "a product switch only affects the GEMM path";
	s.force_path = PGKM_CUDA_PATH_GEMM;
	EXPECT_EQ(make_plan(100000, 16, 8, s, h100(), 1LL << 40).product, PRODUCT_TF32);
	s.product = PGKM_CUDA_PRODUCT_FP32;
	EXPECT_EQ(make_plan(100000, 768, 1024, s, h100(), 1LL << 40).product, PRODUCT_FP32);
	s.product = PGKM_CUDA_PRODUCT_3XTF32;
	EXPECT_EQ(make_plan(100000, 128, 8, s, h100(), 1LL << 40).product, PRODUCT_3XTF32);
}

TEST(Plan, SettingsFromConfig)
{
	Settings	def = settings_from_config(nullptr);
	EXPECT_TRUE(def.deterministic);
	EXPECT_EQ(def.force_path, PGKM_CUDA_PATH_AUTO);
	EXPECT_EQ(def.product, PGKM_CUDA_PRODUCT_AUTO);
	EXPECT_FALSE(def.global_sums);
	EXPECT_EQ(def.gemm_blocks_per_sm, 4);
	EXPECT_EQ(def.gemm_tile_bytes, 16LL << 20);

	pgkm_cuda_config cfg {};	/* what the engine passes, but for these four */
	cfg.deterministic = 1;
	cfg.device_ordinal = -1;
	cfg.memory_limit = 123456;
	Settings	s = settings_from_config(&cfg);
	EXPECT_TRUE(s.deterministic);
	EXPECT_EQ(s.memory_limit, 123456);
	EXPECT_EQ(s.force_path, def.force_path);
	EXPECT_EQ(s.product, def.product);
	EXPECT_EQ(s.global_sums, def.global_sums);
	EXPECT_EQ(s.gemm_blocks_per_sm, def.gemm_blocks_per_sm);
	EXPECT_EQ(s.gemm_tile_bytes, def.gemm_tile_bytes);

	cfg.sums = PGKM_CUDA_SUMS_GLOBAL;
	cfg.gemm_blocks_per_sm = 8;
	cfg.gemm_tile_mb = 32;
	s = settings_from_config(&cfg);
	EXPECT_TRUE(s.global_sums);
	EXPECT_EQ(s.gemm_blocks_per_sm, 8);
	EXPECT_EQ(s.gemm_tile_bytes, 32LL << 20);

	auto		refused = [](void (*set)(pgkm_cuda_config &)) {
		pgkm_cuda_config c {};
		set(c);
		return failure_status([&] { settings_from_config(&c); });
	};
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.force_path = 4; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.force_path = -1; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.gemm_product = 4; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.sums = 2; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.gemm_blocks_per_sm = 9; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.gemm_tile_mb = 1025; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.gemm_tile_mb = -1; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.method = 5; }), PGKM_ERR_INVALID);
	EXPECT_EQ(refused([](pgkm_cuda_config &c) { c.method = -1; }), PGKM_ERR_INVALID);
	EXPECT_EQ(def.method, PGKM_CUDA_METHOD_LLOYD);
	cfg.method = PGKM_CUDA_METHOD_HAMERLY;
	const Plan	ham = make_plan(100000, 32, 256, settings_from_config(&cfg), h100(), 40LL << 30);
	EXPECT_TRUE(ham.hamerly);
	EXPECT_FALSE(ham.yinyang);
	cfg.method = PGKM_CUDA_METHOD_YINYANG;
	const Plan	yy = make_plan(100000, 32, 256, settings_from_config(&cfg), h100(), 40LL << 30);
	EXPECT_TRUE(yy.hamerly) << "Yinyang runs Hamerly's pass with its group bounds";
	EXPECT_TRUE(yy.yinyang);
}

/*
 * Hamerly's bounds are counted: a resident plan holds them beside Lloyd's
 * bytes; a budget that holds the data but not them keeps the data resident
 * without them (Lloyd's passes); d > 1024 and streamed plans never prune.
 */
TEST(Plan, HamerlyBoundsAreCounted)
{
	Settings	ham;
	ham.method = PGKM_CUDA_METHOD_HAMERLY;
	const int64_t n = 1000000;
	const int	d = 32, k = 1024;
	EXPECT_EQ(hamerly_bytes(n, d, k), n * 16 + (int64_t) k * d * 12 + (int64_t) k * 16 + 16);
	const int64_t big = 40LL << 30;
	Plan		lloyd = make_plan(n, d, k, Settings(), h100(), big);
	Plan		p = make_plan(n, d, k, ham, h100(), big);
	EXPECT_FALSE(lloyd.hamerly);
	EXPECT_TRUE(p.hamerly);
	EXPECT_TRUE(p.resident);
	EXPECT_EQ(p.pass_bytes, lloyd.pass_bytes + hamerly_bytes(n, d, k));
	/* just enough for Lloyd resident with the sample: no room for the bounds */
	const int64_t kpp = kpp_scratch_bytes(lloyd.kpp_rows, d, k, h100().sms, true);
	Plan		tight = make_plan(n, d, k, ham, h100(), lloyd.pass_bytes + kpp);
	EXPECT_TRUE(tight.resident);
	EXPECT_FALSE(tight.hamerly);
	EXPECT_EQ(tight.pass_bytes, lloyd.pass_bytes);
	Plan		with = make_plan(n, d, k, ham, h100(), lloyd.pass_bytes + kpp + hamerly_bytes(n, d, k));
	EXPECT_TRUE(with.hamerly);
	EXPECT_LE(with.pass_bytes + kpp, with.budget);
	EXPECT_FALSE(make_plan(n, d, k, ham, h100(), n * d).hamerly) << "streamed";
	EXPECT_FALSE(make_plan(20000, 1100, 16, ham, h100(), big).hamerly) << "d > 1024";
}

/*
 * Yinyang's group bounds are counted beside Hamerly's: a budget short of
 * them runs Lloyd's passes (as Hamerly's does), streamed and d > 1024 never
 * prune; groups of YY_GROUP centroids.
 */
TEST(Plan, YinyangBoundsAreCounted)
{
	Settings	yy;
	yy.method = PGKM_CUDA_METHOD_YINYANG;
	const int64_t n = 1000000;
	const int	d = 32, k = 1024;
	EXPECT_EQ(yinyang_groups(1), 1);
	EXPECT_EQ(yinyang_groups(64), 1);
	EXPECT_EQ(yinyang_groups(65), 2);
	EXPECT_EQ(yinyang_groups(1024), 16);
	EXPECT_EQ(yinyang_bytes(n, k), n * 16 * 8 + (int64_t) k * 8 + 3 * n * 4 + yinyang_sort_bytes(n));
	const int64_t big = 40LL << 30;
	Plan		lloyd = make_plan(n, d, k, Settings(), h100(), big);
	Plan		p = make_plan(n, d, k, yy, h100(), big);
	EXPECT_TRUE(p.hamerly);
	EXPECT_TRUE(p.yinyang);
	EXPECT_EQ(p.pass_bytes, lloyd.pass_bytes + hamerly_bytes(n, d, k) + yinyang_bytes(n, k));
	const int64_t kpp = kpp_scratch_bytes(lloyd.kpp_rows, d, k, h100().sms, true);
	Plan		ham_only = make_plan(n, d, k, yy, h100(), lloyd.pass_bytes + kpp + hamerly_bytes(n, d, k));
	EXPECT_TRUE(ham_only.resident);
	EXPECT_FALSE(ham_only.yinyang);
	EXPECT_FALSE(ham_only.hamerly) << "no room for the group bounds: Lloyd's passes";
	Plan		with = make_plan(n, d, k, yy, h100(),
								 lloyd.pass_bytes + kpp + hamerly_bytes(n, d, k) + yinyang_bytes(n, k));
	EXPECT_TRUE(with.yinyang);
	EXPECT_LE(with.pass_bytes + kpp, with.budget);
	EXPECT_FALSE(make_plan(n, d, k, yy, h100(), n * d).yinyang) << "streamed";
	EXPECT_FALSE(make_plan(20000, 1100, 16, yy, h100(), big).yinyang) << "d > 1024";
	/* more rows than int32 row numbers: resident (4 bytes a row at d = 1), but no bounds */
	const int64_t over = (int64_t) INT32_MAX + 1;
	Plan		huge = make_plan(over, 1, 2, yy, h100(), 1LL << 40);
	EXPECT_TRUE(huge.resident);
	EXPECT_FALSE(huge.hamerly) << "row numbers past int32";
	EXPECT_FALSE(huge.yinyang);
	EXPECT_TRUE(make_plan(over - 1, 1, 2, yy, h100(), 1LL << 40).hamerly);
}

/*
 * Elkan's k bounds per row and sort's ranked k x k pairs are counted the
 * same way: beside Lloyd's bytes when they fit, else Lloyd's passes; never
 * streamed or past d = 1024.
 */
TEST(Plan, ElkanAndSortStateIsCounted)
{
	const int64_t n = 1000000;
	const int	d = 32, k = 1024;
	const int64_t kd = (int64_t) k * d, kk = (int64_t) k * k;
	EXPECT_EQ(elkan_bytes(n, d, k), n * k * 4 + kd * 8 + (int64_t) k * 16 + 16 + kk * 4);
	EXPECT_EQ(sort_bytes(k), 16 + kk * 16 + ((int64_t) k + 1) * 4 + sort_scratch_bytes(k));
	EXPECT_GE(sort_scratch_bytes(k), (int64_t) k * 64);
	const int64_t big = 40LL << 30;
	const Plan	lloyd = make_plan(n, d, k, Settings(), h100(), big);
	const int64_t kpp = kpp_scratch_bytes(lloyd.kpp_rows, d, k, h100().sms, true);
	for (int32_t m : {PGKM_CUDA_METHOD_ELKAN, PGKM_CUDA_METHOD_SORT})
	{
		SCOPED_TRACE(m);
		pgkm_cuda_config cfg {};
		cfg.method = m;
		const Settings s = settings_from_config(&cfg);
		EXPECT_EQ(s.method, m);
		const auto	on = [m](const Plan &p) { return m == PGKM_CUDA_METHOD_ELKAN ? p.elkan : p.sort; };
		const int64_t state = m == PGKM_CUDA_METHOD_ELKAN ? elkan_bytes(n, d, k) : sort_bytes(k);
		const Plan	p = make_plan(n, d, k, s, h100(), big);
		EXPECT_TRUE(on(p));
		EXPECT_FALSE(p.hamerly);
		EXPECT_EQ(p.pass_bytes, lloyd.pass_bytes + state);
		const Plan	tight = make_plan(n, d, k, s, h100(), lloyd.pass_bytes + kpp + state - 1);
		EXPECT_TRUE(tight.resident);
		EXPECT_FALSE(on(tight));
		EXPECT_EQ(tight.pass_bytes, lloyd.pass_bytes);
		EXPECT_TRUE(on(make_plan(n, d, k, s, h100(), lloyd.pass_bytes + kpp + state)));
		EXPECT_FALSE(on(make_plan(n, d, k, s, h100(), n * d))) << "streamed";
		EXPECT_FALSE(on(make_plan(20000, 1100, 16, s, h100(), big))) << "d > 1024";
	}
}

/* The H100 suite's engine shapes (bench/gpu_bench.cpp) at the card's free memory: all resident. */
TEST(Plan, SuiteShapesStayResident)
{
	const int64_t budget = (79LL << 30) - (256LL << 20);
	for (int64_t n : {1000000LL, 10000000LL})
		for (int d : {2, 16, 128, 768})
			for (int k : {8, 64, 1024})
			{
				Plan		p = make_plan(n, d, k, Settings(), h100(), budget);
				EXPECT_TRUE(p.resident) << n << " x " << d << " x " << k;
				EXPECT_EQ(p.loan_bytes, 0);
			}
}

static void
check_fits(int64_t n, int d, int k, int64_t budget, const Settings &s = Settings())
{
	SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d) + " x " + std::to_string(k) + ", budget " +
				 std::to_string(budget));
	Plan		p;
	std::string msg;
	int			st = failure_status([&] { p = make_plan(n, d, k, s, h100(), budget); }, &msg);
	if (st != 0)
	{
		EXPECT_EQ(st, PGKM_ERR_NOMEM);
		EXPECT_NE(msg.find("raise the GPU memory limit"), std::string::npos) << msg;
		return;
	}
	EXPECT_LE(p.pass_bytes, budget);
	EXPECT_GE(p.chunk_rows, 1);
	EXPECT_EQ(p.nchunks, (n + p.chunk_rows - 1) / p.chunk_rows);
	if (p.path == PATH_GEMM)
	{
		EXPECT_GE(p.tile_rows, 1);
		if (p.chunk_rows > p.tile_rows)
		{
			EXPECT_EQ(p.chunk_rows % p.tile_rows, 0);
		}
	}
	const bool	copy = !(p.kpp_rows == n && p.product != PRODUCT_3XTF32);
	if (p.resident)
	{
		EXPECT_EQ(p.loan_bytes, 0);
		EXPECT_LE(p.pass_bytes + kpp_scratch_bytes(p.kpp_rows, d, k, h100().sms, copy), budget)
			<< "a resident plan keeps room for k-means++'s sample";
	}
	else
		EXPECT_GT(p.loan_bytes, 0);
}

TEST(Plan, EveryPlanFitsItsBudget)
{
	struct S { int64_t n; int d, k; };
	for (S s : {S {1000, 2, 8}, S {1000000, 2, 8}, S {1000000, 16, 64}, S {300000, 128, 64}, S {100000, 200, 300},
				S {50000, 768, 1024}, S {200000, 1100, 120}, S {100000000, 1, 4}, S {3000000, 64, 4096}})
	{
		const int64_t data = s.n * s.d * 4;
		for (double f : {0.001, 0.01, 0.1, 0.25, 0.5, 0.9, 1.0, 1.1, 2.0, 3.0})
			check_fits(s.n, s.d, s.k, (int64_t) (data * f) + (1 << 20));
	}
	Settings	tiny_tiles;
	tiny_tiles.gemm_tile_bytes = 1LL << 20;
	check_fits(2000000, 300, 600, 300LL << 20, tiny_tiles);
}

/*
 * Issue 9 section 4's case: data 4x the budget. The plan streams, and at
 * init the memory of the buffers each pass fills afresh (chunk copies, GEMM
 * tile, distances) holds the full k-means++ sample, so the
 * centroids are the resident run's (tests/gpu/test_kmeanspp.cpp checks that
 * on the device).
 */
TEST(Plan, QuarterBudgetStreamsAndHoldsTheSample)
{
	struct S { int64_t n; int d, k; };
	for (S s : {S {1000000, 16, 64}, S {10000000, 16, 64}, S {600000, 128, 64}, S {600000, 200, 300},
				S {10000000, 128, 1024}, S {10000000, 768, 64}})
	{
		SCOPED_TRACE(std::to_string(s.n) + " x " + std::to_string(s.d) + " x " + std::to_string(s.k));
		const int64_t budget = s.n * s.d * 4 / 4;
		Plan		p = make_plan(s.n, s.d, s.k, Settings(), h100(), budget);
		EXPECT_FALSE(p.resident);
		const int64_t avail = budget - (p.pass_bytes - p.loan_bytes);
		EXPECT_EQ(kpp_rows_within(p.kpp_rows, avail, s.d, s.k, h100().sms, true), p.kpp_rows);
	}
}

TEST(Plan, KppRowsWithinIsTheLargestThatFits)
{
	for (int d : {1, 16, 300})
		for (int k : {2, 64, 3000})
		{
			const int64_t want = kpp_sample_rows(1LL << 24, k);
			for (int64_t avail : {0LL, 1000LL, 100000LL, 5000000LL, 77777777LL, 1LL << 34})
			{
				int64_t		r = kpp_rows_within(want, avail, d, k, 132, true);
				SCOPED_TRACE("d=" + std::to_string(d) + " k=" + std::to_string(k) + " avail=" + std::to_string(avail));
				ASSERT_GE(r, 0);
				ASSERT_LE(r, want);
				if (r > 0)
				{
					EXPECT_LE(kpp_scratch_bytes(r, d, k, 132, true), avail);
				}
				if (r < want)
				{
					EXPECT_GT(kpp_scratch_bytes(r + 1, d, k, 132, true), avail);
				}
			}
		}
	EXPECT_EQ(kpp_sample_rows(1000, 8), 1000);
	EXPECT_EQ(kpp_sample_rows(10000000, 8), 131072);
	EXPECT_EQ(kpp_sample_rows(10000000, 2048), 262144);
	EXPECT_EQ(kpp_sample_rows(100000000, 100000), 1LL << 22);
}

/* The "too small" error says how much streaming needs, and that much is enough. */
TEST(Plan, TooSmallBudgetNamesWhatIsEnough)
{
	struct S { int64_t n; int d, k; };
	for (S s : {S {1000000, 16, 64}, S {100000, 200, 300}, S {50000, 768, 1024}})
	{
		std::string msg;
		ASSERT_EQ(failure_status([&] { make_plan(s.n, s.d, s.k, Settings(), h100(), 1 << 20); }, &msg), PGKM_ERR_NOMEM);
		size_t		at = msg.find("needs at least ");
		ASSERT_NE(at, std::string::npos) << msg;
		int64_t		need = std::strtoll(msg.c_str() + at + 15, nullptr, 10);
		EXPECT_EQ(failure_status([&] { make_plan(s.n, s.d, s.k, Settings(), h100(), need); }), 0) << msg;
		EXPECT_EQ(failure_status([&] { make_plan(s.n, s.d, s.k, Settings(), h100(), need - 1); }), PGKM_ERR_NOMEM)
			<< msg;
	}
}
