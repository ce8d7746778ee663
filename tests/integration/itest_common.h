/*
 * itest_common.h: helpers shared by the libpqxx integration tests.
 *
 * The tests talk to a running server whose address comes from the usual
 * libpq variables (PGHOST, PGPORT, PGUSER, PGDATABASE); scripts/test.sh
 * starts a private cluster and exports them. Test tables live in the schema
 * pgkm_itest and are built once per run by the global environment.
 */
#ifndef PGKM_ITEST_COMMON_H
#define PGKM_ITEST_COMMON_H

#include <pqxx/pqxx>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace itest
{
using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

/* Rows/dims of the table used for long runs (env PGKM_ITEST_BIG_ROWS/DIMS). */
int64_t big_rows();
int big_dims();

/* Single statement in autocommit mode; returns the result. */
pqxx::result exec(pqxx::connection &c, const std::string &sql);

/* First field of the first row as T. */
template <typename T>
T scalar(pqxx::connection &c, const std::string &sql)
{
	return exec(c, sql)[0][0].as<T>();
}

/*
 * Collects server notices (NOTICE/INFO progress lines) with their arrival
 * time, so that a test can tell which phase a long run has reached.
 */
class NoticeLog : public pqxx::errorhandler
{
public:
	explicit NoticeLog(pqxx::connection_base &c) : pqxx::errorhandler(c) {}
	bool operator()(const char msg[]) noexcept override;
	/* Seconds since `since` when a notice containing `needle` first came, or -1. */
	double first(const std::string &needle, Clock::time_point since) const;
	/* Text of that first notice ("" if none). */
	std::string first_text(const std::string &needle, Clock::time_point since) const;
	size_t count(const std::string &needle) const;
	std::vector<std::string> all() const;

private:
	mutable std::mutex mu_;
	std::vector<std::pair<Clock::time_point, std::string>> lines_;
};

/* Key from /proc/<pid>/status in kB (VmRSS, RssAnon, ...), or -1. */
long proc_status_kb(int pid, const char *key);

}  // namespace itest

#endif
