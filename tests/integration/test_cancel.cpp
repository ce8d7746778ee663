/*
 * test_cancel.cpp: a long run answers a query cancel and statement_timeout
 * within a second, in the scan phase and in the Lloyd iterations; the backend
 * survives and the same connection runs the next query.
 *
 * The long run is pgkm_itest.big (default 1M rows x 32 dims, real[]) with
 * k = 256, tol = 0 and a huge max_iter: minutes of work on 2 cores. It uses
 * init => 'random' so that iterations start right after the scan (about
 * 0.5 s); the init test uses k-means++, whose 256 seeding rounds over 1M rows
 * take many seconds. Progress INFO lines (client_min_messages = info) tell
 * which phase the run is in: "pg_kmeans run 1/1 init ..." after the
 * initialisation, "pg_kmeans run 1/1 iteration N ..." after each iteration.
 */
#include "itest_common.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>

using namespace itest;

namespace
{
const char *kLongRun =
	"SELECT count(*) FROM kmeans_centroids('pgkm_itest.big', ARRAY['v'], 256, "
	"max_iter => 1000000, tol => 0, init => 'random', seed => 7)";

/* Progress lines name the iteration; the scan and init come before the first. */
const char *kIterationMarker = "iteration";

struct Outcome
{
	std::string sqlstate;
	std::string message;
	double t_error = -1;		/* seconds since start when the error came */
};

Outcome run_expecting_error(pqxx::connection &c, const std::string &sql, Clock::time_point t0)
{
	Outcome o;
	try
	{
		exec(c, sql);
		o.message = "query completed without error";
	}
	catch (const pqxx::sql_error &e)
	{
		o.sqlstate = e.sqlstate();
		o.message = e.what();
	}
	catch (const std::exception &e)
	{
		o.message = std::string("non-SQL error (connection lost?): ") + e.what();
	}
	o.t_error = seconds_since(t0);
	return o;
}

/*
 * Runs sql on c while another thread cancels it (PQcancel) once wait(finished)
 * returns, unless the query has ended by then; *t_cancel is when the cancel
 * was sent (seconds since t0), or -1 if it never was.
 */
template <class Wait>
Outcome run_and_cancel(pqxx::connection &c, const std::string &sql, Clock::time_point t0, Wait wait,
					   double *t_cancel)
{
	std::atomic<bool> finished{false};
	*t_cancel = -1;
	std::thread canceller([&] {
		wait(finished);
		if (finished)
			return;
		*t_cancel = seconds_since(t0);
		c.cancel_query();
	});
	Outcome o = run_expecting_error(c, sql, t0);
	finished = true;
	canceller.join();
	return o;
}

/* A wait for run_and_cancel: a fixed delay. */
auto after_ms(int ms)
{
	return [ms](const std::atomic<bool> &) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
}

/* The backend and the connection still work after an interrupted run. */
void expect_session_alive(pqxx::connection &c, int pid)
{
	ASSERT_TRUE(c.is_open());
	EXPECT_EQ(scalar<int>(c, "SELECT pg_backend_pid()"), pid) << "backend was replaced";
	EXPECT_EQ(scalar<long>(c, "SELECT sum(size) FROM kmeans_centroids('pgkm_itest.blobs_1', "
							  "ARRAY['x','y','z'], 3)"),
			  scalar<long>(c, "SELECT count(*) FROM pgkm_itest.blobs_1"));
}

/* A canceled run: SQLSTATE 57014 within 1 s of the cancel, the session still usable. */
void expect_canceled_promptly(const Outcome &o, double t_cancel, pqxx::connection &c, int pid)
{
	EXPECT_EQ(o.sqlstate, "57014") << o.message;
	EXPECT_LT(o.t_error - t_cancel, 1.0) << "cancel took too long to land";
	expect_session_alive(c, pid);
}

double g_first_iteration_s = -1;	/* measured by DuringIterations */

/* Each cancel test's session: progress lines on (they tell the phase), notices logged. */
class Cancel : public ::testing::Test
{
protected:
	pqxx::connection c {""};
	NoticeLog log {c};
	int pid = 0;

	void SetUp() override
	{
		exec(c, "SET client_min_messages = info");
		pid = c.backendpid();
	}
};
}  // namespace

TEST_F(Cancel, DuringIterations)
{
	auto t0 = Clock::now();
	double t_cancel;
	/* Wait for the first iteration, then let it run 0.5 s more. */
	Outcome o = run_and_cancel(c, kLongRun, t0, [&](const std::atomic<bool> &finished) {
		while (!finished && log.first(kIterationMarker, t0) < 0 && seconds_since(t0) < 60)
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
		std::this_thread::sleep_for(std::chrono::milliseconds(500));
	}, &t_cancel);

	g_first_iteration_s = log.first(kIterationMarker, t0);
	std::cout << "[ itest    ] first iteration after " << g_first_iteration_s << " s, cancel sent at "
			  << t_cancel << " s, error after " << o.t_error << " s: " << o.message << std::endl;
	ASSERT_GE(g_first_iteration_s, 0) << "no progress line containing '" << kIterationMarker
									  << "' within 60 s; notices seen: " << log.all().size();
	ASSERT_GE(t_cancel, 0);
	expect_canceled_promptly(o, t_cancel, c, pid);
}

TEST_F(Cancel, DuringScan)
{
	/*
	 * k = 2 and one iteration: nearly all the time is spent reading the table.
	 * A first, uncancelled run calibrates when the scan ends: the init progress
	 * line arrives at (scan end + engine time), and its DETAIL gives the engine
	 * time ("elapsed X s" since the engine run was created).
	 */
	const std::string query =
		"SELECT count(*) FROM kmeans('pgkm_itest.big', ARRAY['v'], 2, max_iter => 1, seed => 1)";
	auto tc = Clock::now();
	exec(c, query);
	const double init_at = log.first("pg_kmeans run 1/1 init", tc);
	const std::string init_text = log.first_text("pg_kmeans run 1/1 init", tc);
	const size_t at = init_text.find("elapsed ");
	ASSERT_TRUE(init_at >= 0 && at != std::string::npos) << "no init progress line: " << init_text;
	const double scan_end = init_at - std::atof(init_text.c_str() + at + 8);

	auto t0 = Clock::now();
	double t_cancel;
	const int delay_ms = static_cast<int>(std::max(0.0, std::min(0.1, scan_end / 3)) * 1000);
	Outcome o = run_and_cancel(c, query, t0, after_ms(delay_ms), &t_cancel);
	/* Init and iteration lines both start "pg_kmeans run"; none may precede the cancel. */
	double first_step = log.first("pg_kmeans run", t0);
	std::cout << "[ itest    ] scan ends ~" << scan_end << " s into the call; cancel sent at " << t_cancel
			  << " s, error after " << o.t_error << " s, first progress line at " << first_step << " s: "
			  << o.message << std::endl;
	ASSERT_GE(t_cancel, 0) << "the run finished before the cancel";
	EXPECT_LT(t_cancel, scan_end) << "cancel was sent after the calibrated end of the scan";
	EXPECT_TRUE(first_step < 0 || first_step > t_cancel) << "cancel did not land in the scan phase";
	expect_canceled_promptly(o, t_cancel, c, pid);
}

TEST_F(Cancel, DuringInit)
{
	/*
	 * k-means++ seeding of 4096 centres over 1M rows (on a sample of 131,072
	 * rows; k = 256's 16,384 were done 0.35 s into the call): cancel 1 s in, after the scan.
	 */
	auto t0 = Clock::now();
	double t_cancel;
	Outcome o = run_and_cancel(c,
		"SELECT count(*) FROM kmeans_centroids('pgkm_itest.big', ARRAY['v'], 4096, "
		"init => 'k-means++', seed => 3)", t0, after_ms(1000), &t_cancel);
	double first_step = log.first("pg_kmeans run", t0);
	std::cout << "[ itest    ] cancel sent at " << t_cancel << " s, error after " << o.t_error
			  << " s, first progress line at " << first_step << " s: " << o.message << std::endl;
	ASSERT_GE(t_cancel, 0) << "the run finished in under 1 s";
	EXPECT_TRUE(first_step < 0 || first_step > t_cancel) << "the initialisation was over before the cancel";
	expect_canceled_promptly(o, t_cancel, c, pid);
}

TEST(StatementTimeout, ShortTimeout)
{
	/* 300 ms: lands in the scan (about 0.45 s for 1M x 32 on 2 cores). */
	pqxx::connection c("");
	const int pid = c.backendpid();
	exec(c, "SET statement_timeout = '300ms'");
	auto t0 = Clock::now();
	Outcome o = run_expecting_error(c, kLongRun, t0);
	std::cout << "[ itest    ] statement_timeout 300 ms: error after " << o.t_error << " s" << std::endl;
	EXPECT_EQ(o.sqlstate, "57014") << o.message;
	EXPECT_NE(o.message.find("statement timeout"), std::string::npos) << o.message;
	EXPECT_LT(o.t_error, 0.3 + 1.0);
	exec(c, "RESET statement_timeout");
	expect_session_alive(c, pid);
}

TEST(StatementTimeout, DuringIterations)
{
	/* Timeout placed 0.7 s after the first iteration seen by DuringIterations. */
	pqxx::connection c("");
	NoticeLog log(c);
	const int pid = c.backendpid();
	const double first = g_first_iteration_s > 0 ? g_first_iteration_s : 3.0;
	const int timeout_ms = static_cast<int>((first + 0.7) * 1000);
	exec(c, "SET client_min_messages = info");
	exec(c, "SET statement_timeout = " + std::to_string(timeout_ms));
	auto t0 = Clock::now();
	Outcome o = run_expecting_error(c, kLongRun, t0);
	double first_iter = log.first(kIterationMarker, t0);
	std::cout << "[ itest    ] statement_timeout " << timeout_ms << " ms: first iteration at " << first_iter
			  << " s, error after " << o.t_error << " s" << std::endl;
	EXPECT_EQ(o.sqlstate, "57014") << o.message;
	EXPECT_GE(first_iter, 0) << "timeout fired before any iteration";
	EXPECT_LT(o.t_error, timeout_ms / 1000.0 + 1.0);
	exec(c, "RESET statement_timeout");
	expect_session_alive(c, pid);
}
