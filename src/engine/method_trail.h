/*
 * method_trail.h: what the driver reports about the assignment methods of a
 * run: the distance computations of every pass, and which method ran when
 * (so that 'auto' can say what it chose, e.g. "yinyang, then lloyd from
 * iteration 4").
 */
#ifndef PGKM_METHOD_TRAIL_H
#define PGKM_METHOD_TRAIL_H

#include "pgkm_engine.h"

#include <cstdint>
#include <string>

namespace pgkm
{

class MethodTrail
{
public:
	/* A new run of n_init. */
	void		start()
	{
		trail_.clear();
		last_ = -1;
	}
	/* One assignment pass of `iteration` by `method`; distances < 0: n x k. */
	int64_t		pass(int32_t iteration, int32_t method, int64_t distances, int64_t n, int32_t k)
	{
		if (distances < 0)
			distances = n * k;
		distances_ += distances;
		lloyd_ += n * k;
		if (method != last_)
		{
			const char *name = pgkm_method_name(method);
			if (last_ < 0)
				trail_ = name ? name : "?";
			else
				trail_ += std::string(", then ") + (name ? name : "?") + " from iteration " +
					std::to_string(iteration);
			last_ = method;
		}
		return distances;
	}
	const std::string &trail() const { return trail_; }
	int64_t		distances() const { return distances_; }
	int64_t		distances_lloyd() const { return lloyd_; }

private:
	std::string trail_;
	int32_t		last_ = -1;
	int64_t		distances_ = 0, lloyd_ = 0;	/* over every run */
};

}							/* namespace pgkm */

#endif							/* PGKM_METHOD_TRAIL_H */
