/*
 * kernel_reference.h: an independent fp64 kernel k-means, the yardstick the
 * engine's kernel method is tested against. Every quantity is taken from
 * its definition, with no trick of the engine's:
 *   D_ij = K_ii - 2/|L_j| sum_{l in L_j} K_il + 1/|L_j|^2 sum_{l,m in L_j} K_lm,
 * the centroid shift as the feature-space distance between the means of
 * two partitions, K in fp64 straight from the float rows. The loop follows
 * the documented semantics of kernel_kmeans.cpp (convergence, the final
 * assignment, the empty-cluster policy: the initial partition, every pass
 * and the final assignment). Plain C++ (no test framework).
 */
#ifndef PGKM_TEST_KERNEL_REFERENCE_H
#define PGKM_TEST_KERNEL_REFERENCE_H

#include <cstdint>
#include <vector>

namespace pgkm_test
{

struct RefKernel
{
	int			kind;			/* pgkm_kernel */
	double		gamma;			/* resolved (> 0) */
	double		coef0;
	int			degree;
};

/* K (n x n, fp64) of the float rows x (n x d). */
std::vector<double> ref_kernel_matrix(const std::vector<float> &x, int32_t d, const RefKernel &p);

/* D (n x k) from the partition labels (-1: a row in no cluster); +infinity for an empty cluster. */
std::vector<double> ref_kernel_distances(const std::vector<double> &K, int64_t n,
										 const std::vector<int32_t> &labels, int32_t k);

/* ||c_A - c_B||^2 in feature space between the means of row sets A and B. */
double		ref_feature_distance(const std::vector<double> &K, int64_t n,
								 const std::vector<int32_t> &a, const std::vector<int32_t> &b);

struct RefKernelResult
{
	std::vector<int32_t> init;	/* the starting partition, empty clusters filled */
	std::vector<int32_t> labels;	/* final assignment */
	std::vector<int32_t> members;	/* the partition it was assigned against */
	std::vector<double> dist2;	/* D at each final label */
	double		inertia = 0;	/* sum of max(D, 0) (D < 0 only for a kernel that is not PSD) */
	int			iterations = 0;
	bool		converged = false;
	int			repairs = 0;
	int			unfilled = 0;	/* clusters left empty although rows are apart */
};

/*
 * Kernel k-means of the float rows x (n x d, K their kernel matrix) from the
 * initial partition init (labels in 0..k-1).
 */
RefKernelResult ref_kernel_kmeans(const std::vector<double> &K, const std::vector<float> &x,
								  int32_t d, std::vector<int32_t> init, int32_t k, int max_iter,
								  double tol);

/* Adjusted Rand index of two labelings. */
double		adjusted_rand_index(const std::vector<int32_t> &a, const std::vector<int32_t> &b);

}							/* namespace pgkm_test */

#endif							/* PGKM_TEST_KERNEL_REFERENCE_H */
