/*
 * kernel_pass.cu: one pass of kernel k-means over K (kernel_device.h's
 * semantics): S = K onehot(labels), the centroid norms C, the argmin of
 * D_ic = K_ii - 2 S_ic / |c| + C_c, and the sums the loop's shift test needs.
 *
 * S_ic = sum_{l in L_c} K_li (K is symmetric), so the pass reads K's rows in
 * label-sorted order. The host sorts the rows by label (stable: increasing
 * row within a cluster) and cuts each cluster's run into chunks of at most
 * chunk_rows rows. One block takes one chunk and one strip of columns: its 8
 * warps read the chunk's rows (each row's strip contiguous: 1 KB per warp and
 * row in two 512-byte loads of 16 bytes per lane), add every value into per-lane registers (fp64; fp32
 * for a half-precision K), combine the warps in a fixed order and write the
 * chunk's partial sums once. Every value of K is read once and added once
 * (n^2 adds, not n^2 k), no atomics, and every sum has a fixed order: the
 * pass is bit-identical run to run. Then, O(nk): per column the chunks of
 * each cluster are summed in order into S; C_c = sum_{i in c} S_ic / |c|^2 by
 * one block per cluster in a fixed tree; the argmin per row.
 *
 * Streamed: the same kernel reads tiles instead of K. A tile is the Gram
 * product of tile_rows label-sorted rows (a sorted copy of the centred rows
 * is gathered once per pass) by tile_cols rows, from cuBLAS into a buffer
 * sized to stay in L2; the kernel maps each entry as it reads it
 * (device/kernel_map.cuh) and adds a chunk's part in each tile to its
 * partials in stream order.
 */
#include "device/kelem.cuh"
#include "device/reduce.cuh"
#include "kernel_run.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pgkm_cuda
{

struct AccArgs
{
	const void *base;			/* K, or a tile */
	int64_t		ld;				/* its row stride, elements */
	const int32_t *perm;		/* sorted position -> row */
	const KChunk *chunks;
	int64_t		q0;				/* the launch's first chunk */
	int64_t		p0, p1;			/* sorted rows this launch covers (a tile's row 0 is p0) */
	int64_t		col0;			/* the row index of base's column 0 */
	int64_t		width;			/* valid columns */
	double	   *partial;		/* partial[q * ldp + column] */
	int64_t		ldp;
};

/*
 * Chunk a.q0 + blockIdx.x of a stored K, strip blockIdx.y. Warp w sums the
 * rows pb + w, pb + w + 8, ... in order. Load l of lane j reads the VEC
 * columns from (l * 32 + j) * VEC of the strip, so each load instruction of
 * a warp reads 512 contiguous bytes; U rows' loads are in flight at once.
 */
template <typename T, typename Acc, int U>
__global__ void __launch_bounds__(KPASS_THREADS, 4)
accumulate_kernel(AccArgs a)
{
	constexpr int VEC = KVec<T>::N, PER = KPASS_LOADS * VEC, STRIP = 32 * PER, WARPS = KPASS_THREADS / 32;
	__shared__ Acc red[WARPS][STRIP];
	const KChunk ch = a.chunks[a.q0 + blockIdx.x];
	const int64_t pb = ch.start, pe = ch.start + ch.len;
	const int	warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int64_t strip0 = (int64_t) blockIdx.y * STRIP;
	const T    *base = static_cast<const T *>(a.base) + strip0;
	/* the strip column of element e = l * VEC + v of this lane */
	auto		col_of = [&](int e) { return ((e / VEC) * 32 + lane) * VEC + e % VEC; };
	Acc			acc[PER];
#pragma unroll
	for (int e = 0; e < PER; e++)
		acc[e] = 0;
	auto		add_rows = [&](int64_t p, int count) {
		float		v[U][PER];
#pragma unroll
		for (int u = 0; u < U; u++)
		{
			if (u >= count)
				break;
			/* rows are padded to whole strips: every load is in bounds, columns past width are dropped */
			const T    *row = base + (int64_t) a.perm[p + (int64_t) u * WARPS] * a.ld;
#pragma unroll
			for (int l = 0; l < KPASS_LOADS; l++)
				load16(row + col_of(l * VEC), &v[u][l * VEC]);
		}
#pragma unroll
		for (int u = 0; u < U; u++)
		{
			if (u >= count)
				break;
#pragma unroll
			for (int e = 0; e < PER; e++)
				acc[e] += (Acc) v[u][e];
		}
	};
	int64_t		p = pb + warp;
	for (; p + (int64_t) (U - 1) * WARPS < pe; p += (int64_t) U * WARPS)
		add_rows(p, U);
	for (; p < pe; p += WARPS)
		add_rows(p, 1);

#pragma unroll
	for (int e = 0; e < PER; e++)
		red[warp][col_of(e)] = acc[e];
	__syncthreads();
	double	   *out = a.partial + (a.q0 + blockIdx.x) * a.ldp;
	for (int e = threadIdx.x; e < STRIP; e += KPASS_THREADS)
	{
		const int64_t col = strip0 + e;
		if (col >= a.width)
			continue;
		double		s = 0;
#pragma unroll
		for (int w = 0; w < WARPS; w++)
			s += (double) red[w][e];
		out[col] = s;
	}
}

/* Sorted rows whose row index and statistics a streamed block stages at a time. */
static constexpr int KMAP_SEG = 256;

/*
 * The streamed pass's kernel: chunk a.q0 + blockIdx.x, strip blockIdx.y of
 * a tile of Gram entries (row 0 = sorted row a.p0), each entry mapped to K
 * as it is read (device/kernel_map.cuh) and added in fp64. The rows' indices
 * and statistics are staged in shared memory KMAP_SEG rows at a time; lane j
 * holds the 4 columns from 4 j of the strip (one 16-byte load per row). A
 * chunk's part in this tile is added to its partials (the first tile that
 * meets the chunk writes them).
 */
template <int KIND, int U>
__global__ void __launch_bounds__(KPASS_THREADS, 3)	/* 80 registers, no spills (U = 4 spills) */
map_accumulate_kernel(AccArgs a, KMapArgs m)
{
	constexpr int STRIP = 32 * 4, WARPS = KPASS_THREADS / 32;
	__shared__ double red[WARPS][STRIP];
	__shared__ int64_t s_row[KMAP_SEG];
	__shared__ double s_cn[KMAP_SEG], s_co[KMAP_SEG];
	const KChunk ch = a.chunks[a.q0 + blockIdx.x];
	const int64_t pb = max(ch.start, a.p0), pe = min(ch.start + ch.len, a.p1);
	const int	warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int64_t c0 = (int64_t) blockIdx.y * STRIP + lane * 4;	/* this lane's first tile column */
	double		cnc[4], coc[4], acc[4] = {0, 0, 0, 0};
#pragma unroll
	for (int e = 0; e < 4; e++)
	{
		const bool	ok = c0 + e < a.width;
		cnc[e] = ok ? m.cnorm[a.col0 + c0 + e] : 0.0;
		coc[e] = ok ? m.coff[a.col0 + c0 + e] : 0.0;
	}
	for (int64_t seg = pb; seg < pe; seg += KMAP_SEG)
	{
		const int	cnt = (int) min((int64_t) KMAP_SEG, pe - seg);
		for (int j = threadIdx.x; j < cnt; j += KPASS_THREADS)
		{
			const int64_t r = a.perm[seg + j];
			s_row[j] = r;
			s_cn[j] = m.cnorm[r];
			s_co[j] = m.coff[r];
		}
		__syncthreads();
		for (int j = warp; j < cnt; j += U * WARPS)
		{
			float		v[U][4];
#pragma unroll
			for (int u = 0; u < U; u++)
				if (j + u * WARPS < cnt)
					load16(static_cast<const float *>(a.base) + (seg + j + u * WARPS - a.p0) * a.ld + c0, v[u]);
#pragma unroll
			for (int u = 0; u < U; u++)
			{
				const int	jj = j + u * WARPS;
				if (jj >= cnt)
					break;
				const int64_t r = s_row[jj];
#pragma unroll
				for (int e = 0; e < 4; e++)
				{
					const int64_t i = a.col0 + c0 + e;
					if (c0 + e >= a.width)
						continue;
					const double k = i == r ? m.diag[i]
						: kmap_value_k<KIND>(m, v[u][e], r, i, s_cn[jj], s_co[jj], cnc[e], coc[e]);
					acc[e] += (double) kmap_float(m, k);
				}
			}
		}
		__syncthreads();
	}
#pragma unroll
	for (int e = 0; e < 4; e++)
		red[warp][lane * 4 + e] = acc[e];
	__syncthreads();
	const bool	first = ch.start >= a.p0;
	double	   *out = a.partial + (a.q0 + blockIdx.x) * a.ldp;
	for (int e = threadIdx.x; e < STRIP; e += KPASS_THREADS)
	{
		const int64_t col = (int64_t) blockIdx.y * STRIP + e;
		if (col >= a.width)
			continue;
		double		s = 0;
#pragma unroll
		for (int w = 0; w < WARPS; w++)
			s += red[w][e];
		out[col] = first ? s : out[col] + s;
	}
}

/*
 * S[c * n + i] = the chunks of c summed in order (plus |c| mu), for columns
 * col0 .. col0 + width; rowsum[i] = sum_c S.
 */
__global__ void
reduce_kernel(const double *partial, int64_t ldp, const KCluster *cl, int k, int64_t col0, int64_t width, int64_t n,
			  double mu, double *S, double *rowsum)
{
	for (int64_t col = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; col < width;
		 col += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t i = col0 + col;
		double		tot = 0;
		for (int c = 0; c < k; c++)
		{
			const int32_t q0 = cl[c].first_chunk, q1 = q0 + cl[c].nchunks;
			double		s = 0;
			for (int32_t q = q0; q < q1; q++)
				s += partial[q * ldp + col];
			if (mu != 0)
				s += (double) cl[c].size * mu;	/* a half-precision K stores K - mu */
			S[(int64_t) c * n + i] = s;
			tot += s;
		}
		rowsum[i] = tot;
	}
}

/* C_c = sum over c's rows (sorted order, fixed tree) of S_ic / |c|^2; one block per cluster. */
__global__ void __launch_bounds__(256)
norms_kernel(const double *S, int64_t n, const KCluster *cl, const int32_t *perm, double *norms)
{
	__shared__ double sh[256];
	const int	c = blockIdx.x;
	const int64_t size = cl[c].size, off = cl[c].offset;
	double		s = 0;
	for (int64_t p = threadIdx.x; p < size; p += 256)
		s += S[(int64_t) c * n + perm[off + p]];
	s = block_tree_sum(s, sh);
	if (threadIdx.x == 0)
		norms[c] = size > 0 ? s / ((double) size * (double) size) : 0.0;
}

/* The argmin of C_c - (2 / |c|) S_ic over non-empty clusters, lowest c on ties; D and S at it. */
__global__ void
argmin_kernel(const double *S, int64_t n, int k, const KCluster *cl, const double *norms, const double *diag,
			  int32_t *labels, double *dist2, double *w)
{
	for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
	{
		double		best = 0;
		int			bi = -1;
		for (int c = 0; c < k; c++)
		{
			if (cl[c].size == 0)
				continue;
			const double v = __dsub_rn(norms[c], __dmul_rn(cl[c].two_over, S[(int64_t) c * n + i]));
			if (bi < 0 || v < best)
			{
				best = v;
				bi = c;
			}
		}
		labels[i] = bi;
		/* with a division, as the CPU device: a row equal to every member of its cluster gets exactly 0 */
		dist2[i] = __dadd_rn(diag[i], __dsub_rn(norms[bi], __ddiv_rn(2.0 * S[(int64_t) bi * n + i],
																	 (double) cl[bi].size)));
		w[i] = S[(int64_t) bi * n + i];
	}
}

/* sum of rowsum in a fixed order (one block). */
__global__ void
sum_kernel(const double *v, int64_t n, double *out)
{
	__shared__ double sh[1024];
	double		s = 0;
	for (int64_t i = threadIdx.x; i < n; i += 1024)
		s += v[i];
	s = block_tree_sum(s, sh);
	if (threadIdx.x == 0)
		*out = s;
}

/* xs[p] = xc[perm[p]], xw floats per row; a [hi lo hi] row (xw = 3 dp) becomes [hi hi lo]. */
__global__ void
gather_rows_kernel(const float *xc, const int32_t *perm, int64_t n, int xw, int dp, float *xs)
{
	const int64_t total = n * xw;
	for (int64_t e = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t) gridDim.x * blockDim.x)
	{
		const int64_t p = e / xw;
		const int	j = (int) (e - p * xw);
		xs[e] = xc[(int64_t) perm[p] * xw + (xw > dp && j >= dp ? j - dp : j)];
	}
}

/*
 * tile[p][i] (ld Wc) = <x'_{sorted p0 + p}, x'_{i0 + i}>: fp32, or 3xTF32
 * as one TF32 product of depth 3 dp ([hi lo hi] . [hi hi lo]): the tile is
 * written once.
 */
static void
tile_gram(KRun &r, int64_t i0, int64_t wc, int64_t p0, int64_t ht)
{
	const int	xw = r.plan.xw;
	const float one = 1.0f, zero = 0.0f;
	cublasStatus_t bs = cublasSgemm(r.blas, CUBLAS_OP_T, CUBLAS_OP_N, (int) wc, (int) ht, xw, &one, r.d_xc + i0 * xw,
									xw, r.d_xs + p0 * xw, xw, &zero, r.d_tile, (int) r.plan.tile_cols);
	if (bs != CUBLAS_STATUS_SUCCESS)
		fail_blas(bs, "kernel tile product");
}

static int
grid_for(int64_t items, int threads, int64_t cap = 8192)
{
	return (int) std::max<int64_t>(1, std::min<int64_t>(cap, (items + threads - 1) / threads));
}

/* Counting sort by label (stable), clusters and chunks into pinned staging; returns the chunk count. */
static int64_t
sort_by_label(KRun &r, const int32_t *labels, const int64_t *sizes, int32_t k)
{
	const int64_t n = r.n, R = r.plan.chunk_rows;
	int32_t    *hl = r.h_in, *hp = r.h_in + n;
	std::vector<int64_t> pos(k, 0);
	for (int64_t i = 0; i < n; i++)
	{
		const int32_t c = labels[i];
		if (c < 0 || c >= k)
			fail(PGKM_ERR_INVALID, "kernel pass: label %d of row %lld outside 0..%d", c, (long long) i, k - 1);
		pos[c]++;
	}
	int64_t		off = 0, q = 0;
	for (int32_t c = 0; c < k; c++)
	{
		if (pos[c] != sizes[c])
			fail(PGKM_ERR_INVALID, "kernel pass: cluster %d has %lld rows, its size says %lld", c,
				 (long long) pos[c], (long long) sizes[c]);
		KCluster   &cl = r.h_clusters[c];
		cl.size = sizes[c];
		cl.offset = off;
		cl.first_chunk = (int32_t) q;
		cl.two_over = sizes[c] > 0 ? 2.0 / (double) sizes[c] : 0.0;
		for (int64_t s = 0; s < sizes[c]; s += R)
			r.h_chunks[q++] = KChunk {off + s, (int32_t) std::min(R, sizes[c] - s), c};
		cl.nchunks = (int32_t) (q - cl.first_chunk);
		pos[c] = off;
		off += sizes[c];
	}
	for (int64_t i = 0; i < n; i++)
	{
		hl[i] = labels[i];
		hp[pos[labels[i]]++] = (int32_t) i;
	}
	return q;
}

template <typename T, typename Acc>
static void
launch_stored(KRun &r, int64_t nch)
{
	constexpr int STRIP = 32 * KPASS_LOADS * KVec<T>::N;
	AccArgs		a {r.d_K, r.plan.ld, r.d_perm, r.d_chunks, 0, 0, r.n, 0, r.n, r.d_partial, r.plan.partial_cols};
	dim3		grid((unsigned) nch, (unsigned) ((r.n + STRIP - 1) / STRIP));
	accumulate_kernel<T, Acc, 4><<<grid, KPASS_THREADS, 0, r.st>>>(a);
	CKLAUNCH("accumulate_kernel (stored)");
}

/* map_accumulate_kernel compiled for each kernel: only its map's code and registers. */
static void
launch_map_accumulate(KRun &r, const AccArgs &a, dim3 grid)
{
	switch (r.map.kind)
	{
		case PGKM_KERNEL_RBF:
			map_accumulate_kernel<PGKM_KERNEL_RBF, 2><<<grid, KPASS_THREADS, 0, r.st>>>(a, r.map);
			break;
		case PGKM_KERNEL_POLYNOMIAL:
			map_accumulate_kernel<PGKM_KERNEL_POLYNOMIAL, 2><<<grid, KPASS_THREADS, 0, r.st>>>(a, r.map);
			break;
		case PGKM_KERNEL_SIGMOID:
			map_accumulate_kernel<PGKM_KERNEL_SIGMOID, 2><<<grid, KPASS_THREADS, 0, r.st>>>(a, r.map);
			break;
		default:
			map_accumulate_kernel<PGKM_KERNEL_LINEAR, 2><<<grid, KPASS_THREADS, 0, r.st>>>(a, r.map);
			break;
	}
}

/* The streamed pass's S: tiles of the Gram product, mapped and summed as they are read. */
static void
streamed_sums(KRun &r, int32_t k, int64_t nch)
{
	const KernelPlan &p = r.plan;
	const int64_t n = r.n, Wc = p.tile_cols, Ht = p.tile_rows;
	constexpr int STRIP = 32 * 4;	/* map_accumulate_kernel's strip */
	gather_rows_kernel<<<grid_for(n * p.xw, 256), 256, 0, r.st>>>(r.d_xc, r.d_perm, n, p.xw, p.dp, r.d_xs);
	CKLAUNCH("gather_rows_kernel");
	int			block = 0;
	for (int64_t i0 = 0; i0 < n; i0 += Wc, block++)
	{
		const int64_t wc = std::min(Wc, n - i0);
		int64_t		qa = 0;
		for (int64_t p0 = 0; p0 < n; p0 += Ht)
		{
			const int64_t ht = std::min(Ht, n - p0);
			tile_gram(r, i0, wc, p0, ht);
			/* the chunks that meet sorted rows [p0, p0 + ht) */
			while (qa < nch && r.h_chunks[qa].start + r.h_chunks[qa].len <= p0)
				qa++;
			int64_t		qb = qa;
			while (qb < nch && r.h_chunks[qb].start < p0 + ht)
				qb++;
			AccArgs		a {r.d_tile, Wc, r.d_perm, r.d_chunks, qa, p0, p0 + ht, i0, wc, r.d_partial, p.partial_cols};
			dim3		grid((unsigned) (qb - qa), (unsigned) ((wc + STRIP - 1) / STRIP));
			launch_map_accumulate(r, a, grid);
			CKLAUNCH("accumulate_kernel (streamed)");
		}
		reduce_kernel<<<grid_for(wc, 256), 256, 0, r.st>>>(r.d_partial, p.partial_cols, r.d_clusters, k, i0, wc, n, 0.0,
															r.d_S, r.d_rowsum);
		CKLAUNCH("reduce_kernel");
		/* at most two column blocks in flight, then poll */
		CK(cudaEventRecord(r.ev_throttle[block & 1], r.st));
		if (block >= 1)
			CK(cudaEventSynchronize(r.ev_throttle[(block - 1) & 1]));
		kernel_poll(r);
	}
}

void
kernel_pass(KRun &r, const int32_t *labels, const int64_t *sizes, int32_t k, pgkm_cuda_kernel_pass *out)
{
	const KernelPlan &p = r.plan;
	const int64_t n = r.n;
	if (k < 1 || k > r.kmax)
		fail(PGKM_ERR_INVALID, "kernel pass: k = %d outside 1..%d", k, r.kmax);
	if (!r.built)
		fail(PGKM_ERR_INVALID, "kernel pass before build");
	const int64_t nch = sort_by_label(r, labels, sizes, k);
	CK(cudaMemcpyAsync(r.d_labels, r.h_in, (size_t) n * 4, cudaMemcpyHostToDevice, r.st));
	CK(cudaMemcpyAsync(r.d_perm, r.h_in + n, (size_t) n * 4, cudaMemcpyHostToDevice, r.st));
	CK(cudaMemcpyAsync(r.d_chunks, r.h_chunks, (size_t) nch * sizeof(KChunk), cudaMemcpyHostToDevice, r.st));
	CK(cudaMemcpyAsync(r.d_clusters, r.h_clusters, (size_t) k * sizeof(KCluster), cudaMemcpyHostToDevice, r.st));
	CK(cudaEventRecord(r.ev_begin, r.st));
	if (p.stored)
	{
		if (p.precision == PGKM_CUDA_KPREC_BF16)
			launch_stored<__nv_bfloat16, float>(r, nch);
		else if (p.precision == PGKM_CUDA_KPREC_FP16)
			launch_stored<__half, float>(r, nch);
		else
			launch_stored<float, double>(r, nch);
		reduce_kernel<<<grid_for(n, 256), 256, 0, r.st>>>(r.d_partial, p.partial_cols, r.d_clusters, k, 0, n, n,
														   r.mu, r.d_S, r.d_rowsum);
		CKLAUNCH("reduce_kernel");
	}
	else
		streamed_sums(r, k, nch);
	norms_kernel<<<k, 256, 0, r.st>>>(r.d_S, n, r.d_clusters, r.d_perm, r.d_norms);
	CKLAUNCH("norms_kernel");
	argmin_kernel<<<grid_for(n, 256), 256, 0, r.st>>>(r.d_S, n, k, r.d_clusters, r.d_norms, r.d_diag,
													   r.d_out_labels, r.d_dist2, r.d_w);
	CKLAUNCH("argmin_kernel");
	sum_kernel<<<1, 1024, 0, r.st>>>(r.d_rowsum, n, r.d_ksum);
	CKLAUNCH("sum_kernel");
	CK(cudaEventRecord(r.ev_end, r.st));
	double	   *h_dist2 = r.h_out, *h_w = r.h_out + n, *h_norms = r.h_out + 2 * n, *h_ksum = h_norms + r.kmax;
	CK(cudaMemcpyAsync(r.h_out_labels, r.d_out_labels, (size_t) n * 4, cudaMemcpyDeviceToHost, r.st));
	CK(cudaMemcpyAsync(h_dist2, r.d_dist2, (size_t) n * 8, cudaMemcpyDeviceToHost, r.st));
	CK(cudaMemcpyAsync(h_w, r.d_w, (size_t) n * 8, cudaMemcpyDeviceToHost, r.st));
	CK(cudaMemcpyAsync(h_norms, r.d_norms, (size_t) k * 8, cudaMemcpyDeviceToHost, r.st));
	CK(cudaMemcpyAsync(h_ksum, r.d_ksum, 8, cudaMemcpyDeviceToHost, r.st));
	CK(cudaStreamSynchronize(r.st));
	if (!p.stored)
		kernel_check_flag(r);
	float		ms = 0;
	CK(cudaEventElapsedTime(&ms, r.ev_begin, r.ev_end));
	out->device_s = ms * 1e-3;
	memcpy(out->labels, r.h_out_labels, (size_t) n * 4);
	memcpy(out->dist2, h_dist2, (size_t) n * 8);
	memcpy(out->norms, h_norms, (size_t) k * 8);
	/* cross sums in row order, as the CPU device adds them */
	std::fill(out->cross, out->cross + k, 0.0);
	for (int64_t i = 0; i < n; i++)
		out->cross[r.h_out_labels[i]] += h_w[i];
	out->kernel_sum = *h_ksum;
}

}							/* namespace pgkm_cuda */
