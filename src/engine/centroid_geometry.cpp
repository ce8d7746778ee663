/*
 * centroid_geometry.cpp: drift, centred float copies and inter-centroid lower
 * bounds for the pruned assignment methods (centroid_geometry.h).
 */
#include "centroid_geometry.h"
#include "thread_pool.h"

#include <algorithm>
#include <limits>

namespace pgkm
{

CentroidGeometry::CentroidGeometry(int32_t d, int32_t kmax, const double *mean)
	: d_(d), kmax_(kmax), m_(d), gm_(d), kern_(current_argmin_kernel())
{
	meanf_.resize(d);
	for (int32_t j = 0; j < d; j++)
		meanf_[j] = (float) mean[j];
	cur_.assign((size_t) kmax * d, 0.0);
	ref_.assign((size_t) kmax * d, 0.0);
	drift_.assign(kmax, 0.0);
	rowf_.assign((size_t) kmax * d, 0.0f);
	cnorm_.assign(kmax, 0.0f);
	panels_.assign(panel_floats(kmax, d, kern_.cb), 0.0f);
	pnorm_.assign(padded_norms(kmax, kern_.cb), 0.0f);
	err_.assign(kmax, 0.0);
}

CentroidGeometry::Change
CentroidGeometry::set(const double *centroids, int32_t k)
{
	Change		ch {false, passed_.exchange(false)};
	const size_t kd = (size_t) k * d_;
	if (k != k_)
	{
		k_ = k;
		std::copy(centroids, centroids + kd, cur_.begin());
		std::copy(centroids, centroids + kd, ref_.begin());
		std::fill(drift_.begin(), drift_.end(), 0.0);
		drift_max_ = drift_2nd_ = 0;
		drift_arg_ = -1;
		std::vector<int32_t> identity((size_t) (k + BLOCK - 1) / BLOCK * BLOCK, -1);
		for (int32_t c = 0; c < k; c++)
			identity[c] = c;
		order_.swap(identity);
		rebuild_floats();
		rebuild_blocks();
		ch.reset = true;
		return ch;
	}
	if (ch.passed)
		std::copy(cur_.begin(), cur_.begin() + kd, ref_.begin());
	std::copy(centroids, centroids + kd, cur_.begin());
	drift_max_ = drift_2nd_ = 0;
	drift_arg_ = -1;
	for (int32_t c = 0; c < k; c++)
	{
		const double *a = &cur_[(size_t) c * d_], *b = &ref_[(size_t) c * d_];
		double		s = 0;
		for (int32_t j = 0; j < d_; j++)
			s += (a[j] - b[j]) * (a[j] - b[j]);
		double		dr = s == 0 ? 0.0 : m_.norm_up(std::sqrt(s));
		drift_[c] = dr;
		if (dr > drift_max_)
		{
			drift_2nd_ = drift_max_;
			drift_max_ = dr;
			drift_arg_ = c;
		}
		else if (dr > drift_2nd_)
			drift_2nd_ = dr;
	}
	rebuild_floats();
	rebuild_blocks();
	return ch;
}

/*
 * c' = fl32(fl64(c - m)); e_c covers both roundings: the float one exactly
 * (the difference of a double and its float rounding is exact), the fp64
 * one by 2u ||c - m||; plus 2^-60 for the float kernels' underflow. n_c is
 * a float sum of the float squares (point 6 allows any order); C bounds
 * ||c'|| from the fp64 sum of its exact squares.
 */
void
CentroidGeometry::rebuild_floats()
{
	err_max_ = 0;
	double		c2max = 0;
	for (int32_t c = 0; c < k_; c++)
	{
		double		e2 = 0, n2 = 0, f2 = 0;
		float		nf = 0;
		for (int32_t j = 0; j < d_; j++)
		{
			double		r = cur_[(size_t) c * d_ + j] - (double) meanf_[j];
			float		f = (float) r;
			rowf_[(size_t) c * d_ + j] = f;
			double		t = (double) f - r;
			e2 += t * t;
			n2 += r * r;
			f2 += (double) f * f;
			nf += f * f;
		}
		double		e = up(m_.norm_up(std::sqrt(e2)) + m_.norm_up(std::sqrt(n2)) * 0x1p-52 + 0x1p-60);
		err_[c] = e;
		err_max_ = std::max(err_max_, e);
		cnorm_[c] = nf;
		c2max = std::max(c2max, f2);
	}
	gm_.set_c(m_.norm_up(std::sqrt(c2max)));
	pack_panels(rowf_.data(), cnorm_.data(), k_, d_, kern_.cb, panels_.data(), pnorm_.data());
}

void
CentroidGeometry::set_order(const std::vector<int32_t> &order)
{
	order_ = order;
	rebuild_blocks();
}

void
CentroidGeometry::rebuild_blocks()
{
	const int32_t nb = nblocks();
	blocks_.assign((size_t) nb * d_ * BLOCK, 0.0f);
	bnorm_.assign((size_t) nb * BLOCK, std::numeric_limits<float>::infinity());
	pad_.clear();
	for (size_t p = 0; p < order_.size(); p++)
	{
		int32_t		c = order_[p];
		if (c < 0)
		{
			pad_.push_back((int32_t) p);
			continue;
		}
		bnorm_[p] = cnorm_[c];
		float	   *blk = &blocks_[(p / BLOCK) * d_ * BLOCK + p % BLOCK];
		for (int32_t j = 0; j < d_; j++)
			blk[(size_t) j * BLOCK] = rowf_[(size_t) c * d_ + j];
	}
}

double
CentroidGeometry::centre(const float *x, float *xc, double *n2) const
{
	double		s = 0;
	for (int32_t j = 0; j < d_; j++)
	{
		xc[j] = x[j] - meanf_[j];
		s += (double) xc[j] * xc[j];
	}
	*n2 = s;
	return m_.row_error(std::sqrt(s));
}

void
CentroidGeometry::icd_rows(ThreadPool *pool,
						   const std::function<void(int32_t, const double *)> &row) const
{
	const int32_t k = k_, nb = nblocks();
	const int64_t per = 16;
	pool->parallel_for((k + per - 1) / per, [&](int64_t ch, int) {
		std::vector<float> F((size_t) nb * BLOCK);
		std::vector<double> lo(k);
		for (int32_t a = (int32_t) (ch * per); a < std::min<int64_t>(k, (ch + 1) * per); a++)
		{
			fsqdist_blocks(rowf(a), blocks_.data(), d_, nb, F.data());
			for (size_t p = 0; p < order_.size(); p++)
			{
				int32_t		c = order_[p];
				if (c >= 0)
					lo[c] = c == a ? 0.0 : m_.lo_float(F[p], up(err_[a] + err_[c]));
			}
			row(a, lo.data());
		}
	});
}

}							/* namespace pgkm */
