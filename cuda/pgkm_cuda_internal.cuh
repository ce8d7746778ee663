/*
 * pgkm_cuda_internal.cuh: state of one GPU run and the launchers shared by
 * the plugin's translation units (no relocatable device code: each kernel is
 * launched from the file that defines it).
 */
#ifndef PGKM_CUDA_INTERNAL_CUH
#define PGKM_CUDA_INTERNAL_CUH

#include "pgkm_cuda_api.h"
#include "pgkm_engine.h"

#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace pgkm_cuda
{

/* A failure inside the plugin; caught at the ABI boundary. */
struct Failure
{
	int			status;
	std::string msg;
};

[[noreturn]] void fail_cuda(cudaError_t e, const char *what, const char *file, int line);
[[noreturn]] void fail_blas(cublasStatus_t e, const char *what);
#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) ::pgkm_cuda::fail_cuda(e_, #call, __FILE__, __LINE__); } while (0)
#define CKLAUNCH(what) CK(cudaGetLastError())

/* Assignment paths, picked by shape (see NOTES.md for the measured crossover). */
enum Path
{
	PATH_DIRECT = 0,			/* d < 16: sum((x-c)^2) in fp32, centroids in smem */
	PATH_DOT = 1,				/* 16 <= d <= 64: ||c'||^2 - 2 x'.c' fused, smem */
	PATH_GEMM = 2,				/* d > 64, large k: cuBLAS per row tile (fp32; 3xTF32 at d, k >= 512) + argmin */
	PATH_TILED = 3				/* 32 <= d <= 1024, k <= 256: tiled product + argmin in one
								 * kernel, then a label-sorted update kernel (pgkm_cuda_tiled.cu) */
};

/* Smallest d and largest k the TILED path takes by default (measured, bench/RESULTS.md
 * section 8; PGKM_CUDA_TILED_MAX_K measures other k). */
static constexpr int TILED_MIN_D = 32;
static constexpr int TILED_MAX_K = 256;
/* Largest d of the TILED path: the update kernel holds ceil(d/32) columns per lane. */
static constexpr int TILED_MAX_D = 1024;

/* Everything a pass kernel needs for one block of rows. */
struct PassArgs
{
	const float *x;				/* rows x d, this chunk */
	int64_t		rows;
	int64_t		row0;			/* global index of the chunk's first row */
	int32_t		d, k;
	const float *cf;			/* centroids for the argmin (layout per path) */
	const float *bias;			/* k, DOT / GEMM */
	const float *mu;			/* d (DOT path centring) */
	const double *c64;			/* k x d raw fp64 centroids (exact distance) */
	int32_t    *labels;			/* n, global */
	double	   *dist2;			/* rows, or NULL */
	unsigned long long *acc;	/* k*d sums then k counts (fixed point or fp64 bits) */
	double		qscale;			/* fixed-point scale (deterministic mode) */
	double	   *partials;		/* inertia partials, one per block */
	unsigned long long *moved;
	const float *tile;			/* GEMM: rows x k of -2 x.c' */
	const float *xlo;			/* GEMM 3xTF32: x' = x + xlo (x holds the TF32 part), or NULL */
	int			priv;			/* accumulate in shared memory first */
	int			agg;			/* fused kernel: pre-sum a warp's rows by label */
	int			det;			/* deterministic fixed-point sums */
};

/* How the per-cluster sums are accumulated (PGKM_CUDA_SUMS, for measurements). */
enum SumsMode
{
	SUMS_AUTO = 0,				/* private shared-memory sums when they fit */
	SUMS_GLOBAL = 1				/* one global atomic per element and row (v1) */
};

struct Run
{
	/* shape and settings */
	const float *x = nullptr;
	int64_t		n = 0;
	int32_t		d = 0, k = 0;
	pgkm_cuda_config cfg {};
	int			device = 0;
	int			sms = 0;
	int			smem_per_sm = 0;	/* bytes of shared memory per SM */
	int			smem_optin = 0; /* largest dynamic shared memory per block */
	SumsMode	sums = SUMS_AUTO;
	int			gemm_bps = 4;	/* argmin blocks per SM (PGKM_CUDA_GEMM_BPS, measurements) */
	int64_t		gemm_tile_bytes = 16LL << 20;	/* GEMM distance tile (PGKM_CUDA_GEMM_TILE_MB) */
	Path		path = PATH_DIRECT;
	int			tf32_terms = 0; /* GEMM: 3 = 3xTF32 products (d, k >= 512), 0 = fp32
								 * SGEMM, 1 = one TF32 product (tests only) */
	bool		resident = false;
	bool		registered = false;

	/* pass plan */
	int64_t		chunk_rows = 0;
	int64_t		nchunks = 0;
	int64_t		tile_rows = 0;	/* GEMM */
	int			grid = 0;		/* blocks per launch (fused) or per tile (GEMM) */
	int64_t		nslots = 0;		/* inertia partials per pass */

	/* device memory */
	float	   *d_x = nullptr;	/* resident data */
	float	   *d_chunk[2] = {nullptr, nullptr};	/* streaming buffers */
	float	   *d_xlo = nullptr;	/* 3xTF32: x' - tf32(x'), resident */
	float	   *d_chunk_lo[2] = {nullptr, nullptr};	/* 3xTF32: the same, streamed */
	float	   *d_cf_lo = nullptr;	/* 3xTF32: c' - tf32(c') */
	int32_t    *d_labels = nullptr;
	float	   *d_cf = nullptr;
	float	   *d_bias = nullptr;
	float	   *d_mu = nullptr;
	double	   *d_c64 = nullptr;
	unsigned long long *d_acc = nullptr;	/* k*d + k, then moved, then inertia */
	double	   *d_partials = nullptr;
	float	   *d_tile = nullptr;
	double	   *d_dist2 = nullptr;	/* chunk_rows, for assign() */
	float	   *d_maxabs = nullptr;

	cudaStream_t s_comp = nullptr, s_copy = nullptr;
	cudaEvent_t ev_copy[2] = {nullptr, nullptr}, ev_done[2] = {nullptr, nullptr};
	cudaEvent_t ev_upload = nullptr;	/* the centroid upload's copies out of h_cstage/h_c64 */
	cublasHandle_t blas = nullptr;

	/* host state */
	std::vector<double> cent;	/* k x d current centroids */
	std::vector<double> mu;		/* d: centring point (sample mean) */
	double		qscale = 1.0;
	bool		cent_dirty = true;
	unsigned long long *h_acc = nullptr;	/* pinned mirror of d_acc */
	float	   *h_cstage = nullptr; /* pinned staging for centroid upload */
	double	   *h_c64 = nullptr;	/* pinned staging, k x d fp64 centroids */
	size_t		allocated = 0;	/* bytes of device memory this run holds */
	int64_t		budget = 0;
	int			launches = 0;	/* kernel launches + copies in the last pass */
};

/*
 * TF32 part of v: the nearest value with 10 explicit mantissa bits (ties
 * away from zero), exactly representable in TF32, so the tensor cores take it
 * unchanged whatever their own rounding; v - tf32_hi(v) is exact in fp32.
 */
__host__ __device__ inline float
tf32_hi(float v)
{
	uint32_t	u;
	memcpy(&u, &v, 4);
	uint32_t	r = (u + 0x1000u) & 0xffffe000u;
	float		h;
	memcpy(&h, &r, 4);
	if ((r & 0x7f800000u) == 0x7f800000u)	/* rounded up into infinity: truncate instead */
	{
		r = u & 0xffffe000u;
		memcpy(&h, &r, 4);
	}
	return h;
}

/*
 * The GEMM path runs on a device copy of x centred in place (cuBLAS reads x'
 * directly), so its exact distances and sums are of x' and mu is added back
 * to the means. The other paths keep x as given and centre in registers.
 */
inline bool
centred_copy(const Run &r)
{
	return r.path == PATH_GEMM;
}

/* Launchers (pgkm_cuda_kernels.cu). */
void		launch_pass_chunk(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);
int			fused_grid(Run &r);
void		launch_reduce_partials(const double *partials, int64_t nslots, double *out, cudaStream_t s);
void		launch_maxabs(const float *x, int64_t count, float *out, cudaStream_t s);
void		launch_fill_int(int32_t *p, int64_t n, int32_t v, cudaStream_t s);
void		launch_center(float *x, int64_t rows, int d, const float *mu, cudaStream_t s);
void		launch_split_tf32(float *x, float *lo, int64_t count, cudaStream_t s);
size_t		priv_bytes(const Run &r);
bool		priv_fits(const Run &r, size_t other_smem);
void		allow_smem(const void *kernel, const Run &r, size_t smem);

/* pgkm_cuda_tiled.cu: the TILED path's pass, and the label-sorted update it
 * shares with the GEMM path (labels of the chunk already written). */
void		launch_tiled_pass(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);
void		launch_sorted_update(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);

/* Plugin helpers (pgkm_cuda_plugin.cu). */
void	   *dev_alloc(Run &r, size_t bytes);
void		dev_free(Run &r, void *p, size_t bytes);
void		check_interrupt(Run &r);
void		make_current(Run &r, const double *centroids);

/* k-means++ (pgkm_cuda_init.cu). */
int32_t		kmeanspp(Run &r, uint64_t seed, double *centroids);

}							/* namespace pgkm_cuda */

#endif
