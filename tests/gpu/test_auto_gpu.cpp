/*
 * test_auto_gpu.cpp: switching methods mid-run (set_method, ABI 6) and
 * method 'auto' on the GPU. Through the ABI, a fixed schedule of Lloyd's
 * and a bounded method's passes gives GPU Lloyd's run pass for pass
 * (moves, sizes, centroids bit for bit, inertia to its summation order's
 * rounding, final labels), each pass reporting the method
 * asked for; the first bounded pass after Lloyd's computes every distance.
 * Through the engine, 'auto' (its switches follow the clock) gives GPU
 * Lloyd's and the CPU engine's run on clustered data, near-ties and the
 * edge shapes.
 */
#include "bounded_gpu_util.h"
#include "near_ties.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace
{

constexpr int32_t L = PGKM_CUDA_METHOD_LLOYD;

/* One pass's results through the ABI. */
struct Pass
{
	pgkm_cuda_iter st {};
	std::vector<double> c;
	std::vector<int64_t> sizes;
};

/* Passes of a run created for `method`, pass p asked to run schedule[p]; labels from assign() at the end. */
std::vector<Pass>
scheduled_run(const std::vector<float> &x, int64_t n, int d, const std::vector<double> &init, int32_t method,
			  const std::vector<int32_t> &schedule, std::vector<int32_t> *labels, int64_t mem_limit = 0)
{
	const int	k = (int) (init.size() / d);
	pgkm_cuda_config cfg = plugin_config(1, mem_limit);
	cfg.method = method;
	void	   *h = nullptr;
	char		err[512] = "";
	std::vector<Pass> out;
	EXPECT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	if (!h)
		return out;
	EXPECT_EQ(api()->set_centroids(h, init.data(), err, sizeof(err)), 0) << err;
	for (size_t p = 0; p < schedule.size(); p++)
	{
		int32_t		runs = -1;
		EXPECT_EQ(api()->set_method(h, schedule[p], &runs, err, sizeof(err)), 0) << err;
		EXPECT_EQ(runs, mem_limit ? L : schedule[p]) << "pass " << p;
		Pass		q;
		q.c.resize((size_t) k * d);
		q.sizes.resize(k);
		EXPECT_EQ(api()->iterate(h, &q.st, q.c.data(), q.sizes.data(), err, sizeof(err)), 0) << err;
		EXPECT_EQ(q.st.method, runs) << "pass " << p;
		out.push_back(q);
	}
	labels->assign(n, -1);
	std::vector<double> dist2(n);
	std::vector<int64_t> sizes(k);
	double		inertia = 0;
	EXPECT_EQ(api()->assign(h, labels->data(), dist2.data(), sizes.data(), &inertia, err, sizeof(err)), 0) << err;
	api()->destroy(h);
	return out;
}

/*
 * The schedule's run against Lloyd's: every pass the same, and what the
 * bounded passes computed (sort carries no bounds: its every pass prunes).
 */
void
expect_schedule_is_lloyd(const std::vector<float> &x, int64_t n, int d, const std::vector<double> &init,
						 int32_t method, const std::vector<int32_t> &schedule, const std::string &what)
{
	SCOPED_TRACE(what);
	const int	k = (int) (init.size() / d);
	std::vector<int32_t> lloyd_labels, labels;
	const auto	lloyd = scheduled_run(x, n, d, init, method, std::vector<int32_t>(schedule.size(), L), &lloyd_labels);
	const auto	sw = scheduled_run(x, n, d, init, method, schedule, &labels);
	ASSERT_EQ(sw.size(), lloyd.size());
	int64_t		pruned = 0;
	for (size_t p = 0; p < sw.size(); p++)
	{
		/* summed in each pass's own order: Lloyd's kernel's partials, or the bounded pass's sorted update */
		EXPECT_NEAR(sw[p].st.inertia, lloyd[p].st.inertia, 1e-12 * lloyd[p].st.inertia) << "pass " << p;
		EXPECT_EQ(sw[p].st.moved, lloyd[p].st.moved) << "pass " << p;
		EXPECT_EQ(sw[p].c, lloyd[p].c) << "pass " << p << ": the same labels give the same fixed-point sums";
		EXPECT_EQ(sw[p].sizes, lloyd[p].sizes) << "pass " << p;
		if (schedule[p] == L)
		{
			EXPECT_EQ(sw[p].st.distances, -1) << "pass " << p;
		}
		else if ((p == 0 || schedule[p - 1] == L) && method != PGKM_CUDA_METHOD_SORT)
		{
			EXPECT_EQ(sw[p].st.distances, n * k) << "pass " << p << ": the bounds start afresh after Lloyd's passes";
		}
		else
		{
			EXPECT_LT(sw[p].st.distances, n * k) << "pass " << p;
			pruned++;
		}
	}
	EXPECT_GT(pruned, 0);
	EXPECT_EQ(labels, lloyd_labels);
}

/* Switches in every order: Lloyd first, the bounded method first, single passes of each, runs of each. */
std::vector<int32_t>
schedule_for(int32_t m)
{
	return {L, L, m, m, m, L, m, m, L, L, m, L, m, m, m, m, L, m};
}

}							/* namespace */

TEST(AutoGpu, SwitchedPassesAreLloydsRun)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	for (int32_t m : {PGKM_CUDA_METHOD_HAMERLY, PGKM_CUDA_METHOD_YINYANG, PGKM_CUDA_METHOD_ELKAN,
					  PGKM_CUDA_METHOD_SORT})
	{
		const std::string name = pgkm_method_name(m == PGKM_CUDA_METHOD_HAMERLY ? PGKM_METHOD_HAMERLY :
												  m == PGKM_CUDA_METHOD_YINYANG ? PGKM_METHOD_YINYANG :
												  m == PGKM_CUDA_METHOD_ELKAN ? PGKM_METHOD_ELKAN : PGKM_METHOD_SORT);
		/* clustered: most rows settle; 3 Yinyang groups at k = 160 */
		auto		x = gpu_blobs(60000, 24, 40, 81, 0.5);
		expect_schedule_is_lloyd(x, 60000, 24, pgkm_test::pick_rows(x, 24, 160, 3), m, schedule_for(m),
								 name + " clustered, k = 160");
		/* starting with the bounded method, and a 1-D line */
		const std::vector<int32_t> all = schedule_for(m), s(all.begin() + 2, all.end());
		auto		line = gpu_blobs(20000, 1, 10, 31, 1.0);
		expect_schedule_is_lloyd(line, 20000, 1, pgkm_test::pick_rows(line, 1, 12, 7), m, s, name + " d = 1");
	}
	/* near-ties at the float level's resolution, on the TILED storage */
	pgkm_test::NearTies t = pgkm_test::near_ties(20000, 16, 96, 0.0, 5);
	expect_schedule_is_lloyd(t.x, 20000, 16, t.c, PGKM_CUDA_METHOD_YINYANG, schedule_for(PGKM_CUDA_METHOD_YINYANG),
							 "yinyang near-ties");
}

/* Asking for a method the run was not created for is refused; without room for bounds every pass is Lloyd's. */
TEST(AutoGpu, SetMethodContract)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	const int64_t n = 20000;
	const int	d = 8, k = 64;
	auto		x = gpu_blobs(n, d, k, 17, 0.5);
	auto		init = pgkm_test::pick_rows(x, d, k, 2);
	pgkm_cuda_config cfg = plugin_config(1);
	cfg.method = PGKM_CUDA_METHOD_HAMERLY;
	void	   *h = nullptr;
	char		err[512] = "";
	ASSERT_EQ(api()->create(x.data(), n, d, k, &cfg, &h, err, sizeof(err)), 0) << err;
	int32_t		runs = -1;
	EXPECT_EQ(api()->set_method(h, PGKM_CUDA_METHOD_YINYANG, &runs, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_STREQ(err, "GPU method 2: this run was created for method 1 and Lloyd's passes");
	EXPECT_EQ(api()->set_method(h, 9, &runs, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_EQ(api()->set_method(h, PGKM_CUDA_METHOD_HAMERLY, nullptr, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_EQ(api()->set_method(nullptr, L, &runs, err, sizeof(err)), PGKM_ERR_INVALID);
	EXPECT_EQ(api()->set_method(h, PGKM_CUDA_METHOD_HAMERLY, &runs, err, sizeof(err)), 0) << err;
	EXPECT_EQ(runs, PGKM_CUDA_METHOD_HAMERLY);
	api()->destroy(h);

	/* a budget that streams the rows holds no bounds: set_method says Lloyd, and the passes are Lloyd's */
	const int64_t big = 400000;
	auto		xb = gpu_blobs(big, 32, 16, 19, 0.5);
	std::vector<int32_t> labels, lloyd_labels;
	const std::vector<int32_t> s = {PGKM_CUDA_METHOD_HAMERLY, L, PGKM_CUDA_METHOD_HAMERLY, PGKM_CUDA_METHOD_HAMERLY};
	const auto	sw = scheduled_run(xb, big, 32, pgkm_test::pick_rows(xb, 32, 16, 4), PGKM_CUDA_METHOD_HAMERLY, s,
								   &labels, big * 4 + (4 << 20) + 16 * 32 * 32);
	const auto	ll = scheduled_run(xb, big, 32, pgkm_test::pick_rows(xb, 32, 16, 4), PGKM_CUDA_METHOD_LLOYD,
								   std::vector<int32_t>(4, L), &lloyd_labels);
	ASSERT_EQ(sw.size(), ll.size());
	for (size_t p = 0; p < sw.size(); p++)
		EXPECT_EQ(sw[p].c, ll[p].c) << "pass " << p;
	EXPECT_EQ(labels, lloyd_labels);
}

/* 'auto' through the engine: GPU Lloyd's run and the CPU engine's, whatever it switched to. */
TEST(AutoGpu, AutoIsLloydsRun)
{
	ASSERT_NE(api(), nullptr) << "cannot load " << plugin_path();
	/* Hamerly's candidate shape, and Yinyang's (d >= 64, k >= 128), well clustered */
	for (int d : {16, 64})
	{
		auto		x = gpu_blobs(400000, d, 256, 91 + d, 0.3);
		pgkm_test::EngineResult r = expect_exact_method(PGKM_METHOD_AUTO, x, d, pgkm_test::pick_rows(x, d, 256, 5), 60,
														"clustered d = " + std::to_string(d));
		printf("[ auto ] n = 400000, d = %d, k = 256: %d iterations, %s, %.1f %% of distances skipped\n", d,
			   r.iterations, r.method_used.c_str(),
			   100 * (1.0 - (double) r.distance_computations / (double) r.distance_computations_lloyd));
		EXPECT_EQ(r.method_used.rfind("lloyd", 0), 0u) << "Lloyd's passes are timed first";
	}
	EdgeShapeKs ks;
	ks.grid = 64;
	ks.line = 64;
	ks.all = 100;
	expect_exact_edge_shapes(PGKM_METHOD_AUTO, ks);
	expect_exact_empty_and_merging(PGKM_METHOD_AUTO);
}
