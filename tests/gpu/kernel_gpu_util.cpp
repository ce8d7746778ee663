/*
 * kernel_gpu_util.cpp: the GPU kernel k-means tests' helpers (kernel_gpu_util.h).
 */
#include "kernel_gpu_util.h"

#include "gpu_plugin.h"
#include "gpu_test_util.h"
#include "kernel_kmeans.h"
#include "stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

const pgkm::CudaPlugin *
kernel_plugin()
{
	std::string why;
	const pgkm::CudaPlugin *p = pgkm::load_cuda_plugin(plugin_path(), &why);
	/* thrown, so that a test fails with the reason instead of the binary crashing on a null device */
	if (!p)
		throw std::runtime_error("the CUDA plugin does not load: " + why);
	if (!pgkm::cuda_plugin_has_kernel(p))
		throw std::runtime_error("the CUDA plugin has no kernel k-means entry points");
	return p;
}

pgkm::KernelParams
kparams(int kind, double gamma, double coef0, int degree)
{
	pgkm::KernelParams p;
	p.kind = kind;
	p.gamma = gamma;
	p.coef0 = coef0;
	p.degree = degree;
	return p;
}

KData::KData(std::vector<float> rows, int32_t dims) : x(std::move(rows)), d(dims)
{
	n = (int64_t) x.size() / d;
	pool.reset(new pgkm::ThreadPool(2, nullptr, nullptr));
	mean = pgkm::data_statistics(x.data(), n, d, pool.get()).mean;
}

std::unique_ptr<pgkm::KernelDevice>
cpu_kdev(KData &data, const pgkm::KernelParams &p, int32_t kmax, bool stored)
{
	auto		dev = pgkm::make_cpu_kernel_device(data.x.data(), data.n, data.d, data.mean.data(), p, stored, kmax,
												   data.pool.get());
	dev->build();
	return dev;
}

std::unique_ptr<pgkm::KernelDevice>
gpu_kdev(KData &data, const pgkm::KernelParams &p, int32_t kmax, const pgkm::GpuKernelOptions &o,
		 pgkm_interrupt_fn interrupt, void *ctx)
{
	auto		dev = pgkm::make_gpu_kernel_device(kernel_plugin(), data.x.data(), data.n, data.d, data.mean.data(),
												   p, o, kmax, interrupt, ctx);
	dev->build();
	return dev;
}

pgkm::GpuKernelOptions
kopts(int matrix, int precision, int product, int build)
{
	pgkm::GpuKernelOptions o;
	o.matrix = matrix;
	o.precision = precision;
	o.product = product;
	o.build = build;
	return o;
}

PassOut
run_pass(pgkm::KernelDevice &dev, const std::vector<int32_t> &labels, int32_t k)
{
	const int64_t n = (int64_t) labels.size();
	std::vector<int64_t> sizes(k, 0);
	for (int32_t l : labels)
		sizes[l]++;
	PassOut		o;
	o.labels.assign(n, -7);
	o.dist2.assign(n, NAN);
	o.norms.assign(k, NAN);
	o.cross.assign(k, NAN);
	pgkm::KernelPass kp;
	kp.labels = o.labels.data();
	kp.dist2 = o.dist2.data();
	kp.norms = o.norms.data();
	kp.cross = o.cross.data();
	dev.pass(labels.data(), sizes.data(), k, &kp);
	o.kernel_sum = kp.kernel_sum;
	return o;
}

LoopOut
run_loop(pgkm::KernelDevice &dev, std::vector<int32_t> labels, int32_t k, int max_iter)
{
	LoopOut		out;
	for (int s = 0; s < max_iter; s++)
	{
		PassOut		p = run_pass(dev, labels, k);
		out.passes = s + 1;
		out.objective = 0;
		for (double v : p.dist2)
			out.objective += std::max(v, 0.0);
		const bool	same = p.labels == labels;
		labels.swap(p.labels);
		if (same)
		{
			out.converged = true;
			break;
		}
	}
	out.labels = labels;
	return out;
}

int64_t
not_near_ties(const KData &data, const pgkm::KernelParams &p, const std::vector<int32_t> &partition, int32_t k,
			  const std::vector<int32_t> &la, const std::vector<int32_t> &lb, double rel)
{
	std::vector<int64_t> differ;
	for (size_t i = 0; i < la.size(); i++)
		if (la[i] != lb[i])
			differ.push_back((int64_t) i);
	if (differ.empty())
		return 0;
	pgkm_test::RefKernel rp {p.kind, p.gamma, p.coef0, p.degree};
	std::vector<double> K = pgkm_test::ref_kernel_matrix(data.x, data.d, rp);
	std::vector<double> D = pgkm_test::ref_kernel_distances(K, data.n, partition, k);
	double		scale = 0;
	for (int64_t i = 0; i < data.n; i++)
		scale = std::max(scale, std::fabs(K[(size_t) i * data.n + i]));
	int64_t		bad = 0;
	for (int64_t i : differ)
	{
		const double a = D[(size_t) i * k + la[i]], b = D[(size_t) i * k + lb[i]];
		if (!(std::fabs(a - b) <= rel * scale))
			bad++;
	}
	return bad;
}

std::vector<int32_t>
random_labels(int64_t n, int32_t k, uint64_t seed)
{
	std::mt19937_64 g(seed);
	std::vector<int32_t> l(n);
	for (auto &v : l)
		v = (int32_t) (g() % (uint64_t) k);
	return l;
}

std::vector<float>
moons(int64_t n, double noise, uint64_t seed, std::vector<int32_t> *labels)
{
	std::mt19937_64 g(seed);
	std::normal_distribution<double> nd(0.0, noise);
	std::vector<float> x((size_t) n * 2);
	labels->assign(n, 0);
	const double pi = 3.14159265358979323846;
	for (int64_t i = 0; i < n; i++)
	{
		const bool	inner = i >= n / 2;
		const int64_t j = inner ? i - n / 2 : i, m = inner ? n - n / 2 : n / 2;
		const double t = pi * (double) j / (double) std::max<int64_t>(m - 1, 1);
		double		a = inner ? 1 - std::cos(t) : std::cos(t), b = inner ? 0.5 - std::sin(t) : std::sin(t);
		x[(size_t) i * 2] = (float) (a + nd(g));
		x[(size_t) i * 2 + 1] = (float) (b + nd(g));
		(*labels)[i] = inner ? 1 : 0;
	}
	return x;
}

LoopOut
best_of_kmeanspp(pgkm::KernelDevice &dev, pgkm::ThreadPool *pool, int64_t n, int32_t k, int tries, int max_iter)
{
	LoopOut		best;
	for (int t = 1; t <= tries; t++)
	{
		std::vector<int64_t> seeds(k);
		std::vector<int32_t> init(n);
		double		potential = 0;
		int32_t		found = pgkm::kernel_kmeanspp(&dev, n, k, (uint64_t) t, pool, seeds.data(), init.data(),
												  &potential);
		EXPECT_EQ(found, k);
		LoopOut		r = run_loop(dev, init, k, max_iter);
		if (t == 1 || r.objective < best.objective)
			best = r;
	}
	return best;
}
