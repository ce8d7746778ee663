/*
 * test_concurrency.cpp: 8 sessions cluster at once and each gets its own
 * correct answer. Session s clusters its own table of 2 + s well-separated
 * Gaussian blobs (known labels); a result mixed up with another session's, or
 * corrupted by shared state in the engine, would not match its blobs.
 */
#include "itest_common.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <sstream>
#include <thread>

using namespace itest;

namespace
{
struct BlobRef
{
	int blob;
	double mean[3];
	long size;
	bool matched = false;
};

/* One session's work: `rounds` times kmeans_centroids + kmeans, checked. */
void run_session(int s, int rounds, std::atomic<int> &ready, std::vector<std::string> &errors,
				 double &t_start, double &t_end, Clock::time_point epoch)
{
	auto fail = [&](const std::string &m) { errors.push_back("session " + std::to_string(s) + ": " + m); };
	try
	{
		pqxx::connection c("");
		const std::string table = "pgkm_itest.blobs_" + std::to_string(s);
		const int k = 2 + s;
		const std::string args = "'" + table + "', ARRAY['x','y','z'], " + std::to_string(k) +
								 ", seed => " + std::to_string(100 + s);

		/* Reference: the blobs' own means and sizes, computed by SQL in fp64. */
		std::vector<BlobRef> ref;
		for (auto row : exec(c, "SELECT blob, avg(x::float8), avg(y::float8), avg(z), count(*) FROM " +
									table + " GROUP BY blob ORDER BY blob"))
			ref.push_back(BlobRef{row[0].as<int>(), {row[1].as<double>(), row[2].as<double>(), row[3].as<double>()},
								  row[4].as<long>()});
		if ((int) ref.size() != k)
			return fail("reference has " + std::to_string(ref.size()) + " blobs");

		ready.fetch_add(1);
		while (ready.load() < 8)
			std::this_thread::yield();
		t_start = seconds_since(epoch);

		for (int round = 0; round < rounds; round++)
		{
			for (auto &b : ref)
				b.matched = false;
			auto cents = exec(c, "SELECT cluster, centroid[1], centroid[2], centroid[3], size "
								 "FROM kmeans_centroids(" + args + ") ORDER BY cluster");
			if ((int) cents.size() != k)
				fail("kmeans_centroids returned " + std::to_string(cents.size()) + " rows");
			for (auto row : cents)
			{
				double cx[3] = {row[1].as<double>(), row[2].as<double>(), row[3].as<double>()};
				long size = row[4].as<long>();
				bool found = false;
				for (auto &b : ref)
				{
					bool close = true;
					for (int j = 0; j < 3; j++)
						close = close && std::fabs(cx[j] - b.mean[j]) < 1e-3;
					if (close && size == b.size && !b.matched)
					{
						b.matched = found = true;
						break;
					}
				}
				if (!found)
				{
					std::ostringstream m;
					m << "cluster " << row[0].as<int>() << " centroid (" << cx[0] << "," << cx[1] << "," << cx[2]
					  << ") size " << size << " matches no blob mean of " << table;
					fail(m.str());
				}
			}
			/* Labels: joined back by ctid, the partition must equal the blobs. */
			auto lab = exec(c,
				"SELECT count(*), count(DISTINCT k.cluster), count(DISTINCT (t.blob, k.cluster)), "
				"max(abs(k.distance - sqrt((t.x - m.mx)^2 + (t.y - m.my)^2 + (t.z - m.mz)^2))) "
				"FROM kmeans(" + args + ") k JOIN " + table + " t ON t.ctid = k.ctid "
				"JOIN (SELECT blob, avg(x::float8) mx, avg(y::float8) my, avg(z) mz FROM " + table +
				" GROUP BY blob) m ON m.blob = t.blob");
			long total = 0;
			for (auto &b : ref)
				total += b.size;
			if (lab[0][0].as<long>() != total || lab[0][1].as<int>() != k || lab[0][2].as<int>() != k)
				fail("kmeans labels: rows " + lab[0][0].as<std::string>() + "/" + std::to_string(total) +
					 ", clusters " + lab[0][1].as<std::string>() + ", (blob, cluster) pairs " +
					 lab[0][2].as<std::string>() + ", expected " + std::to_string(k));
			else if (lab[0][3].as<double>() > 1e-3)
				fail("distance column off by " + lab[0][3].as<std::string>());
		}
		t_end = seconds_since(epoch);
	}
	catch (const std::exception &e)
	{
		fail(std::string("exception: ") + e.what());
	}
}
}  // namespace

TEST(Concurrency, EightSessionsEachCorrect)
{
	const int sessions = 8, rounds = 3;
	std::atomic<int> ready{0};
	std::vector<std::vector<std::string>> errors(sessions);
	std::vector<double> t_start(sessions, -1), t_end(sessions, -1);
	auto epoch = Clock::now();
	std::vector<std::thread> threads;
	for (int s = 0; s < sessions; s++)
		threads.emplace_back(run_session, s, rounds, std::ref(ready), std::ref(errors[s]), std::ref(t_start[s]),
							 std::ref(t_end[s]), epoch);
	for (auto &t : threads)
		t.join();
	for (int s = 0; s < sessions; s++)
		for (auto &e : errors[s])
			ADD_FAILURE() << e;
	double last_start = 0, first_end = 1e30;
	for (int s = 0; s < sessions; s++)
	{
		last_start = std::max(last_start, t_start[s]);
		if (t_end[s] >= 0)
			first_end = std::min(first_end, t_end[s]);
	}
	/* Reported, not asserted (timing): were all 8 sessions busy at once? */
	std::cout << "[ itest    ] last session started at " << last_start << " s, first finished at " << first_end
			  << " s (" << (last_start < first_end ? "all overlapped" : "NOT all overlapped") << ")" << std::endl;

	/* The server is still healthy: no backend crashed (a crash restarts all). */
	pqxx::connection c("");
	EXPECT_EQ(scalar<int>(c, "SELECT count(*) FROM pgkm_itest.blobs_0"),
			  scalar<int>(c, "SELECT sum(size)::int FROM kmeans_centroids('pgkm_itest.blobs_0', ARRAY['x','y','z'], 2)"));
}
