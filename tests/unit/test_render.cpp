#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "hwsig/render.h"
#include "hwsig/units.h"

using namespace hwsig;

static Interval sample()
{
	Interval iv;
	iv.realtime_ns = 1700000000500000000ull;
	iv.interval_s = 0.5;
	iv.metrics.push_back({"sched.steal_ratio", "system", 0.125, "ratio", "procfs.stat", "", Layer::Sched});
	iv.metrics.push_back({"sched.steal_ratio", "cpu:1", 0.25, "ratio", "procfs.stat", "", Layer::Sched});
	iv.metrics.push_back({"cpu.ipc", "vm:web01", 1.5, "insn/cycle", "perf", "multiplexed: counted 50% of the time, scaled", Layer::Cpu});
	iv.unavailable.push_back({"cpu.ipc", "system", UnavailableCode::unsupported, "no hardware PMU: \"quoted\"\n"});
	iv.unavailable.push_back({"io.iops_read", "dev:vda", UnavailableCode::no_events, "no events in this interval"});
	iv.unavailable.push_back({"io.iops_read", "dev:vdb", UnavailableCode::no_events, "no events in this interval"});
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
	CHECK(j.find("\"reason\":\"no hardware PMU: \\\"quoted\\\"\\n\",\"code\":\"unsupported\"}") != std::string::npos);
	opt.per_cpu = true;
	CHECK(render_json(sample(), opt).find("\"scope\":\"cpu:1\"") != std::string::npos);
}

TEST_CASE("json_strings: an array of escaped strings", "[render]")
{
	CHECK(json_strings({}) == "[]");
	CHECK(json_strings({"vnet0", "a\"b\\c"}) == "[\"vnet0\",\"a\\\"b\\\\c\"]");
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
	CHECK(t.find("  sched.steal_ratio                 12.5 %          system\n") != std::string::npos);
	// Two scopes, one reason: one line, no scope.
	CHECK(t.find("\n  io.iops_read: no events in this interval\n") != std::string::npos);
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
	// Its sub-scopes (vCPUs, culprits), never another VM's whose name it begins.
	CHECK(scope_visible("vm:web01/vcpu:3", opt));
	CHECK(scope_visible("vm:web01/culprit:vm:db02", opt));
	CHECK_FALSE(scope_visible("vm:web012", opt));
	CHECK_FALSE(scope_visible("vm:web012/vcpu:0", opt));
	CHECK_FALSE(scope_visible("vm:db02/culprit:vm:web01", opt));
	CHECK_FALSE(scope_visible("dev:vda", opt));
}

TEST_CASE("table with -v: every unavailable scope on its own line, the columns after the scope aligned", "[render]")
{
	Interval iv = sample();
	iv.unavailable.push_back({"mem.hugepage_utilization", "hugepages:2048kB", UnavailableCode::no_target, "none reserved"});
	iv.unavailable.push_back({"mem.hugepage_utilization", "hugepages:1048576kB", UnavailableCode::no_target, "none reserved"});
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
	// Without -v the two devices share a line, and so do the page sizes.
	opt.verbose = false;
	t = render_table(iv, opt);
	CHECK(t.find("\n  io.iops_read: no events in this interval\n") != std::string::npos);
	CHECK(t.find("\n  mem.hugepage_utilization: none reserved\n") != std::string::npos);
	CHECK(t.find("dev:vda") == std::string::npos);
}

namespace {

std::vector<std::string> lines_of(const std::string &t)
{
	std::vector<std::string> lines;
	for (std::size_t at = 0, nl; (nl = t.find('\n', at)) != std::string::npos; at = nl + 1)
		lines.push_back(t.substr(at, nl - at));
	return lines;
}

// Interval with the units of every layer, a long note, and the unavailable
// reasons a host without a PMU gives.
Interval host()
{
	Interval iv;
	iv.realtime_ns = 1700000000500000000ull;
	iv.interval_s = 1;
	iv.metrics.push_back({"mem.imc_read_bps", "system", 3.0 * 1024 * 1024 * 1024, "B/s", "uncore PMU", "", Layer::Memory});
	iv.metrics.push_back({"mem.numa_pages_migrated_ps", "system", 1234567, "pages/s", "/proc/vmstat", "", Layer::Memory});
	iv.metrics.push_back({"mem.hugepage_utilization", "hugepages:2048kB", 0.004975, "ratio", "sysfs", "", Layer::Memory});
	iv.metrics.push_back({"io.latency_p99_us", "dev:nvme0n1", 12000, "us", "BPF block",
			      "first seen 1.00 s into the run: over its last 2.00 s of the run so far, which is long", Layer::Io});
	iv.metrics.push_back({"io.pattern_entropy", "dev:nvme0n1", 0.91, "0..1", "BPF block", "", Layer::Io});
	iv.metrics.push_back({"sched.runq_wait_p99_us", "system", 45, "us", "BPF sched", "", Layer::Sched});
	iv.metrics.push_back({"thermal.headroom_c", "system", 4.5, "degC", "sysfs", "", Layer::Thermal});
	iv.metrics.push_back({"psi.io_some_pct", "system", 7.25, "%", "/proc/pressure", "", Layer::Pressure});
	for (const char *id : {"cpu.ipc", "cpu.stall_ratio", "cpu.l1d_mpki", "cpu.l2_mpki", "cpu.llc_mpki",
			       "cpu.llc_miss_ratio", "cpu.branch_miss_ratio", "cpu.dtlb_mpki", "cpu.itlb_mpki"})
		iv.unavailable.push_back({id, "system", UnavailableCode::unsupported, "no hardware PMU: running under a hypervisor"});
	iv.unavailable.push_back({"vhost.queue_depth_p50", "system", UnavailableCode::no_target, "vhost_net is not loaded"});
	return iv;
}

} // namespace

TEST_CASE("table: human units, values right-aligned, within 80 columns", "[render]")
{
	RenderOptions opt;
	std::string t = render_table(host(), opt);
	INFO(t);
	CHECK(t.find("  mem.imc_read_bps                  3.00 GiB/s      system\n") != std::string::npos);
	CHECK(t.find("  mem.numa_pages_migrated_ps   1,230,000 pages/s    system\n") != std::string::npos);
	CHECK(t.find("  mem.hugepage_utilization         0.498 %          hugepages:2048kB\n") != std::string::npos);
	CHECK(t.find("  io.latency_p99_us                 12.0 ms         dev:nvme0n1\n") != std::string::npos);
	CHECK(t.find("  io.pattern_entropy               0.910            dev:nvme0n1\n") != std::string::npos);
	CHECK(t.find("  sched.runq_wait_p99_us            45.0 µs         system\n") != std::string::npos);
	CHECK(t.find("  thermal.headroom_c                4.50 °C         system\n") != std::string::npos);
	CHECK(t.find("  psi.io_some_pct                   7.25 %          system\n") != std::string::npos);
	std::size_t metric_lines = 0;
	for (const auto &l : lines_of(t)) {
		INFO(l);
		CHECK(display_width(l) <= 80);
		if (l.rfind("  ", 0) == 0 && l.size() > 40 && l[2] != ' ' && l.find(':') > 30) {
			++metric_lines;
			CHECK(l[39] != ' '); // the number's last digit: column 39 on every line
			CHECK(l[40] == ' ');
		}
	}
	CHECK(metric_lines == 8);
	// The long note is on lines of its own, wrapped.
	CHECK(t.find("\n      (first seen 1.00 s into the run: over its last 2.00 s of the run so far,\n"
		     "       which is long)\n") != std::string::npos);
	CHECK(t.find("\033[") == std::string::npos); // no colour unless asked
}

TEST_CASE("a value that is an upper bound reads \"<\" in the table and compact line, flagged in json", "[render]")
{
	// All requests under 2 us (the lowest log2 slot): derive gives 2,
	// flagged; no output may show it as a measured 2.00.
	Interval iv;
	iv.realtime_ns = 1700000000500000000ull;
	iv.interval_s = 1;
	Metric queue{"io.queue_p99_us", "dev:loop0", 2, "us", "BPF block", "", Layer::Io};
	queue.upper_bound = true;
	Metric latency{"io.latency_p99_us", "dev:loop0", 48, "us", "BPF block", "", Layer::Io};
	Metric runq{"sched.runq_wait_p99_us", "system", 2, "us", "BPF sched", "", Layer::Sched};
	runq.upper_bound = true;
	iv.metrics = {latency, queue, runq};
	RenderOptions opt;
	std::string t = render_table(iv, opt);
	INFO(t);
	CHECK(t.find("  io.queue_p99_us                 < 2.00 µs         dev:loop0\n") != std::string::npos);
	CHECK(t.find("  io.latency_p99_us                 48.0 µs         dev:loop0\n") != std::string::npos);
	CHECK(t.find("  sched.runq_wait_p99_us          < 2.00 µs         system\n") != std::string::npos);
	std::string j = render_json(iv, opt);
	CHECK(j.find("{\"id\":\"io.queue_p99_us\",\"value\":2,\"unit\":\"us\",\"scope\":\"dev:loop0\","
		     "\"source\":\"BPF block\",\"upper_bound\":true}") != std::string::npos);
	std::size_t flags = 0;
	for (std::size_t at = j.find("upper_bound"); at != std::string::npos; at = j.find("upper_bound", at + 1))
		++flags;
	CHECK(flags == 2);
	auto line = lines_of(render_compact(iv, opt)).at(1);
	INFO(line);
	CHECK(line.find("  <2µs") != std::string::npos); // rq-p99: the bound, in 6 columns
	CHECK(line.find("48.0µs") != std::string::npos); // io-p99: the largest, an estimate
	// The largest of the devices' p99 is a bound when a bound is largest.
	Metric loop1 = latency, loop2 = latency;
	loop1.scope = "dev:loop1";
	loop1.value = 1.5;
	loop2.scope = "dev:loop2";
	loop2.value = 2;
	loop2.upper_bound = true;
	iv.metrics = {loop1, loop2, runq};
	line = lines_of(render_compact(iv, opt)).at(1);
	INFO(line);
	CHECK(line.find("  <2µs") != line.rfind("  <2µs")); // both columns
	iv.metrics[0].value = 2.5;
	line = lines_of(render_compact(iv, opt)).at(1);
	INFO(line);
	CHECK(line.find("2.50µs") != std::string::npos); // an estimate above the bound
}

TEST_CASE("table: unavailable metrics said once, grouped by reason, changes when they change", "[render]")
{
	RenderOptions opt;
	UnavailableSaid said;
	opt.said = &said;
	std::string first = render_table(host(), opt);
	INFO(first);
	CHECK(first.find("Unavailable\n"
			 "  9 core PMU metrics: no hardware PMU: running under a hypervisor\n"
			 "  vhost.queue_depth_p50: vhost_net is not loaded\n") != std::string::npos);
	// The same reasons next interval: nothing about them.
	std::string second = render_table(host(), opt);
	CHECK(second.find("Unavailable") == std::string::npos);
	CHECK(second.find("hypervisor") == std::string::npos);
	// One metric gets measured, another changes reason.
	Interval iv = host();
	iv.unavailable.erase(iv.unavailable.begin() + 9);
	iv.metrics.push_back({"vhost.queue_depth_p50", "system", 3, "descriptors", "BPF vhost", "", Layer::Vhost});
	iv.unavailable[0].reason = "hwsig.ko: configured without cycles";
	std::string third = render_table(iv, opt);
	INFO(third);
	CHECK(third.find("Unavailable now\n"
			 "  cpu.ipc: hwsig.ko: configured without cycles\n"
			 "  measured again: vhost.queue_depth_p50\n") != std::string::npos);
	CHECK(third.find("hypervisor") == std::string::npos);
	// A reason for this interval only is not announced as a change.
	iv.unavailable.push_back({"io.iops_read", "dev:*", UnavailableCode::incomplete, "no data in this interval"});
	CHECK(render_table(iv, opt).find("Unavailable") == std::string::npos);
	// The summary says everything again.
	opt.summary = true;
	std::string sum = render_table(iv, opt);
	CHECK(sum.find("  8 core PMU metrics: no hardware PMU: running under a hypervisor\n") != std::string::npos);
	CHECK(sum.find("  cpu.ipc: hwsig.ko: configured without cycles\n") != std::string::npos);
	// -v: every scope, every interval, as before.
	opt.summary = false;
	opt.verbose = true;
	std::string v = render_table(host(), opt);
	CHECK(v.find("  cpu.ipc                      system         no hardware PMU: running under a hypervisor\n") !=
	      std::string::npos);
}

TEST_CASE("table: values past a threshold marked, at most three verdict lines", "[render]")
{
	Interval iv = host();
	iv.metrics.push_back({"sched.steal_ratio", "system", 0.5, "ratio", "/proc/stat", "", Layer::Sched});
	iv.metrics.push_back({"psi.cpu_some_pct", "system", 60, "%", "/proc/pressure", "", Layer::Pressure});
	Verdicts v = judge(iv, Thresholds(), [](const std::string &) { return true; });
	REQUIRE(v.lines.size() == 3); // disk, CPU, thermal
	v.lines.push_back("made-up fourth line");
	RenderOptions opt;
	opt.verdicts = &v;
	std::string t = render_table(iv, opt);
	INFO(t);
	CHECK(t.find("! io.latency_p99_us                 12.0 ms         dev:nvme0n1\n") != std::string::npos);
	CHECK(t.find("! thermal.headroom_c                4.50 °C         system\n") != std::string::npos);
	CHECK(t.find("  io.pattern_entropy ") != std::string::npos); // evidence only: not marked
	CHECK(t.find("! disk nvme0n1 saturated: p99 latency 12.0 ms, random (entropy 0.910)\n") != std::string::npos);
	CHECK(t.find("! CPU saturated: steal 50.0 %, PSI cpu some 60.0 %\n") != std::string::npos);
	CHECK(t.find("! thermal saturated: headroom 4.50 °C\n") != std::string::npos);
	CHECK(t.find("made-up fourth line") == std::string::npos);
	CHECK(t.find("\033[") == std::string::npos);
	opt.color = true;
	std::string c = render_table(iv, opt);
	CHECK(c.find("\033[1;31m       12.0\033[0m") != std::string::npos);
}

TEST_CASE("json: a verdicts array when judged (an addition), nothing else changed", "[render]")
{
	Interval iv = host();
	RenderOptions opt;
	const std::string without = render_json(iv, opt);
	CHECK(without.find("verdicts") == std::string::npos);
	Verdicts v = judge(iv, Thresholds(), [](const std::string &) { return true; });
	opt.verdicts = &v;
	const std::string with = render_json(iv, opt);
	CHECK(with.substr(0, without.size() - 1) == without.substr(0, without.size() - 1));
	CHECK(with.find(",\"verdicts\":[{\"resource\":\"disk\",\"kind\":\"saturation\",\"metric\":\"io.latency_p99_us\","
			"\"scope\":\"dev:nvme0n1\",\"value\":12000,\"threshold\":10000,"
			"\"text\":\"disk nvme0n1 saturated: p99 latency 12.0 ms, random (entropy 0.910)\"},"
			"{\"resource\":\"thermal\",\"kind\":\"saturation\",\"metric\":\"thermal.headroom_c\","
			"\"scope\":\"system\",\"value\":4.5,\"threshold\":5,"
			"\"text\":\"thermal saturated: headroom 4.50 \u00b0C\"}]}") != std::string::npos);
	Verdicts none;
	opt.verdicts = &none;
	CHECK(render_json(iv, opt).find(",\"verdicts\":[]}") != std::string::npos);
}

TEST_CASE("compact: one line per interval, the header every 20, within 80 columns", "[render]")
{
	Interval iv = host();
	Verdicts v = judge(iv, Thresholds(), [](const std::string &) { return true; });
	RenderOptions opt;
	UnavailableSaid said;
	unsigned printed = 0;
	opt.said = &said;
	opt.compact_lines = &printed;
	opt.verdicts = &v;
	std::string all;
	for (int i = 0; i < 41; ++i)
		all += render_compact(iv, opt);
	INFO(all);
	auto lines = lines_of(all);
	std::size_t headers = 0, data = 0;
	for (const auto &l : lines) {
		INFO(l);
		CHECK(display_width(l) <= 80);
		if (l.rfind("time ", 0) == 0)
			++headers;
		else if (l.find("dev") == std::string::npos && l.find(':') == 2)
			++data;
	}
	CHECK(headers == 3); // before lines 1, 21 and 41
	CHECK(data == 41);
	CHECK(all.find("9 core PMU metrics") == all.rfind("9 core PMU metrics")); // once
	CHECK(lines[3] == "time     steal rq-p99 psi-c psi-m psi-i      dram    iops io-p99 headr verdict");
	// 45 us run-queue p99, 7.25 % PSI io, 3 GiB/s DRAM, no iops figure, 12 ms and 4.5 degC marked.
	// The verdict cell is cut at column 80.
	CHECK(lines[4].substr(8) == "     - 45.0µs     -     - 7.25% 3.00GiB/s       -!12.0ms!4.50C disk nvme");
}

TEST_CASE("compact: percentages in five columns at their boundaries", "[render]")
{
	auto psi_cell = [](double pct) {
		Interval iv;
		iv.realtime_ns = 1700000000500000000ull;
		iv.interval_s = 1;
		iv.metrics.push_back({"psi.cpu_some_pct", "system", pct, "%", "/proc/pressure", "", Layer::Pressure});
		RenderOptions opt;
		auto lines = lines_of(render_compact(iv, opt));
		REQUIRE(lines.size() == 2); // header, line
		return lines[1].substr(8 + 6 + 7 + 1, 5);
	};
	CHECK(psi_cell(0) == "   0%");
	CHECK(psi_cell(0.004) == "   0%");
	CHECK(psi_cell(0.94) == "0.94%");
	CHECK(psi_cell(9.994) == "9.99%");
	CHECK(psi_cell(9.996) == "10.0%");
	CHECK(psi_cell(99.94) == "99.9%");
	CHECK(psi_cell(99.96) == " 100%");
	CHECK(psi_cell(100) == " 100%");
}
