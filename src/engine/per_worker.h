/*
 * per_worker.h: one value per pool worker, each on cache lines of its own.
 * Workers that push to their own list or add to their own sums in a
 * parallel_for would otherwise share lines with their neighbours' (a
 * vector's size, small heap arrays allocated one after another), and every
 * write would take the line from the other cores.
 */
#ifndef PGKM_PER_WORKER_H
#define PGKM_PER_WORKER_H

#include <vector>

namespace pgkm
{

template <typename T>
class PerWorker
{
public:
	explicit PerWorker(int workers) : slots_(workers) {}

	T		   &operator[](int w) { return slots_[w].value; }
	const T    &operator[](int w) const { return slots_[w].value; }

private:
	struct alignas(64) Slot
	{
		T			value;
	};
	std::vector<Slot> slots_;
};

}							/* namespace pgkm */

#endif							/* PGKM_PER_WORKER_H */
