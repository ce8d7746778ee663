/*
 * kernel_kmeans.h: kernel k-means, its own step loop (kernel_kmeans.cpp)
 * over a KernelDevice (kernel_device.h). pgkm_run (driver.cpp) hands a run
 * of method KERNEL to it whole: init, iterations, final assignment, n_init
 * and the result.
 */
#ifndef PGKM_KERNEL_KMEANS_H
#define PGKM_KERNEL_KMEANS_H

#include "kernel_device.h"
#include "pgkm_engine.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace pgkm
{

class ThreadPool;

/* One kernel k-means run, stepped like pgkm_run (one pass over K per step at most). */
class KernelRun
{
public:
	virtual		~KernelRun() {}
	/* PGKM_OK (more to do) or PGKM_DONE; throws EngineError or Interrupted. */
	virtual int step(pgkm_progress *progress) = 0;
	/* The best run's result; false until done. */
	virtual bool result(pgkm_result *out) const = 0;
};

/*
 * Validated options (validate_kernel_options), x (n x d) outliving the run.
 * Reads the data statistics (rejecting NaN and infinity) and picks the
 * device and where K lives; throws EngineError or Interrupted.
 */
std::unique_ptr<KernelRun> make_kernel_run(const float *x, int64_t n, int32_t d,
										   const pgkm_options &opt,
										   pgkm_interrupt_fn interrupt, void *interrupt_ctx);

/* The checks of the kernel options that need no data pass (api.cpp calls them). */
void		validate_kernel_options(int64_t n, int32_t d, const pgkm_options &opt);

/* pgkm_estimate_bytes for method KERNEL, K counted when it would be stored. */
int64_t		kernel_estimate_bytes(int64_t n, int32_t d, const pgkm_options &opt);

/*
 * Is K stored (else recomputed every pass)? kernel_matrix AUTO stores it
 * when the whole run then fits opt.memory_limit, or 3/4 of physical memory
 * when there is no limit: a stored K is never slower when it fits (a
 * recomputed tile costs the Gram product and the map again on every pass). An
 * explicit STORED larger than physical memory is refused (EngineError).
 */
bool		kernel_store_matrix(int64_t n, int32_t d, const pgkm_options &opt, int threads);

/*
 * Greedy k-means++ in feature space (kernel_kmeanspp.cpp): writes up to k
 * seed rows and each row's nearest seed as labels (lowest seed on ties);
 * returns the seeds found (fewer than k when every row already coincides in
 * feature space with a seed) and the final potential.
 */
int32_t		kernel_kmeanspp(KernelDevice *dev, int64_t n, int32_t k, uint64_t seed,
							ThreadPool *pool, int64_t *seeds, int32_t *labels,
							double *potential);

/* What a pass from a partition leaves for the moves into empty clusters. */
struct KernelPassView
{
	const float *x;				/* n x d: the rows */
	int64_t		n;
	int32_t		d;
	int32_t		k;
	const int32_t *labels;		/* n: each row's nearest cluster */
	const double *dist2;		/* n: D there */
	const double *diag;			/* n: K_ii */
	const double *norms;		/* k: C_c of the partition the pass was from */
	const int64_t *sizes;		/* k: its cluster sizes */
};

/*
 * The rows the clusters empty in part (sizes: part's cluster sizes) move to
 * after the pass p, in cluster order (kernel_relocate.cpp); keep_donors:
 * each leaving a cluster of part that keeps a row.
 */
std::vector<int64_t> kernel_rows_for_empty(const KernelPassView &p, const std::vector<int32_t> &part,
										   std::vector<int64_t> sizes, bool keep_donors);

/* Moves kernel_rows_for_empty into those clusters of part (sizes updated); returns the rows moved. */
int32_t		kernel_fill_empty(const KernelPassView &p, std::vector<int32_t> &part,
							  std::vector<int64_t> &sizes, bool keep_donors);

}							/* namespace pgkm */

#endif							/* PGKM_KERNEL_KMEANS_H */
