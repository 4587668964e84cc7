#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "hwsig/render.h"

using namespace hwsig;

static Interval sample()
{
	Interval iv;
	iv.realtime_ns = 1700000000500000000ull;
	iv.interval_s = 0.5;
	iv.metrics.push_back({"sched.steal_ratio", "system", 0.125, "ratio", "procfs.stat", "", Layer::Sched});
	iv.metrics.push_back({"sched.steal_ratio", "cpu:1", 0.25, "ratio", "procfs.stat", "", Layer::Sched});
	iv.metrics.push_back({"cpu.ipc", "vm:web01", 1.5, "insn/cycle", "perf", "multiplexed: counted 50% of the time, scaled", Layer::Cpu});
	iv.unavailable.push_back({"cpu.ipc", "system", "no hardware PMU: \"quoted\"\n"});
	iv.unavailable.push_back({"io.iops_read", "dev:vda", "no events in this interval"});
	iv.unavailable.push_back({"io.iops_read", "dev:vdb", "no events in this interval"});
	return iv;
}

TEST_CASE("json: one object, exact schema, escaped", "[render]")
{
	RenderOptions opt;
	std::string j = render_json(sample(), opt);
	CHECK(j.find('\n') == std::string::npos);
	CHECK(j.rfind("{\"timestamp\":1700000000.5,\"interval_s\":0.5,\"metrics\":[", 0) == 0);
	CHECK(j.find("{\"id\":\"sched.steal_ratio\",\"value\":0.125,\"unit\":\"ratio\",\"scope\":\"system\",\"source\":\"procfs.stat\"}") != std::string::npos);
	CHECK(j.find("cpu:1") == std::string::npos); // per-CPU hidden by default
	CHECK(j.find("\"note\":\"multiplexed: counted 50% of the time, scaled\"") != std::string::npos);
	CHECK(j.find("\"reason\":\"no hardware PMU: \\\"quoted\\\"\\n\"") != std::string::npos);
	opt.per_cpu = true;
	CHECK(render_json(sample(), opt).find("\"scope\":\"cpu:1\"") != std::string::npos);
}

TEST_CASE("json: a summary line starts with \"summary\":true, then the interval's keys", "[render]")
{
	RenderOptions opt;
	opt.summary = true;
	opt.title = "summary of 3 intervals"; // the table's; not in the JSON
	std::string j = render_json(sample(), opt);
	CHECK(j.rfind("{\"summary\":true,\"timestamp\":1700000000.5,\"interval_s\":0.5,\"metrics\":[", 0) == 0);
	CHECK(j.find("summary of") == std::string::npos);
	// The rest of the line is the interval line's.
	opt.summary = false;
	CHECK(j.substr(std::string("{\"summary\":true,").size()) == render_json(sample(), opt).substr(1));
}

TEST_CASE("table groups by layer and lists unavailable metrics", "[render]")
{
	RenderOptions opt;
	std::string t = render_table(sample(), opt);
	auto cpu = t.find("\nCPU\n"), sched = t.find("\nScheduler\n"), unav = t.find("\nUnavailable\n");
	REQUIRE(cpu != std::string::npos);
	REQUIRE(sched != std::string::npos);
	REQUIRE(unav != std::string::npos);
	CHECK(cpu < sched);
	CHECK(sched < unav);
	CHECK(t.find("0.125") != std::string::npos);
	CHECK(t.find("dev:vda +1") != std::string::npos); // two scopes, one reason: one line
	// cpu.ipc has a value for vm:web01, so its system note hides without -v.
	CHECK(t.find("no hardware PMU") == std::string::npos);
	opt.verbose = true;
	CHECK(render_table(sample(), opt).find("no hardware PMU") != std::string::npos);
}

TEST_CASE("vm view keeps that VM and the host", "[render]")
{
	RenderOptions opt;
	opt.vm = "web01";
	CHECK(scope_visible("vm:web01", opt));
	CHECK(scope_visible("system", opt));
	CHECK_FALSE(scope_visible("vm:db02", opt));
	CHECK_FALSE(scope_visible("dev:vda", opt));
}

TEST_CASE("table with -v: every unavailable scope on its own line, the columns after the scope aligned", "[render]")
{
	Interval iv = sample();
	iv.unavailable.push_back({"mem.hugepage_utilization", "hugepages:2048kB", "none reserved"});
	iv.unavailable.push_back({"mem.hugepage_utilization", "hugepages:1048576kB", "none reserved"});
	RenderOptions opt;
	opt.verbose = true;
	opt.per_cpu = true;
	std::string t = render_table(iv, opt);
	INFO(t);
	CHECK(t.find(" +1") == std::string::npos); // no collapsing with -v
	std::vector<std::string> lines;
	for (std::size_t at = 0, nl; (nl = t.find('\n', at)) != std::string::npos; at = nl + 1)
		lines.push_back(t.substr(at, nl - at));
	// Metric lines: "[source]" starts at one column for every scope.
	std::set<std::size_t> source_col;
	std::size_t metric_lines = 0;
	for (const auto &l : lines)
		if (l.find("  [") != std::string::npos) {
			++metric_lines;
			source_col.insert(l.find("  ["));
		}
	CHECK(metric_lines == 3);
	CHECK(source_col.size() == 1);
	// Unavailable lines: the reason starts at one column, past the widest scope.
	std::set<std::size_t> reason_col;
	std::size_t unavailable_lines = 0;
	bool in_unavailable = false;
	for (const auto &l : lines) {
		if (l == "Unavailable") {
			in_unavailable = true;
			continue;
		}
		if (!in_unavailable || l.empty()) // sample()'s reason ends in a newline
			continue;
		++unavailable_lines;
		for (const char *scope : {"system ", "dev:vda ", "dev:vdb ", "hugepages:2048kB ", "hugepages:1048576kB "}) {
			auto at = l.find(scope);
			if (at == std::string::npos)
				continue;
			auto reason = l.find_first_not_of(' ', at + std::string(scope).size() - 1);
			reason_col.insert(reason);
		}
	}
	CHECK(unavailable_lines == 5); // cpu.ipc system, dev:vda, dev:vdb, two page sizes
	CHECK(reason_col.size() == 1);
	// Without -v the two devices share a line.
	opt.verbose = false;
	CHECK(render_table(iv, opt).find("dev:vda +1") != std::string::npos);
}
