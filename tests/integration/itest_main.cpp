/*
 * itest_main.cpp: helpers and the global fixture that builds the test tables.
 *
 * Tables are generated in SQL with setseed() so that every run sees the same
 * data; they are UNLOGGED (no WAL) because they are scratch data.
 */
#include "itest_common.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace itest
{
int64_t big_rows()
{
	const char *s = std::getenv("PGKM_ITEST_BIG_ROWS");
	return s ? std::atoll(s) : 1000000;
}

int big_dims()
{
	const char *s = std::getenv("PGKM_ITEST_BIG_DIMS");
	return s ? std::atoi(s) : 32;
}

pqxx::result exec(pqxx::connection &c, const std::string &sql)
{
	pqxx::nontransaction tx(c);
	return tx.exec(sql);
}

bool NoticeLog::operator()(const char msg[]) noexcept
{
	try
	{
		std::lock_guard<std::mutex> g(mu_);
		lines_.emplace_back(Clock::now(), msg);
	}
	catch (...)
	{
	}
	return true;
}

double NoticeLog::first(const std::string &needle, Clock::time_point since) const
{
	std::lock_guard<std::mutex> g(mu_);
	for (auto &l : lines_)
		if (l.first >= since && l.second.find(needle) != std::string::npos)
			return std::chrono::duration<double>(l.first - since).count();
	return -1;
}

std::string NoticeLog::first_text(const std::string &needle, Clock::time_point since) const
{
	std::lock_guard<std::mutex> g(mu_);
	for (auto &l : lines_)
		if (l.first >= since && l.second.find(needle) != std::string::npos)
			return l.second;
	return "";
}

size_t NoticeLog::count(const std::string &needle) const
{
	std::lock_guard<std::mutex> g(mu_);
	size_t n = 0;
	for (auto &l : lines_)
		n += l.second.find(needle) != std::string::npos;
	return n;
}

std::vector<std::string> NoticeLog::all() const
{
	std::lock_guard<std::mutex> g(mu_);
	std::vector<std::string> out;
	for (auto &l : lines_)
		out.push_back(l.second);
	return out;
}

long proc_status_kb(int pid, const char *key)
{
	std::ifstream f("/proc/" + std::to_string(pid) + "/status");
	std::string line, k = std::string(key) + ":";
	while (std::getline(f, line))
		if (line.compare(0, k.size(), k) == 0)
			return std::atol(line.c_str() + k.size());
	return -1;
}

}  // namespace itest

namespace
{
/*
 * Builds pgkm_itest.* once. The big table is rebuilt only when its shape
 * differs from what this run asks for, so re-running the suite is quick.
 */
class TablesEnvironment : public ::testing::Environment
{
public:
	void SetUp() override
	{
		using namespace itest;
		auto t0 = Clock::now();
		pqxx::connection c("");
		exec(c, "SET client_min_messages = warning");
		exec(c, "CREATE EXTENSION IF NOT EXISTS pg_kmeans");
		exec(c, "CREATE SCHEMA IF NOT EXISTS pgkm_itest");

		const int64_t n = big_rows();
		const int d = big_dims();
		const std::string tag = std::to_string(n) + "x" + std::to_string(d);
		/* Reuse needs the same shape and all rows (a crash empties UNLOGGED tables). */
		auto r = exec(c, "SELECT obj_description(to_regclass('pgkm_itest.big'), 'pg_class')");
		bool reuse = !r[0][0].is_null() && r[0][0].as<std::string>() == tag &&
					 scalar<int64_t>(c, "SELECT count(*) FROM pgkm_itest.big") == n;
		if (!reuse)
		{
			exec(c, "DROP TABLE IF EXISTS pgkm_itest.big");
			exec(c, "SELECT setseed(0.25)");
			exec(c, "CREATE UNLOGGED TABLE pgkm_itest.big AS SELECT i AS id, "
					"ARRAY(SELECT random()::real FROM generate_series(1, " + std::to_string(d) +
					") WHERE i > 0) AS v FROM generate_series(1, " + std::to_string(n) + ") i");
			exec(c, "COMMENT ON TABLE pgkm_itest.big IS '" + tag + "'");
			exec(c, "VACUUM ANALYZE pgkm_itest.big");
			/* Warm the buffer cache so that scan timings do not depend on disk. */
			exec(c, "SELECT count(*) FROM pgkm_itest.big");
		}

		/*
		 * Small well-separated Gaussian blobs, one table per concurrent session:
		 * session s has k = 2 + s blobs in 3-D, blob j centred at
		 * (20 j, 20 s, -20 j) with sigma 0.5 and 2000 + 500 j points, so that
		 * the exact partition is known and cluster sizes differ.
		 */
		exec(c, "DROP TABLE IF EXISTS pgkm_itest.blobs");
		exec(c, "SELECT setseed(0.75)");
		exec(c, R"SQL(
CREATE UNLOGGED TABLE pgkm_itest.blobs AS
SELECT s AS session, j AS blob,
       (20 * j + 0.5 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::real AS x,
       (20 * s + 0.5 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::real AS y,
       (-20 * j + 0.5 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::float8 AS z
FROM generate_series(0, 7) s, generate_series(0, 1 + s) j,
     LATERAL generate_series(1, 2000 + 500 * j) i
)SQL");
		for (int s = 0; s < 8; s++)
		{
			const std::string t = "pgkm_itest.blobs_" + std::to_string(s);
			exec(c, "DROP TABLE IF EXISTS " + t);
			exec(c, "CREATE UNLOGGED TABLE " + t + " AS SELECT * FROM pgkm_itest.blobs WHERE session = " +
					std::to_string(s));
		}

		/* Small table for the 1,000-call memory test. */
		exec(c, "DROP TABLE IF EXISTS pgkm_itest.small");
		exec(c, "SELECT setseed(0.5)");
		exec(c, "CREATE UNLOGGED TABLE pgkm_itest.small AS SELECT i AS id, "
				"ARRAY(SELECT random() FROM generate_series(1, 8) WHERE i > 0)::float8[] AS v "
				"FROM generate_series(1, 10000) i");
		std::cout << "[ itest    ] tables ready in " << seconds_since(t0) << " s (big: " << tag
				  << ")" << std::endl;
		watcher_.reset(new pqxx::connection(""));
	}

	/*
	 * A backend that crashes makes the postmaster end every session, so a
	 * connection that stayed idle through the whole suite detects a crash
	 * that the tests themselves might have survived by reconnecting.
	 */
	void TearDown() override
	{
		try
		{
			itest::exec(*watcher_, "SELECT 1");
		}
		catch (const std::exception &e)
		{
			ADD_FAILURE() << "the idle watcher connection died (a backend crashed?): " << e.what();
		}
	}

private:
	std::unique_ptr<pqxx::connection> watcher_;
};

}  // namespace

int main(int argc, char **argv)
{
	::testing::InitGoogleTest(&argc, argv);
	::testing::AddGlobalTestEnvironment(new TablesEnvironment);
	return RUN_ALL_TESTS();
}
