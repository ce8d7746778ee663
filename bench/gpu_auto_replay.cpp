/*
 * gpu_auto_replay.cpp: GPU 'auto''s policy (src/engine/gpu_auto_policy.h)
 * replayed on the per-pass times of a `gpu_bench --hamerly` log taken with
 * PGKM_BENCH_TRACE=1, with no GPU: each pass runs Lloyd's time or the
 * shape's candidate's from its column (a switch pass costs the candidate's
 * first pass, at most two of its second), and the rows Lloyd moved. Prints,
 * per case, the replayed passes' time against Lloyd's and the candidate's
 * alone, the tries, and the measured 'auto' where the log has it. The
 * candidate's column carries bounds from pass 1, a try's from its switch:
 * the replay is a conservative estimate, for choosing the policy's
 * constants before a device run.
 *   usage: gpu_auto_replay LOG
 */
#include "gpu_auto_policy.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct TraceRow
{
	int64_t		moved = 0;
	std::vector<double> ms;		/* per method column */
};

struct TraceCase
{
	std::string title;
	int64_t		n = 0;
	int			d = 0, k = 0;
	std::vector<std::string> methods;
	std::vector<TraceRow> rows;
};

std::vector<TraceCase>
read_log(const char *path)
{
	std::ifstream in(path);
	std::vector<TraceCase> cases;
	std::string line;
	while (std::getline(in, line))
	{
		long long	n = 0;
		int			d = 0, k = 0;
		if (sscanf(line.c_str(), "== n = %lld, d = %d, k = %d", &n, &d, &k) == 3)
		{
			cases.emplace_back();
			cases.back().title = line;
			cases.back().n = n;
			cases.back().d = d;
			cases.back().k = k;
			continue;
		}
		if (cases.empty() || line.rfind("   trace |", 0) != 0)
			continue;
		TraceCase  &c = cases.back();
		std::vector<std::string> f;
		std::stringstream ss(line);
		for (std::string part; std::getline(ss, part, '|');)
			f.push_back(part);
		if (f.size() < 4)
			continue;
		std::stringstream cols(f[3]);
		if (f[1].find("pass") != std::string::npos)
		{
			for (std::string w; cols >> w;)
				if (w != "ms")
					c.methods.push_back(w);
			continue;
		}
		TraceRow	r;
		r.moved = std::stoll(f[2]);
		for (std::string w; cols >> w;)
		{
			if (!w.empty() && w.back() == '*')
				w.pop_back();
			r.ms.push_back(std::stod(w));
		}
		c.rows.push_back(r);
	}
	return cases;
}

int
column(const TraceCase &c, const char *method)
{
	for (size_t i = 0; i < c.methods.size(); i++)
		if (c.methods[i] == method)
			return (int) i;
	return -1;
}

}							/* namespace */

int
main(int argc, char **argv)
{
	if (argc != 2)
	{
		fprintf(stderr, "usage: %s GPU_BENCH_TRACE_LOG\n", argv[0]);
		return 2;
	}
	for (const TraceCase &c : read_log(argv[1]))
	{
		if (c.rows.size() < 2)
			continue;
		const int32_t cand = pgkm::gpu_auto_candidate(c.d, c.k);
		const int	lc = column(c, "lloyd"), cc = column(c, pgkm_method_name(cand)), ac = column(c, "auto");
		printf("%s\n", c.title.c_str());
		if (lc < 0 || cc < 0)
		{
			printf("   no lloyd or %s column\n", pgkm_method_name(cand));
			continue;
		}
		pgkm::GpuAutoPolicy pol(cand);
		double		lloyd = 0, alone = 0, replay = 0, measured = 0;
		int32_t		prev = PGKM_METHOD_LLOYD;
		const double switch_ms = std::fmin(c.rows[0].ms[cc], 2 * c.rows[1].ms[cc]);
		for (size_t p = 0; p < c.rows.size(); p++)
		{
			const TraceRow &r = c.rows[p];
			const int32_t m = pol.next();
			const double ms = m == PGKM_METHOD_LLOYD || p == 0 ? r.ms[lc] : prev == PGKM_METHOD_LLOYD ? switch_ms : r.ms[cc];
			pol.record(m, ms * 1e-3, r.moved);
			prev = m;
			lloyd += r.ms[lc];
			alone += r.ms[cc];
			replay += ms;
			measured += ac >= 0 ? r.ms[ac] : NAN;
		}
		printf("   passes over lloyd's: %s alone %.2fx, auto replayed %.2fx (%d tries), auto measured %.2fx\n",
			   pgkm_method_name(cand), lloyd / alone, lloyd / replay, pol.tries(), lloyd / measured);
	}
	return 0;
}
