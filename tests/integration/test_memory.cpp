/*
 * test_memory.cpp: 1,000 calls in one session do not grow the backend.
 *
 * The backend's resident memory is read from /proc/<pg_backend_pid()>/status
 * (the test runs on the server's machine). RssAnon is the backend's private
 * heap; VmRSS also counts shared buffers it touches, so it gets more slack.
 * The calls cover every function and an error path, because leaks tend to
 * hide in error handling (memory allocated outside a memory context).
 */
#include "itest_common.h"

#include <gtest/gtest.h>

#include <iostream>

using namespace itest;

namespace
{
/* One call of the mix; i selects which. Errors are expected on i % 7 == 5, 6. */
void one_call(pqxx::connection &c, int i)
{
	const std::string seed = std::to_string(i);
	switch (i % 7)
	{
		case 0:
			exec(c, "SELECT * FROM kmeans_centroids('pgkm_itest.small', ARRAY['v'], 8, seed => " + seed + ")");
			break;
		case 1:
			exec(c, "SELECT count(*), sum(distance) FROM kmeans('pgkm_itest.small', ARRAY['v'], 8, seed => " +
					seed + ")");
			break;
		case 2:
			exec(c, "SELECT kmeans_fit('itest_mem', 'pgkm_itest.small', ARRAY['v'], 4, seed => " + seed + ")");
			break;
		case 3:
			exec(c, "SELECT sum(kmeans_predict('itest_mem', v)) FROM pgkm_itest.small WHERE id <= 200");
			break;
		case 4:
			exec(c, "SELECT * FROM kmeans_model_centroids('itest_mem')");
			break;
		case 5:
		case 6:
			try
			{
				if (i % 7 == 5)	/* k > rows: an ERROR from the glue */
					exec(c, "SELECT * FROM kmeans_centroids('pgkm_itest.small', ARRAY['v'], 20000)");
				else			/* wrong feature length: an ERROR from predict */
					exec(c, "SELECT kmeans_predict('itest_mem', ARRAY[1.0, 2.0])");
				ADD_FAILURE() << "expected an error in call " << i;
			}
			catch (const pqxx::sql_error &)
			{
			}
			break;
	}
}
}  // namespace

TEST(Memory, ThousandCallsNoGrowth)
{
	pqxx::connection c("");
	const int pid = c.backendpid();
	if (proc_status_kb(pid, "VmRSS") < 0)
		GTEST_SKIP() << "backend " << pid << " is not on this machine (/proc unreadable)";
	exec(c, "SET client_min_messages = warning");

	const int warmup = 70, calls = 1000;
	auto t0 = Clock::now();
	for (int i = 0; i < warmup; i++)
		one_call(c, i);
	const long rss0 = proc_status_kb(pid, "VmRSS"), anon0 = proc_status_kb(pid, "RssAnon");
	for (int i = warmup; i < warmup + calls; i++)
		one_call(c, i);
	const long rss1 = proc_status_kb(pid, "VmRSS"), anon1 = proc_status_kb(pid, "RssAnon");
	exec(c, "SELECT kmeans_drop_model('itest_mem')");

	std::cout << "[ itest    ] " << calls << " calls in " << seconds_since(t0) << " s; backend " << pid
			  << " VmRSS " << rss0 << " -> " << rss1 << " kB, RssAnon " << anon0 << " -> " << anon1 << " kB"
			  << std::endl;
	EXPECT_EQ(scalar<int>(c, "SELECT pg_backend_pid()"), pid);
	/* A leak of the 10k x 8 float buffer per call would be ~300 MB here. */
	EXPECT_LT(anon1 - anon0, 2048) << "backend private memory grew by " << (anon1 - anon0) << " kB";
	EXPECT_LT(rss1 - rss0, 4096) << "backend RSS grew by " << (rss1 - rss0) << " kB";
}
