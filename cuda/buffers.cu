/*
 * buffers.cu: a run's device memory, pinned host memory, streams, events and
 * cuBLAS handle, allocated as the plan says (plan.cpp counts the same bytes)
 * and released by Buffers' destructor on every exit path. A streamed run
 * lends the buffers each pass fills afresh to k-means++ (plan.loan_bytes);
 * the next pass allocates them again.
 */
#include "run.cuh"

#include <algorithm>

namespace pgkm_cuda
{

void *
Buffers::alloc(size_t bytes)
{
	if (bytes == 0)
		bytes = 16;
	if (budget > 0 && (int64_t) (allocated + bytes) > budget)
		fail(PGKM_ERR_NOMEM, "GPU memory budget exceeded: need %zu more bytes, %zu of %lld in use",
			 bytes, allocated, (long long) budget);
	void	   *p = nullptr;
	CK(cudaMalloc(&p, bytes));
	allocated += bytes;
	return p;
}

void
Buffers::release(void *p, size_t bytes)
{
	if (!p)
		return;
	cudaFree(p);
	allocated -= std::min(allocated, bytes == 0 ? (size_t) 16 : bytes);
}

Buffers::~Buffers()
{
	if (s_comp)
		cudaStreamSynchronize(s_comp);
	if (s_copy)
		cudaStreamSynchronize(s_copy);
	void	   *dev[] = {d_x, d_xlo, d_chunk[0], d_chunk[1], d_chunk_lo[0], d_chunk_lo[1], d_labels, d_cf, d_cf_lo,
		d_bias, d_mu, d_c64, d_acc, d_partials, d_tile, d_dist2, d_colmax, d_qscale, d_norms, d_colrange,
		d_list_mask ? (void *) d_list_mask : (void *) d_list, d_list_count, d_lower, d_open, d_cprev, d_geom,
		d_open_count, d_cfh, d_ties, d_glower, d_perm, d_sort_keys[0], d_sort_keys[1], d_open_alt, d_lbound, d_pairs,
		d_pair_idx, d_keys2, d_idx2, d_offsets, d_sort_temp};
	/* the list's allocation starts at its masks */
	for (void *p : dev)
		if (p)
			cudaFree(p);
	if (blas)
		cublasDestroy(blas);
	for (cudaEvent_t e : {ev_copy[0], ev_copy[1], ev_done[0], ev_done[1], ev_upload})
		if (e)
			cudaEventDestroy(e);
	for (cudaStream_t s : {s_comp, s_copy})
		if (s)
			cudaStreamDestroy(s);
	for (void *p : {(void *) h_acc, (void *) h_cstage, (void *) h_c64})
		if (p)
			cudaFreeHost(p);
	if (registered)
		cudaHostUnregister(const_cast<float *>(registered));
	cudaGetLastError();			/* nothing to report from a destructor */
}

template <typename T>
static T *
alloc_as(Buffers &b, size_t bytes)
{
	return static_cast<T *>(b.alloc(bytes));
}

static size_t
chunk_bytes(const Run &r)
{
	return (size_t) r.plan.chunk_rows * r.d * sizeof(float);
}

static size_t
tile_bytes(const Run &r)
{
	return (size_t) r.plan.tile_rows * r.k * sizeof(float);
}

/* GEMM: the rows whose norms are kept (all resident, a chunk's streamed). */
static size_t
norms_bytes(const Run &r)
{
	return (size_t) (r.plan.resident ? r.n : r.plan.chunk_rows) * 4;
}

static size_t
list_bytes(const Run &r)
{
	return r.plan.path == PATH_TILED ? (size_t) (r.plan.chunk_rows * tiled_list_row_bytes(r.k)) : 0;
}

/* TILED's list in one allocation: the candidates' masks (k <= 64) first, then the rows. */
static void
set_list(Buffers &b, unsigned char *p, const Run &r)
{
	const bool	masks = r.k <= TILED_MASK_MAX_K;
	b.d_list_mask = p && masks ? reinterpret_cast<unsigned long long *>(p) : nullptr;
	b.d_list = p ? reinterpret_cast<int32_t *>(p + (masks ? r.plan.chunk_rows * 8 : 0)) : nullptr;
}

/*
 * The buffers each pass fills afresh: chunk copies (streamed), GEMM tile,
 * distances, TILED's list, and (streamed) the GEMM row norms.
 */
void
ensure_pass_buffers(Run &r)
{
	Buffers    &b = r.buf;
	if (!r.plan.resident && !b.d_chunk[0])
		for (int i = 0; i < 2; i++)
		{
			b.d_chunk[i] = alloc_as<float>(b, chunk_bytes(r));
			if (r.plan.product == PRODUCT_3XTF32)
				b.d_chunk_lo[i] = alloc_as<float>(b, chunk_bytes(r));
		}
	if (r.plan.path == PATH_GEMM && !b.d_tile)
		b.d_tile = alloc_as<float>(b, tile_bytes(r));
	if (!b.d_dist2)
		b.d_dist2 = alloc_as<double>(b, r.plan.chunk_rows * 8);
	if (r.plan.path == PATH_GEMM && !b.d_norms)
		b.d_norms = alloc_as<float>(b, norms_bytes(r));
	if (r.plan.path == PATH_TILED && !b.d_list)
		set_list(b, alloc_as<unsigned char>(b, list_bytes(r)), r);
}

void
lend_pass_buffers(Run &r)
{
	Buffers    &b = r.buf;
	if (r.plan.resident)
		return;
	CK(cudaStreamSynchronize(b.s_copy));	/* no copy still writes them */
	CK(cudaStreamSynchronize(b.s_comp));	/* no pass still reads them */
	for (int i = 0; i < 2; i++)
	{
		b.release(b.d_chunk[i], chunk_bytes(r));
		b.release(b.d_chunk_lo[i], chunk_bytes(r));
		b.d_chunk[i] = b.d_chunk_lo[i] = nullptr;
	}
	b.release(b.d_tile, tile_bytes(r));
	b.release(b.d_dist2, r.plan.chunk_rows * 8);
	b.release(b.d_norms, norms_bytes(r));
	b.release(b.d_list_mask ? (void *) b.d_list_mask : (void *) b.d_list, list_bytes(r));
	b.d_tile = nullptr;
	b.d_dist2 = nullptr;
	b.d_norms = nullptr;
	set_list(b, nullptr, r);
}

void
allocate_run_buffers(Run &r)
{
	Buffers    &b = r.buf;
	const Plan &p = r.plan;
	const size_t kd = (size_t) r.k * r.d;
	b.budget = p.budget;
	CK(cudaStreamCreateWithFlags(&b.s_comp, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b.s_copy, cudaStreamNonBlocking));
	for (int i = 0; i < 2; i++)
	{
		CK(cudaEventCreateWithFlags(&b.ev_copy[i], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&b.ev_done[i], cudaEventDisableTiming));
	}
	CK(cudaEventCreateWithFlags(&b.ev_upload, cudaEventDisableTiming));

	b.d_labels = alloc_as<int32_t>(b, r.n * 4);
	b.d_cf = alloc_as<float>(b, kd * 4);
	b.d_bias = alloc_as<float>(b, (size_t) r.k * 4);
	b.d_mu = alloc_as<float>(b, (size_t) r.d * 4);
	b.d_c64 = alloc_as<double>(b, kd * 8);
	b.d_acc = alloc_as<unsigned long long>(b, (kd + r.k + 3) * 8);
	b.d_partials = alloc_as<double>(b, p.nslots * 8);
	b.d_colmax = alloc_as<unsigned int>(b, (size_t) r.d * 4);
	b.d_qscale = alloc_as<double>(b, (size_t) r.d * 8);
	if (p.path == PATH_TILED)
		b.d_list_count = alloc_as<unsigned int>(b, p.nchunks * 4);
	if (p.path == PATH_GEMM)
		b.d_colrange = alloc_as<unsigned int>(b, (size_t) r.d * 8);
	if (p.path == PATH_GEMM)
	{
		if (p.product == PRODUCT_3XTF32)
			b.d_cf_lo = alloc_as<float>(b, kd * 4);
		cublasStatus_t bs = cublasCreate(&b.blas);
		if (bs != CUBLAS_STATUS_SUCCESS)
			fail_blas(bs, "cublasCreate");
		cublasSetStream(b.blas, b.s_comp);
		/* TF32 only as 3xTF32 (fp32-accurate) or, for tests, one product */
		cublasSetMathMode(b.blas, p.product != PRODUCT_FP32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
	}
	if (p.hamerly)				/* plan.cpp's hamerly_bytes, in its order */
	{
		b.d_lower = alloc_as<double>(b, (size_t) r.n * 8);
		b.d_open = alloc_as<int32_t>(b, (size_t) r.n * 4);
		b.d_cprev = alloc_as<double>(b, kd * 8);
		b.d_geom = alloc_as<double>(b, (size_t) r.k * 16);
		b.d_open_count = alloc_as<unsigned int>(b, 16);
		b.d_cfh = alloc_as<float>(b, kd * 4);
		b.d_ties = alloc_as<int32_t>(b, (size_t) r.n * 4);
	}
	if (p.yinyang)				/* plan.cpp's yinyang_bytes, in its order */
	{
		b.d_glower = alloc_as<double>(b, (size_t) r.n * yinyang_groups(r.k) * 8);
		b.d_perm = alloc_as<int32_t>(b, (size_t) r.k * 8);
		for (int i = 0; i < 2; i++)
			b.d_sort_keys[i] = alloc_as<int32_t>(b, (size_t) r.n * 4);
		b.d_open_alt = alloc_as<int32_t>(b, (size_t) r.n * 4);
		b.d_sort_temp = alloc_as<char>(b, (size_t) yinyang_sort_bytes(r.n));
	}
	if (p.elkan)				/* plan.cpp's elkan_bytes, in its order */
	{
		b.d_lbound = alloc_as<float>(b, (size_t) r.n * r.k * 4);
		b.d_cprev = alloc_as<double>(b, kd * 8);
		b.d_geom = alloc_as<double>(b, (size_t) r.k * 16);
		b.d_open_count = alloc_as<unsigned int>(b, 16);
		b.d_pairs = alloc_as<float>(b, (size_t) r.k * r.k * 4);
	}
	if (p.sort)
		allocate_sort_buffers(r);
	const size_t x_bytes = (size_t) r.n * r.d * sizeof(float);
	if (p.resident)
	{
		b.d_x = alloc_as<float>(b, x_bytes);
		if (p.product == PRODUCT_3XTF32)
			b.d_xlo = alloc_as<float>(b, x_bytes);
	}
	ensure_pass_buffers(r);
	CK(cudaMallocHost((void **) &b.h_acc, (kd + r.k + 5) * 8));	/* + a bounded pass's 16 bytes of counts */
	CK(cudaMallocHost((void **) &b.h_cstage, (2 * kd + r.k) * 4));
	CK(cudaMallocHost((void **) &b.h_c64, kd * 8));

	/* pin the caller's rows for fast (and, when streaming, asynchronous) copies */
	if (cudaHostRegister(const_cast<float *>(r.x), x_bytes, cudaHostRegisterDefault) == cudaSuccess)
		b.registered = r.x;
	else
		cudaGetLastError();		/* pageable copies still work */
}

}							/* namespace pgkm_cuda */
