/*
 * bounded_gpu_util.cpp: the bounded GPU methods' shared test helpers
 * (bounded_gpu_util.h).
 */
#include "bounded_gpu_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

pgkm_test::EngineResult
run_method(const std::vector<float> &x, int d, const std::vector<double> &init, int method, int device,
		   int max_iter, int64_t mem_limit)
{
	const int	k = (int) (init.size() / d);
	pgkm_options o = gpu_test_options(k, &init, device, max_iter, mem_limit);
	o.method = method;
	pgkm_test::EngineResult r = pgkm_test::run_engine(x, d, o);
	EXPECT_EQ(r.status, PGKM_DONE) << r.err;
	return r;
}

pgkm_test::EngineResult
expect_exact_method(int method, const std::vector<float> &x, int d, const std::vector<double> &init, int max_iter,
					const std::string &what)
{
	SCOPED_TRACE(what + " (" + pgkm_method_name(method) + ")");
	pgkm_test::EngineResult gm = run_method(x, d, init, method, PGKM_DEVICE_GPU, max_iter);
	pgkm_test::EngineResult gl = run_method(x, d, init, PGKM_METHOD_LLOYD, PGKM_DEVICE_GPU, max_iter);
	pgkm_test::EngineResult cl = run_method(x, d, init, PGKM_METHOD_LLOYD, PGKM_DEVICE_CPU, max_iter);
	EXPECT_EQ(gm.device, "gpu");
	if (method != PGKM_METHOD_AUTO)	/* auto's passes follow the clock: its callers check its trail */
	{
		EXPECT_EQ(gm.method_used, pgkm_method_name(method));
	}
	EXPECT_EQ(gm.labels, gl.labels);
	EXPECT_EQ(gm.iterations, gl.iterations);
	EXPECT_EQ(gm.k, gl.k);
	EXPECT_EQ(gm.centroids, gl.centroids) << "the same labels give the same fixed-point sums";
	EXPECT_EQ(gm.sizes, gl.sizes);
	EXPECT_NEAR(gm.inertia, gl.inertia, 1e-12 * gl.inertia);
	EXPECT_EQ(gm.progress.size(), gl.progress.size());
	for (size_t i = 0; i < std::min(gm.progress.size(), gl.progress.size()); i++)
	{
		EXPECT_EQ(gm.progress[i].moved, gl.progress[i].moved) << "step " << i;
		if (!std::isnan(gl.progress[i].inertia))	/* NaN at a given init */
		{
			EXPECT_NEAR(gm.progress[i].inertia, gl.progress[i].inertia, 1e-12 * gl.progress[i].inertia) << "step " << i;
		}
	}
	expect_same_run(gm, cl);
	EXPECT_LE(gm.distance_computations, gm.distance_computations_lloyd);
	return gm;
}

void
expect_exact_edge_shapes(int method, const EdgeShapeKs &ks)
{
	const auto	g = integer_grid(6000, 3, 9);	/* 9^3 grid points */
	expect_exact_method(method, g, 3, first_rows(g, 3, ks.grid), 40, "integer grid ties");

	const auto	dup = repeated_rows(5000, 8, 5, 3, 0.25);	/* 1000 copies each */
	expect_exact_method(method, dup, 8, first_rows(dup, 8, ks.dup), 30, "duplicates, k > distinct rows");

	auto		line = gpu_blobs(ks.line_rows, 1, 10, 31, 1.0);
	expect_exact_method(method, line, 1, pgkm_test::pick_rows(line, 1, ks.line, 7), 60, "d = 1");

	auto		b = gpu_blobs(3000, 4, 3, 5, 1.0);
	expect_exact_method(method, b, 4, pgkm_test::pick_rows(b, 4, 1, 9), 10, "k = 1");

	auto		small = gpu_blobs(ks.all, 5, 4, 11, 1.0);
	expect_exact_method(method, small, 5, first_rows(small, 5, ks.all), 10, "k = n");
}

void
expect_exact_empty_and_merging(int method)
{
	auto		x = gpu_blobs(30000, 24, 4, 41, 2.0);
	std::vector<double> init = pgkm_test::pick_rows(x, 24, 6, 3);
	for (int j = 0; j < 24; j++)
	{
		init[4 * 24 + j] = 1e3 + j;	/* far from every row: empty, repaired */
		init[5 * 24 + j] = -1e3;
	}
	expect_exact_method(method, x, 24, init, 40, "empty clusters");

	/* 12 centroids drawn from 3 wide, overlapping blobs: they drift together and clusters merge */
	auto		m = gpu_blobs(40000, 40, 3, 43, 6.0);
	expect_exact_method(method, m, 40, pgkm_test::pick_rows(m, 40, 12, 8), 200, "merging clusters");
}

std::vector<double>
first_rows(const std::vector<float> &x, int d, int k)
{
	return std::vector<double>(x.begin(), x.begin() + (size_t) k * d);
}

std::vector<float>
integer_grid(int64_t n, int d, int m)
{
	std::vector<float> g;
	for (int64_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			g.push_back((float) ((i * 7 + j * 13) % m));
	return g;
}

std::vector<float>
repeated_rows(int64_t n, int d, int distinct, int step, double col_step)
{
	std::vector<float> x;
	for (int64_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			x.push_back((float) ((i % distinct) * step + j * col_step));
	return x;
}

void
expect_streamed_runs_lloyd(int method, int k)
{
	const int64_t n = 100000;
	const int	d = 32;
	auto		x = gpu_blobs(n, d, k, 61, 1.0);
	auto		init = pgkm_test::pick_rows(x, d, k, 2);
	const int64_t limit = n * 4 + (4 << 20) + (int64_t) k * d * 32;
	pgkm_test::EngineResult st = run_method(x, d, init, method, PGKM_DEVICE_GPU, 20, limit);
	pgkm_test::EngineResult gl = run_method(x, d, init, PGKM_METHOD_LLOYD, PGKM_DEVICE_GPU, 20);
	EXPECT_EQ(st.method_used, "lloyd");
	EXPECT_EQ(st.labels, gl.labels);
	EXPECT_EQ(st.centroids, gl.centroids);
}
