/*
 * chunks.cuh: walking the rows chunk by chunk on the compute stream, resident
 * or streamed. Streamed chunk c is copied into buffer c % 2 on the copy
 * stream while chunk c - 1 is processed; at most two chunks are in flight,
 * and the interrupt callback is polled after each chunk is enqueued.
 */
#ifndef PGKM_CUDA_CHUNKS_CUH
#define PGKM_CUDA_CHUNKS_CUH

#include "run.cuh"

#include <algorithm>

namespace pgkm_cuda
{

/*
 * body(c, r0, rows, b, xp) enqueues chunk c's work on s_comp: rows [r0,
 * r0 + rows), device rows at xp (resident data, or streamed buffer b).
 */
template <class Body>
void
for_each_chunk(Run &r, Body body)
{
	Buffers    &B = r.buf;
	const int	d = r.d;
	for (int64_t c = 0; c < r.plan.nchunks; c++)
	{
		int64_t		r0 = c * r.plan.chunk_rows;
		int64_t		rows = std::min(r.plan.chunk_rows, r.n - r0);
		int			b = (int) (c & 1);
		const float *xp;
		if (r.plan.resident)
			xp = B.d_x + r0 * d;
		else
		{
			CK(cudaStreamWaitEvent(B.s_copy, B.ev_done[b], 0));
			CK(cudaMemcpyAsync(B.d_chunk[b], r.x + r0 * d, (size_t) rows * d * sizeof(float),
							   cudaMemcpyHostToDevice, B.s_copy));
			CK(cudaEventRecord(B.ev_copy[b], B.s_copy));
			CK(cudaStreamWaitEvent(B.s_comp, B.ev_copy[b], 0));
			xp = B.d_chunk[b];
			r.launches++;
		}
		body(c, r0, rows, b, xp);
		CK(cudaEventRecord(B.ev_done[b], B.s_comp));
		/* bound the queue: wait for the previous chunk, then poll */
		if (c >= 1)
			CK(cudaEventSynchronize(B.ev_done[b ^ 1]));
		check_interrupt(r);
	}
}

}							/* namespace pgkm_cuda */

#endif
