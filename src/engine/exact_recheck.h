/*
 * exact_recheck.h: the fp64 decision of a row the float argmin left open,
 * made cheap. Before sqdist_exact's sequential fp64 sums, a float level:
 * each candidate's direct-form float distance, summed over 32 lanes, with
 * its proven error and rho = max ||c - float(c)||, brackets ||x - c||; every
 * candidate provably further in fp64 than another drops out (the derivation
 * is in exact_recheck.cpp). Only the survivors, usually one, get
 * nearest_exact. The label is nearest_exact's over all the candidates, bit
 * for bit.
 */
#ifndef PGKM_EXACT_RECHECK_H
#define PGKM_EXACT_RECHECK_H

#include <cstdint>
#include <vector>

namespace pgkm
{

class ExactRecheck
{
public:
	/*
	 * From the fp64 centroids and their float copies (k x d each): rho and
	 * the bracket's constants for this d.
	 */
	void		set(const double *cent, const float *centf, int32_t k, int32_t d);

	/*
	 * nearest_exact(x, cent, d, cand, n) (cand = nullptr: all n centroids),
	 * through the float level. cand_out and vals are scratch.
	 */
	int32_t		nearest(const float *x, const double *cent, const float *centf, int32_t d,
						const int32_t *cand, int32_t n, std::vector<int32_t> &cand_out,
						std::vector<double> &vals) const;

private:
	double		g1_ = 0, au_ = 0, band_ = 0, rho_ = 0;
};

}							/* namespace pgkm */

#endif							/* PGKM_EXACT_RECHECK_H */
