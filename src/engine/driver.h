/*
 * driver.h: one k-means run as a state machine stepped by the C API
 * (api.cpp): init -> iterate* -> final assignment, n_init times, keeping the
 * best. The driver holds the policy (convergence, empty clusters, n_init);
 * a Device (device.h) does the passes over the data.
 */
#ifndef PGKM_DRIVER_H
#define PGKM_DRIVER_H

#include "device.h"
#include "method_trail.h"
#include "kernel_kmeans.h"
#include "pgkm_engine.h"
#include "row_array.h"
#include "run_phases.h"
#include "thread_pool.h"
#include "units.h"
#include "util.h"

#include <memory>
#include <string>
#include <vector>

/* The opaque handle of pgkm_engine.h. */
struct pgkm_run
{
public:
	/*
	 * Checks the given centroids, reads the data statistics and picks the
	 * device; throws EngineError or Interrupted. opt is validated already;
	 * x must outlive the run.
	 */
	pgkm_run(float *x, int64_t n, int32_t d, const pgkm_options &opt,
			 pgkm_interrupt_fn interrupt, void *interrupt_ctx);

	/* One bounded unit of work: PGKM_OK (more to do) or PGKM_DONE; throws on failure. */
	int			step(pgkm_progress *progress);

	/* The best run's result; false until the run is done. */
	bool		result(pgkm_result *out) const;

private:
	typedef pgkm::RunPhase Phase;
	template <typename Loop>
	friend int	pgkm::step_phase(Loop &loop, pgkm::RunPhase &phase, pgkm_progress *progress);

	/* What a finished run leaves: the current one while it runs, then the best. */
	struct Outcome
	{
		int32_t		k = 0;
		std::vector<double> centers, init_centers;
		std::vector<int64_t> sizes;
		pgkm::RowArray<int32_t> labels;	/* per row, first written on the run's threads */
		pgkm::RowArray<double> dist;	/* squared until Done, then Euclidean */
		double		inertia = 0;
		int32_t		iterations = 0;
		bool		converged = false;
		int32_t		run = 0;
		int32_t		repairs = 0;
		int32_t		unfilled = 0;	/* dropped though rows stayed apart from every centroid */
	};

	void		choose_device(const char *plugin_path);
	void		step_init(pgkm_progress *progress);
	void		step_iterate(pgkm_progress *progress);
	void		step_final(pgkm_progress *progress);
	void		finish();
	int32_t		repair_empty_clusters();
	std::vector<double> robust_column_spreads() const;
	double		fill_empty_clusters();
	void		drop_empty_clusters();
	void		fill_progress(pgkm_progress *p, int32_t iteration, double inertia,
							  int64_t moved) const;
	void		count_pass(pgkm_progress *p, int32_t iteration);

	/* the input */
	const float *x_;
	int64_t		n_;
	int32_t		d_;
	pgkm_options opt_;
	pgkm_interrupt_fn interrupt_;
	void	   *interrupt_ctx_;
	pgkm::Units units_;			/* the caller's units: results are converted back */
	std::vector<double> mean_;	/* the column means (k-means|| passes) */
	std::vector<double> sum_scales_;	/* each column's sums' grid: 1 / its step (the data is on it) */
	std::vector<double> given_;	/* INIT_GIVEN centroids, in the engine's units */
	pgkm::Stopwatch clock_;

	/* what every run of n_init shares */
	std::unique_ptr<pgkm::ThreadPool> pool_;
	std::unique_ptr<pgkm::Device> device_;
	double		tol_scaled_ = 0;
	double		data_scale_ = 1;
	std::vector<double> split_scale_;	/* robust_column_spreads(), from the run's first split */
	int			n_runs_ = 1;

	/* the current run */
	Phase		phase_ = Phase::Init;
	int			run_ = 0;
	Outcome		cur_;
	std::vector<double> old_centers_;
	std::vector<char> split_last_;	/* cluster took part in a split last iteration */
	std::vector<char> split_tries_;	/* splits of this cluster that did not separate points */
	pgkm::MethodTrail methods_;

	/* method KERNEL: its own step loop, to which step and result defer */
	std::unique_ptr<pgkm::KernelRun> kernel_;

	/* the best run so far, then the result */
	bool		have_best_ = false;
	Outcome		best_;
	std::vector<double> best_cluster_inertia_;
	std::string device_name_ = "cpu";
	std::string device_detail_;
	std::string fallback_reason_;
	std::string best_methods_;	/* the winning run's method trail */
	double		elapsed_ = 0;
};

#endif							/* PGKM_DRIVER_H */
