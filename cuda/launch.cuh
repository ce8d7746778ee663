/*
 * launch.cuh: the kernel launchers, one group per file that defines the
 * kernels. Pass launchers enqueue one chunk's (or tile's) work on stream s,
 * writing the chunk's inertia partials from slot slot_base on.
 */
#ifndef PGKM_CUDA_LAUNCH_CUH
#define PGKM_CUDA_LAUNCH_CUH

#include "pass_args.h"
#include "run.cuh"

#include <functional>

namespace pgkm_cuda
{

/* fused.cu: DIRECT and DOT paths, one kernel per chunk. */
void		launch_fused(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);

/* gemm.cu: cuBLAS product + argmin per row tile, then the sorted update (d <= 1024). */
void		launch_gemm_pass(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);

/* tiled.cu: tiled product + argmin, then the sorted update. */
void		launch_tiled_pass(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);

/* exact_labels.cu: the fp64 labels of the rows the TILED kernel listed. */
void		launch_decide_listed(Run &r, const PassArgs &a, cudaStream_t s);

/*
 * hamerly_label.cu: a Hamerly pass's listed rows [h.list0, h.list1), exactly
 * (the centred level where cb is given); last: then its float level's ties.
 */
struct HamArgs;
struct Bracket;
struct CentredBound;
void		launch_label_listed(Run &r, const HamArgs &h, const Bracket &br, const CentredBound *cb, bool last,
								cudaStream_t s);

/* yinyang.cu: the groups of the current centroids (once per run); a Yinyang pass's filter, its list's sort. */
void		form_yinyang_groups(Run &r);
void		launch_yinyang_filter(Run &r, const HamArgs &h, cudaStream_t s);
void		sort_listed_rows(Run &r, HamArgs &h, cudaStream_t s);

/* centroid_geometry.cu: float(c), and drifts and half-distances (drifts), and the pairs' lower bounds (h.pairs). */
void		launch_centroid_geometry(Run &r, const HamArgs &h, bool drifts, cudaStream_t s);

/*
 * bounded_pass.cu: a bounded pass's common kernel arguments; its end (the
 * sorted update, the sums and its 16 bytes of d_open_count to the host,
 * returned).
 */
HamArgs		bounded_args(Run &r);
const void *finish_bounded_pass(Run &r);
/*
 * bounded_pass.cu: rows [0, n) in slices of `slice` rows (h.list0, h.list1
 * set per slice), launch(last) for each, the interrupt polled between them.
 */
void		run_row_slices(Run &r, HamArgs &h, int64_t slice, const std::function<void(bool last)> &launch);
/* bounded_pass.cu: elkan's and sort's slice, about 0.25 TFLOP of fp64 work at most. */
int64_t		bounded_row_slice(const Run &r);
/* bounded_pass.cu: finish_bounded_pass, then the distances its kernels counted (d_open_count) and method. */
void		finish_counted_pass(Run &r, int32_t method);

/* pass.cu: a chunk's arguments that every pass sets alike (rows r0 .. r0 + rows - 1). */
PassArgs	chunk_pass_args(const Run &r, int64_t r0, int64_t rows);

/* sorted_update.cu: sums, counts and exact distances of a chunk whose labels are written. */
void		launch_sorted_update(Run &r, const PassArgs &a, int64_t slot_base, cudaStream_t s);

/* elementwise.cu */
void		launch_reduce_partials(const double *partials, int64_t nslots, double *out, cudaStream_t s);
/* out[j] = max(out[j], max |x[r][j]|) over rows x d floats, as float bits (out starts at 0). */
void		launch_col_maxabs(const float *x, int64_t rows, int d, unsigned int *out, cudaStream_t s);
void		launch_fill_int(int32_t *p, int64_t n, int32_t v, cudaStream_t s);
void		launch_row_norms(const float *x, int64_t rows, int d, float *out, cudaStream_t s);
void		launch_col_range(const float *x, int64_t rows, int d, unsigned int *range, cudaStream_t s);
void		launch_shift(float *x, int64_t rows, int d, const float *shift, cudaStream_t s);
void		launch_split_tf32(float *x, float *lo, int64_t count, cudaStream_t s);

/* pass.cu: opt a kernel in to smem bytes of dynamic shared memory (above 48 KB). */
void		allow_smem(const void *kernel, const Run &r, size_t smem);

}							/* namespace pgkm_cuda */

#endif
