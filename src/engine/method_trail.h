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
	/* Switches named one by one; the rest are counted (GPU 'auto' may try its method dozens of times). */
	static constexpr int NAMED_SWITCHES = 8;

	/* A new run of n_init. */
	void		start()
	{
		trail_.clear();
		last_switch_.clear();
		last_ = -1;
		switches_ = 0;
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
			const std::string step = std::string(name ? name : "?") + " from iteration " + std::to_string(iteration);
			if (last_ < 0)
				trail_ = name ? name : "?";
			else if (switches_++ < NAMED_SWITCHES)
				trail_ += ", then " + step;
			else
				last_switch_ = step;
			last_ = method;
		}
		return distances;
	}
	/* e.g. "lloyd, then yinyang from iteration 8"; past NAMED_SWITCHES, the count and the last */
	std::string trail() const
	{
		if (switches_ <= NAMED_SWITCHES)
			return trail_;
		const int	more = switches_ - NAMED_SWITCHES;
		return trail_ + ", then " + std::to_string(more) + (more == 1 ? " more switch" : " more switches") +
			", the last to " + last_switch_;
	}
	int64_t		distances() const { return distances_; }
	int64_t		distances_lloyd() const { return lloyd_; }

private:
	std::string trail_;
	std::string last_switch_;	/* the last switch past the named ones */
	int			switches_ = 0;
	int32_t		last_ = -1;
	int64_t		distances_ = 0, lloyd_ = 0;	/* over every run */
};

}							/* namespace pgkm */

#endif							/* PGKM_METHOD_TRAIL_H */
