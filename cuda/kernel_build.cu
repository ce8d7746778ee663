/*
 * kernel_build.cu: a kernel run's rows on the device and its K.
 *
 * At create the raw rows are uploaded, centred on their float column means
 * into a zero-padded copy (dp = d rounded up to 8, so cuBLAS gets aligned
 * rows; 3xTF32 splits it into a TF32 part and a remainder), and each row's
 * statistics are taken in fp64 (one warp per row, fixed order): K_ii from the
 * raw norm, ||x'_i||^2 and <x'_i, m>, as the CPU device takes them.
 *
 * A stored K is built row panel by row panel: cuBLAS writes the panel's Gram
 * products (GEMM: against every row; SYRK: SSYRK on the diagonal block and
 * SGEMM right of it, the upper triangle only), then one kernel maps the
 * upper triangle's entries (device/kernel_map.cuh) and writes each to K
 * twice, at (i, l) and, through a shared-memory transpose, at (l, i): K is
 * exactly symmetric and the triangle copy costs no extra pass.
 */
#include "device/kelem.cuh"
#include "device/reduce.cuh"
#include "device/tf32.cuh"
#include "kernel_run.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <type_traits>

namespace pgkm_cuda
{

void *
DeviceArena::alloc_bytes(int64_t bytes)
{
	if (bytes <= 0)
		return nullptr;
	if (budget > 0 && allocated + bytes > budget)
		fail(PGKM_ERR_NOMEM, "GPU memory budget exceeded: need %lld more bytes, %lld of %lld in use",
			 (long long) bytes, (long long) allocated, (long long) budget);
	void	   *p = nullptr;
	CK(cudaMalloc(&p, (size_t) bytes));
	allocated += bytes;
	live.emplace_back(p, bytes);
	return p;
}

void
DeviceArena::release(void *p)
{
	for (size_t i = 0; i < live.size(); i++)
		if (live[i].first == p)
		{
			cudaFree(p);
			allocated -= live[i].second;
			live.erase(live.begin() + i);
			return;
		}
}

DeviceArena::~DeviceArena()
{
	for (auto &a : live)
		cudaFree(a.first);
}

KRun::~KRun()
{
	if (st)
		cudaStreamSynchronize(st);
	if (blas)
		cublasDestroy(blas);
	for (cudaEvent_t e : {ev_begin, ev_end, ev_throttle[0], ev_throttle[1]})
		if (e)
			cudaEventDestroy(e);
	if (st)
		cudaStreamDestroy(st);
	for (void *p : {(void *) h_in, (void *) h_chunks, (void *) h_clusters, (void *) h_out_labels, (void *) h_out})
		if (p)
			cudaFreeHost(p);
	cudaGetLastError();
}

void
kernel_poll(KRun &r)
{
	if (r.interrupt && r.interrupt(r.interrupt_ctx))
	{
		cudaStreamSynchronize(r.st);
		throw Failure {PGKM_INTERRUPTED, "canceled"};
	}
}

void
kernel_check_flag(KRun &r)
{
	unsigned int f = 0;
	CK(cudaMemcpyAsync(&f, r.d_flag, sizeof(f), cudaMemcpyDeviceToHost, r.st));
	CK(cudaStreamSynchronize(r.st));
	if (f & 1u)
		fail(PGKM_ERR_INVALID, "the kernel overflows float32 on this data");
	if (f & 2u)
		fail(PGKM_ERR_INVALID, "the kernel matrix exceeds float16's range (65504) on this data: "
			 "store it in bfloat16 or float32");
}

/*
 * xc[i][j] = x[i][j] - meanf[j] for j < d, 0 up to dp (rows xw apart);
 * SPLIT3: the row as [hi lo hi], hi = tf32_hi(x'), lo = x' - hi.
 */
template <bool SPLIT3>
__global__ void
centre_kernel(const float *x, int64_t n, int d, int dp, int xw, const float *meanf, float *xc)
{
	const int64_t total = n * dp;
	for (int64_t e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t i = e / dp;
		const int	j = (int) (e - i * dp);
		const float v = j < d ? __fsub_rn(x[i * d + j], meanf[j]) : 0.0f;
		float	   *row = xc + i * xw;
		if (!SPLIT3)
			row[j] = v;
		else
		{
			const float h = tf32_hi(v);
			row[j] = h;
			row[dp + j] = __fsub_rn(v, h);
			row[2 * dp + j] = h;
		}
	}
}

__global__ void
split_kernel(float *hi, float *lo, int64_t count)
{
	for (int64_t e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; e < count; e += (int64_t) gridDim.x * blockDim.x)
	{
		const float v = hi[e], h = tf32_hi(v);
		hi[e] = h;
		lo[e] = __fsub_rn(v, h);
	}
}

/* One warp per row: ||x'||^2, <x', m>, and K_ii from the raw norm, in fp64 (fixed shuffle order). */
__global__ void
row_stats_kernel(const float *x, int64_t n, int d, const float *meanf, const double *mean, KMapArgs m)
{
	const int	lane = threadIdx.x & 31;
	const int64_t warps = (int64_t) gridDim.x * (blockDim.x >> 5);
	for (int64_t i = (int64_t) blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); i < n; i += warps)
	{
		double		cn = 0, co = 0, raw = 0;
		for (int j = lane; j < d; j += 32)
		{
			const float v = x[i * d + j];
			const double c = __fsub_rn(v, meanf[j]), dv = v;
			cn = __dadd_rn(cn, __dmul_rn(c, c));
			co = __dadd_rn(co, __dmul_rn(c, mean[j]));
			raw = __dadd_rn(raw, __dmul_rn(dv, dv));
		}
		for (int o = 16; o > 0; o >>= 1)
		{
			cn += __shfl_down_sync(FULL, cn, o);
			co += __shfl_down_sync(FULL, co, o);
			raw += __shfl_down_sync(FULL, raw, o);
		}
		if (lane == 0)
		{
			const_cast<double *>(m.cnorm)[i] = cn;
			const_cast<double *>(m.coff)[i] = co;
			const double k = m.kind == PGKM_KERNEL_RBF ? kmap_of_sqdist(m, 0.0) : kmap_of_dot(m, raw);
			const_cast<double *>(m.diag)[i] = (double) (float) k;
		}
	}
}

static int
grid_for(int64_t items, int threads, int64_t cap = 8192)
{
	return (int) std::max<int64_t>(1, std::min<int64_t>(cap, (items + threads - 1) / threads));
}

void
kernel_prepare(KRun &r, double *diag_out)
{
	const KernelPlan &p = r.plan;
	const int64_t n = r.n;
	const int	d = r.d, dp = p.dp;
	CK(cudaMemcpyAsync(r.d_x, r.x, (size_t) n * d * 4, cudaMemcpyHostToDevice, r.st));
	double	   *d_mean = r.d_mean;
	float	   *d_meanf = reinterpret_cast<float *>(r.d_mean + d);
	CK(cudaMemcpyAsync(d_mean, r.mean.data(), (size_t) d * 8, cudaMemcpyHostToDevice, r.st));
	CK(cudaMemcpyAsync(d_meanf, r.meanf.data(), (size_t) d * 4, cudaMemcpyHostToDevice, r.st));
	if (p.xw == 3 * dp)
		centre_kernel<true><<<grid_for(n * dp, 256), 256, 0, r.st>>>(r.d_x, n, d, dp, p.xw, d_meanf, r.d_xc);
	else
		centre_kernel<false><<<grid_for(n * dp, 256), 256, 0, r.st>>>(r.d_x, n, d, dp, p.xw, d_meanf, r.d_xc);
	CKLAUNCH("centre_kernel");
	row_stats_kernel<<<grid_for(n * 32, 256), 256, 0, r.st>>>(r.d_x, n, d, d_meanf, d_mean, r.map);
	CKLAUNCH("row_stats_kernel");
	if (p.tf32x3 && p.stored)
	{
		split_kernel<<<grid_for(n * dp, 256), 256, 0, r.st>>>(r.d_xc, r.d_xlo, n * dp);
		CKLAUNCH("split_kernel");
	}
	CK(cudaMemcpyAsync(diag_out, r.d_diag, (size_t) n * 8, cudaMemcpyDeviceToHost, r.st));
	CK(cudaStreamSynchronize(r.st));
}

/*
 * C (col-major, m x cols, ldc) = A^T B over dp features, A = rows a0.. of
 * the centred copy (m of them), B = rows b0.. (cols of them): fp32, or
 * 3xTF32 with the small cross terms first. beta 0: C is overwritten.
 */
static void
kernel_gram(KRun &r, const float *ahi, const float *alo, int64_t a0, int64_t m, const float *bhi, const float *blo,
			int64_t b0, int64_t cols, float *C, int64_t ldc)
{
	const int	dp = r.plan.dp;
	const float one = 1.0f, zero = 0.0f;
	auto		gemm = [&](const float *A, const float *B, const float *beta) {
		cublasStatus_t bs = cublasSgemm(r.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int) m, (int) cols, dp, &one,
										A + a0 * dp, dp, B + b0 * dp, dp, beta, C, (int) ldc);
		if (bs != CUBLAS_STATUS_SUCCESS)
			fail_blas(bs, "kernel Gram product");
	};
	if (!r.plan.tf32x3)
	{
		gemm(ahi, bhi, &zero);
		return;
	}
	gemm(alo, bhi, &zero);
	gemm(ahi, blo, &one);
	gemm(ahi, bhi, &one);
}

/*
 * One 32 x 32 tile of a panel: rows i0 + rbase.., columns lbase.. (l >= i
 * only). G[r * ldg + (l - c0)] is the panel's Gram entry; K gets the mapped
 * value at (i, l) and, transposed through shared memory, at (l, i).
 */
template <typename T>
__global__ void __launch_bounds__(256)
map_mirror_kernel(const float *G, int64_t ldg, int64_t c0, int64_t i0, int64_t rows, int64_t n, T *K, int64_t ld,
				  KMapArgs m, double mu)
{
	const int64_t tr = blockIdx.y, tc = blockIdx.x;
	if (tc < tr)
		return;					/* below the diagonal: its mirror is written by tile (tc, tr) */
	__shared__ float tile[KMAP_TILE][KMAP_TILE + 1];
	const int64_t rbase = tr * KMAP_TILE, lbase = i0 + tc * KMAP_TILE;
	const int	tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
	for (int j = ty; j < KMAP_TILE; j += 8)
	{
		const int64_t rr = rbase + j, l = lbase + tx, i = i0 + rr;
		float		v = 0.0f;
		if (rr < rows && l < n && l >= i)
		{
			if (l == i)
				v = (float) m.diag[i];
			else
				v = kmap_float(m, kmap_value(m, G[rr * ldg + (l - c0)], i, l, m.cnorm[i], m.coff[i], m.cnorm[l],
											 m.coff[l]));
			v = (float) ((double) v - mu);
			if (std::is_same<T, __half>::value && !(fabsf(v) <= 65504.0f) && isfinite(v))
				atomicOr(m.flag, 2u);
			K[i * ld + l] = to_elem<T>(v);
		}
		tile[j][tx] = v;
	}
	__syncthreads();
	for (int j = ty; j < KMAP_TILE; j += 8)
	{
		const int64_t l = lbase + j, rr = rbase + tx, i = i0 + rr;
		if (rr < rows && l < n && l > i)
			K[l * ld + i] = to_elem<T>(tile[tx][j]);
	}
}

/*
 * The mean of K over the first panel's first rs rows, right of the diagonal
 * (G as in map_mirror_kernel): one fp64 partial per block in a fixed order,
 * summed by the caller.
 */
__global__ void __launch_bounds__(256)
sample_sum_kernel(const float *G, int64_t ldg, int64_t c0, int64_t i0, int64_t rs, int64_t n, KMapArgs m,
				  double *partials)
{
	__shared__ double sh[256];
	const int64_t width = n - i0, total = rs * width;
	double		s = 0;
	for (int64_t e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t rr = e / width, l = i0 + (e - rr * width), i = i0 + rr;
		if (l > i)
			s += (double) kmap_float(m, kmap_value(m, G[rr * ldg + (l - c0)], i, l, m.cnorm[i], m.coff[i],
												   m.cnorm[l], m.coff[l]));
	}
	s = block_tree_sum(s, sh);
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s;
}

/*
 * A half-precision K keeps 8 (bf16) or 11 (fp16) significant bits of each
 * value: stored as K - mu, with mu the mean of a sample of K, the bits go
 * to how values differ from each other rather than to what they share (K
 * of data far from the origin is a large common value plus small
 * differences). The pass adds |c| mu back to each S_ic in fp64.
 */
static void
sample_mu(KRun &r, const float *G, int64_t c0, int64_t i0, int64_t rows)
{
	const int64_t rs = std::min<int64_t>(rows, 32), n = r.n;
	const int64_t count = rs * (n - i0) - rs * (rs + 1) / 2;
	if (count <= 0)
		return;
	const int	blocks = (int) std::min<int64_t>(256, n);	/* partials in d_rowsum (n doubles) */
	sample_sum_kernel<<<blocks, 256, 0, r.st>>>(G, r.plan.ld, c0, i0, rs, n, r.map, r.d_rowsum);
	CKLAUNCH("sample_sum_kernel");
	std::vector<double> part(blocks);
	CK(cudaMemcpyAsync(part.data(), r.d_rowsum, blocks * 8, cudaMemcpyDeviceToHost, r.st));
	CK(cudaStreamSynchronize(r.st));
	double		s = 0;
	for (double v : part)
		s += v;
	r.mu = std::isfinite(s) ? s / (double) count : 0.0;
}

template <typename T>
static void
launch_map_mirror(KRun &r, const float *G, int64_t c0, int64_t i0, int64_t rows)
{
	const int64_t n = r.n;
	dim3		grid((unsigned) ((n - i0 + KMAP_TILE - 1) / KMAP_TILE), (unsigned) ((rows + KMAP_TILE - 1) / KMAP_TILE));
	map_mirror_kernel<T><<<grid, 256, 0, r.st>>>(G, r.plan.ld, c0, i0, rows, n, static_cast<T *>(r.d_K), r.plan.ld,
												 r.map, r.mu);
	CKLAUNCH("map_mirror_kernel");
}

void
kernel_build_matrix(KRun &r)
{
	const KernelPlan &p = r.plan;
	auto		t0 = std::chrono::steady_clock::now();
	if (!p.stored || r.built)
	{
		r.built = true;
		return;
	}
	const int64_t n = r.n, P = p.panel_rows;
	float	   *G = r.mem.alloc<float>(P * p.ld * 4);
	const float one = 1.0f, zero = 0.0f;
	int			panel = 0;
	for (int64_t i0 = 0; i0 < n; i0 += P, panel++)
	{
		const int64_t rows = std::min(P, n - i0);
		if (!p.syrk)
			kernel_gram(r, r.d_xc, r.d_xlo, 0, n, r.d_xc, r.d_xlo, i0, rows, G, p.ld);
		else if (p.tf32x3)
			kernel_gram(r, r.d_xc, r.d_xlo, i0, n - i0, r.d_xc, r.d_xlo, i0, rows, G, p.ld);
		else
		{
			cublasStatus_t bs = cublasSsyrk(r.blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, (int) rows, p.dp, &one,
											r.d_xc + i0 * p.dp, p.dp, &zero, G, (int) p.ld);
			if (bs != CUBLAS_STATUS_SUCCESS)
				fail_blas(bs, "kernel SYRK");
			if (i0 + rows < n)
				kernel_gram(r, r.d_xc, nullptr, i0 + rows, n - i0 - rows, r.d_xc, nullptr, i0, rows, G + rows, p.ld);
		}
		const int64_t c0 = p.syrk ? i0 : 0;
		if (i0 == 0 && p.precision != PGKM_CUDA_KPREC_FP32)
			sample_mu(r, G, c0, i0, rows);
		if (p.precision == PGKM_CUDA_KPREC_BF16)
			launch_map_mirror<__nv_bfloat16>(r, G, c0, i0, rows);
		else if (p.precision == PGKM_CUDA_KPREC_FP16)
			launch_map_mirror<__half>(r, G, c0, i0, rows);
		else
			launch_map_mirror<float>(r, G, c0, i0, rows);
		/* at most two panels in flight, then poll */
		CK(cudaEventRecord(r.ev_throttle[panel & 1], r.st));
		if (panel >= 1)
			CK(cudaEventSynchronize(r.ev_throttle[(panel - 1) & 1]));
		kernel_poll(r);
	}
	CK(cudaStreamSynchronize(r.st));
	r.mem.release(G);
	kernel_check_flag(r);
	r.built = true;
	r.build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* out[q * n + l] = K[idx[q]][l] as float (stored), or from the raw rows in fp64 (streamed). */
template <typename T>
__global__ void
rows_kernel(const int64_t *idx, int count, int64_t n, const T *K, int64_t ld, KMapArgs m, double mu, float *out)
{
	const int64_t total = (int64_t) count * n;
	for (int64_t e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t q = e / n, l = e - q * n, i = idx[q];
		out[e] = K ? (float) ((double) elem_to_float(K[i * ld + l]) + mu) : (float) kmap_exact(m, i, l);
	}
}

void
kernel_rows(KRun &r, const int64_t *idx, int32_t count, float *out)
{
	const int64_t n = r.n;
	for (int32_t q0 = 0; q0 < count; q0 += (int32_t) r.plan.kpp_rows)
	{
		const int	c = (int) std::min<int64_t>(r.plan.kpp_rows, count - q0);
		for (int q = 0; q < c; q++)
			if (idx[q0 + q] < 0 || idx[q0 + q] >= n)
				fail(PGKM_ERR_INVALID, "kernel rows: row %lld out of range", (long long) idx[q0 + q]);
		/* the indices ride in the chunk table's staging, which no pass is using now */
		int64_t    *d_idx = reinterpret_cast<int64_t *>(r.d_chunks);
		CK(cudaMemcpyAsync(d_idx, idx + q0, (size_t) c * 8, cudaMemcpyHostToDevice, r.st));
		const int	g = grid_for((int64_t) c * n, 256);
		const KernelPlan &p = r.plan;
		if (!p.stored)
			rows_kernel<float><<<g, 256, 0, r.st>>>(d_idx, c, n, nullptr, 0, r.map, r.mu, r.d_rows);
		else if (p.precision == PGKM_CUDA_KPREC_BF16)
			rows_kernel<<<g, 256, 0, r.st>>>(d_idx, c, n, static_cast<const __nv_bfloat16 *>(r.d_K), p.ld, r.map,
											 r.mu, r.d_rows);
		else if (p.precision == PGKM_CUDA_KPREC_FP16)
			rows_kernel<<<g, 256, 0, r.st>>>(d_idx, c, n, static_cast<const __half *>(r.d_K), p.ld, r.map, r.mu, r.d_rows);
		else
			rows_kernel<<<g, 256, 0, r.st>>>(d_idx, c, n, static_cast<const float *>(r.d_K), p.ld, r.map, r.mu, r.d_rows);
		CKLAUNCH("rows_kernel");
		CK(cudaMemcpyAsync(out + (size_t) q0 * n, r.d_rows, (size_t) c * n * 4, cudaMemcpyDeviceToHost, r.st));
		CK(cudaStreamSynchronize(r.st));
		kernel_poll(r);
	}
}

}							/* namespace pgkm_cuda */
