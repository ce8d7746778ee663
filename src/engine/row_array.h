/*
 * row_array.h: per-row arrays (n elements) whose first write is spread over
 * the run's threads. A std::vector fills a new array on the thread that
 * sizes it, and at a million rows the page faults of that first touch were
 * most of a run's create (75 % of its time in the kernel, 2-core box).
 */
#ifndef PGKM_ROW_ARRAY_H
#define PGKM_ROW_ARRAY_H

#include "thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace pgkm
{

/* std::allocator, but resize() leaves new elements of trivial types unwritten */
template <class T>
struct UnfilledAllocator : std::allocator<T>
{
	template <class U>
	struct rebind
	{
		using other = UnfilledAllocator<U>;
	};
	UnfilledAllocator() = default;
	template <class U>
	UnfilledAllocator(const UnfilledAllocator<U> &) noexcept {}
	template <class U>
	void		construct(U *p) noexcept(std::is_nothrow_default_constructible<U>::value)
	{
		::new (static_cast<void *>(p)) U;
	}
	template <class U, class... A>
	void		construct(U *p, A &&...a)
	{
		::new (static_cast<void *>(p)) U(std::forward<A>(a)...);
	}
};

template <class T>
using RowArray = std::vector<T, UnfilledAllocator<T>>;

/* a = n copies of value, written in blocks by pool's threads. */
template <class T>
void
fill_rows(RowArray<T> &a, int64_t n, T value, ThreadPool *pool)
{
	static_assert(std::is_trivially_copyable<T>::value, "rows of plain values");
	constexpr int64_t BLOCK = 65536;
	a.resize((size_t) n);
	T		   *p = a.data();
	pool->parallel_for((n + BLOCK - 1) / BLOCK, [&](int64_t b, int) {
		std::fill(p + b * BLOCK, p + std::min(n, (b + 1) * BLOCK), value);
	});
}

}							/* namespace pgkm */

#endif							/* PGKM_ROW_ARRAY_H */
