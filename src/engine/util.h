/*
 * util.h: small helpers used across the engine: message formatting and
 * copying into a caller's buffer, and a steady-clock stopwatch. (The name
 * of a non-finite value is pgkm_nonfinite_name, in the C API: the glue
 * names them too.)
 */
#ifndef PGKM_UTIL_H
#define PGKM_UTIL_H

#include <chrono>
#include <cstddef>
#include <string>

namespace pgkm
{

/* printf into a std::string (at most 511 characters). */
std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

/* Copy a message into a caller's buffer, always NUL-terminated; never allocates. */
void		copy_message(char *dst, size_t len, const char *msg) noexcept;
inline void
copy_message(char *dst, size_t len, const std::string &msg) noexcept
{
	copy_message(dst, len, msg.c_str());
}

/* Seconds since construction, on the steady clock. */
class Stopwatch
{
public:
	Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
	double		seconds() const
	{
		return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
	}

private:
	std::chrono::steady_clock::time_point t0_;
};

}							/* namespace pgkm */

#endif							/* PGKM_UTIL_H */
