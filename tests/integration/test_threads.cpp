/*
 * test_threads.cpp: a backend that has clustered keeps no thread between
 * calls (the engine's workers end with the run and the engine links no BLAS
 * with a pool of its own), counted in /proc/<pg_backend_pid()>/task.
 */
#include "itest_common.h"

#include <gtest/gtest.h>

#include <dirent.h>

using namespace itest;

namespace
{
/* Threads of process pid, or -1 when /proc/pid/task cannot be read (another machine). */
int task_count(int pid)
{
	DIR		   *d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
	if (!d)
		return -1;
	int			n = 0;
	while (struct dirent *e = readdir(d))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
}  // namespace

TEST(Threads, NoneLeftInTheBackendBetweenCalls)
{
	pqxx::connection c("");
	const int pid = c.backendpid();
	if (task_count(pid) < 0)
		GTEST_SKIP() << "backend " << pid << " is not on this machine (/proc unreadable)";
	EXPECT_EQ(task_count(pid), 1);
	exec(c, "SET pg_kmeans.threads = 4");
	/* both forms of the CPU assignment: d = 3 direct, d = 8 the tiled kernel */
	exec(c, "SELECT count(*) FROM kmeans('pgkm_itest.blobs', ARRAY['x', 'y', 'z'], 4, device => 'cpu')");
	exec(c, "SELECT count(*) FROM kmeans('pgkm_itest.small', ARRAY['v'], 8, device => 'cpu')");
	EXPECT_EQ(task_count(pid), 1) << "threads left in backend " << pid << " after the calls";
}
