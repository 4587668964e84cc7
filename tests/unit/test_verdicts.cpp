// Verdict rules on synthetic intervals: each rule on both sides of its
// threshold, the words of a line, the ranking, the scope filter, and a
// quiet host judged quiet.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "hwsig/verdicts.h"

using namespace hwsig;

namespace {

struct Builder {
	Interval iv;
	Builder &add(const std::string &id, const std::string &scope, double v, const std::string &unit)
	{
		iv.metrics.push_back({id, scope, v, unit, "test", "", Layer::Cpu});
		return *this;
	}
};

bool all_scopes(const std::string &) { return true; }

Verdicts run(const Interval &iv, const Thresholds &t = Thresholds())
{
	return judge(iv, t, all_scopes);
}

// One metric at one value: the lines it gives.
std::vector<std::string> lines_for(const std::string &id, const std::string &scope, double v,
				   const std::string &unit, const Thresholds &t = Thresholds())
{
	Builder b;
	b.add(id, scope, v, unit);
	return run(b.iv, t).lines;
}

using Lines = std::vector<std::string>;

} // namespace

TEST_CASE("verdicts: CPU steal, run-queue p99, PSI cpu, each on both sides", "[verdicts]")
{
	CHECK(lines_for("sched.steal_ratio", "system", 0.10, "ratio").empty()); // at the threshold: not past it
	CHECK(lines_for("sched.steal_ratio", "system", 0.11, "ratio") == Lines{"CPU saturated: steal 11.0 %"});
	CHECK(lines_for("sched.runq_wait_p99_us", "system", 1500, "us").empty()); // no median: one slow wakeup
	{
		Builder q;
		q.add("sched.runq_wait_p99_us", "system", 1000, "us").add("sched.runq_wait_p50_us", "system", 500, "us");
		CHECK(run(q.iv).lines.empty()); // at the threshold
		Builder idle;
		idle.add("sched.runq_wait_p99_us", "system", 1500, "us").add("sched.runq_wait_p50_us", "system", 99, "us");
		CHECK(run(idle.iv).lines.empty()); // median under a tenth of the bar: an idle host's tail
		Builder busy;
		busy.add("sched.runq_wait_p99_us", "system", 1500, "us").add("sched.runq_wait_p50_us", "system", 100, "us");
		CHECK(run(busy.iv).lines == Lines{"CPU saturated: run-queue p99 1.50 ms"});
	}
	CHECK(lines_for("psi.cpu_some_pct", "system", 9.9, "%").empty());
	CHECK(lines_for("psi.cpu_some_pct", "system", 45, "%") == Lines{"CPU saturated: PSI cpu some 45.0 %"});

	Builder b;
	b.add("sched.steal_ratio", "system", 0.2, "ratio")
		.add("sched.runq_wait_p99_us", "system", 3000, "us")
		.add("sched.runq_wait_p50_us", "system", 400, "us");
	Verdicts v = run(b.iv);
	REQUIRE(v.lines == Lines{"CPU saturated: steal 20.0 %, run-queue p99 3.00 ms"});
	REQUIRE(v.findings.size() == 2);
	CHECK(v.findings[0].resource == "cpu");
	CHECK(v.findings[0].kind == "saturation");
	CHECK(v.findings[0].metric == "sched.steal_ratio");
	CHECK(v.findings[0].scope == "system");
	CHECK(v.findings[0].value == 0.2);
	CHECK(v.findings[0].threshold == Approx(0.1));
	CHECK(v.findings[1].threshold == 1000);
	CHECK(v.marked("sched.runq_wait_p99_us", "system"));
	CHECK_FALSE(v.marked("sched.runq_wait_p99_us", "vm:web01"));
}

TEST_CASE("verdicts: IPC below 1 with high LLC MPKI is memory-bound, either alone is not", "[verdicts]")
{
	auto bound = [](double ipc, double mpki) {
		Builder b;
		b.add("cpu.ipc", "system", ipc, "insn/cycle").add("cpu.llc_mpki", "system", mpki, "MPKI");
		return run(b.iv).lines;
	};
	CHECK(bound(0.8, 12) == Lines{"CPU memory-bound: IPC 0.800 insn/cycle, LLC misses 12.0 MPKI"});
	CHECK(bound(0.8, 9).empty());
	CHECK(bound(1.2, 12).empty());
	CHECK(bound(1.0, 12).empty());
	Builder b;
	b.add("cpu.ipc", "system", 0.5, "insn/cycle"); // no LLC figure: no verdict
	CHECK(run(b.iv).lines.empty());
}

TEST_CASE("verdicts: memory pressure, huge pages, THP fallback, NUMA", "[verdicts]")
{
	CHECK(lines_for("psi.memory_some_pct", "system", 10, "%").empty());
	CHECK(lines_for("psi.memory_some_pct", "system", 10.5, "%") == Lines{"memory saturated: PSI memory some 10.5 %"});
	CHECK(lines_for("psi.memory_full_pct", "system", 5, "%").empty());
	CHECK(lines_for("psi.memory_full_pct", "system", 6, "%") == Lines{"memory saturated: PSI memory full 6.00 %"});
	CHECK(lines_for("mem.hugepage_utilization", "hugepages:2048kB", 0.99, "ratio").empty());
	CHECK(lines_for("mem.hugepage_utilization", "hugepages:2048kB", 1.0, "ratio") ==
	      Lines{"huge pages 2048kB fully used: in use 100 %"});
	CHECK(lines_for("mem.thp_fallback_ratio", "system", 0.10, "ratio").empty());
	CHECK(lines_for("mem.thp_fallback_ratio", "system", 0.25, "ratio") == Lines{"memory errors: THP fallback 25.0 %"});
	CHECK(lines_for("mem.numa_remote_ratio", "node:1", 0.29, "ratio").empty());
	CHECK(lines_for("mem.numa_remote_ratio", "node:1", 0.5, "ratio") ==
	      Lines{"memory node 1 fully used: remote allocations 50.0 %"});
}

TEST_CASE("verdicts: DRAM bandwidth against the configured peak, off while the peak is unknown", "[verdicts]")
{
	const double gib = 1024.0 * 1024 * 1024;
	auto dram = [&](double read, double write, const Thresholds &t) {
		Builder b;
		b.add("mem.imc_read_bps", "system", read * gib, "B/s").add("mem.imc_write_bps", "system", write * gib, "B/s");
		return run(b.iv, t);
	};
	CHECK(dram(50, 40, Thresholds()).lines.empty()); // default peak 0: the rule is off
	Thresholds t = parse_thresholds("mem.dram_peak_gibps = 10", "t");
	CHECK(dram(4, 3.9, t).lines.empty()); // 7.9 GiB/s < 80% of 10
	Verdicts v = dram(5, 4, t);
	REQUIRE(v.lines == Lines{"memory fully used: DRAM read+write 9.00 GiB/s"});
	REQUIRE(v.findings.size() == 1);
	CHECK(v.findings[0].value == 9 * gib);
	CHECK(v.findings[0].threshold == Approx(8 * gib));
}

TEST_CASE("verdicts: a disk with high latency and queue time, random seeks as evidence", "[verdicts]")
{
	auto disk = [](double p99, double queue, double entropy) {
		Builder b;
		b.add("io.latency_p99_us", "dev:vda", p99, "us")
			.add("io.queue_p99_us", "dev:vda", queue, "us")
			.add("io.pattern_entropy", "dev:vda", entropy, "0..1");
		return run(b.iv).lines;
	};
	CHECK(disk(12000, 9000, 0.91) ==
	      Lines{"disk vda saturated: p99 latency 12.0 ms, queue time p99 9.00 ms, random (entropy 0.910)"});
	CHECK(disk(12000, 100, 0.1) == Lines{"disk vda saturated: p99 latency 12.0 ms"});
	CHECK(disk(900, 5001, 0.1) == Lines{"disk vda saturated: queue time p99 5.00 ms"});
	CHECK(disk(10000, 5000, 0.99).empty()); // both at their thresholds; entropy alone is no verdict
	CHECK(lines_for("psi.io_some_pct", "system", 35, "%") == Lines{"I/O saturated: PSI io some 35.0 %"});
	CHECK(lines_for("psi.io_some_pct", "system", 10, "%").empty());
}

TEST_CASE("verdicts: vhost depth and RX stalls, thermal headroom", "[verdicts]")
{
	CHECK(lines_for("vhost.queue_depth_p99", "vq:100:0:rx", 192, "descriptors").empty());
	CHECK(lines_for("vhost.queue_depth_p99", "vq:100:0:rx", 250, "descriptors") ==
	      Lines{"vhost queue 100:0:rx saturated: queue depth p99 250 desc"});
	CHECK(lines_for("vhost.ring_stalls_ps", "vm:web01", 0.5, "stalls/s").empty());
	CHECK(lines_for("vhost.ring_stalls_ps", "vm:web01", 2, "stalls/s") ==
	      Lines{"vm web01 vhost errors: RX ring stalls 2.00 stalls/s"});
	CHECK(lines_for("thermal.headroom_c", "system", 5, "degC").empty());
	CHECK(lines_for("thermal.headroom_c", "system", 4.9, "degC") == Lines{"thermal saturated: headroom 4.90 °C"});
	CHECK(lines_for("thermal.headroom_c", "zone:x86_pkg_temp", 1, "degC") ==
	      Lines{"thermal zone x86_pkg_temp saturated: headroom 1.00 °C"});
}

TEST_CASE("verdicts: thresholds from a file move the bar", "[verdicts]")
{
	Thresholds t = parse_thresholds("cpu.steal_pct = 30", "t");
	CHECK(lines_for("sched.steal_ratio", "system", 0.2, "ratio", t).empty());
	CHECK(lines_for("sched.steal_ratio", "system", 0.31, "ratio", t) == Lines{"CPU saturated: steal 31.0 %"});
}

TEST_CASE("verdicts: most severe first, only visible scopes judged", "[verdicts]")
{
	Builder b;
	b.add("sched.steal_ratio", "system", 0.11, "ratio")         // 1.1x
		.add("io.latency_p99_us", "dev:vda", 50000, "us")    // 5x
		.add("thermal.headroom_c", "system", 1, "degC")      // (5+1)/(1+1) = 3x
		.add("sched.runq_wait_p99_us", "vm:web01", 4000, "us") // 4x
		.add("sched.runq_wait_p50_us", "vm:web01", 800, "us");
	Verdicts v = run(b.iv);
	CHECK(v.lines == Lines{"disk vda saturated: p99 latency 50.0 ms", "vm web01 CPU saturated: run-queue p99 4.00 ms",
			       "thermal saturated: headroom 1.00 °C", "CPU saturated: steal 11.0 %"});
	// Findings follow their lines' order.
	REQUIRE(v.findings.size() == 4);
	CHECK(v.findings[0].metric == "io.latency_p99_us");
	CHECK(v.findings[3].metric == "sched.steal_ratio");
	Verdicts host = judge(b.iv, Thresholds(), [](const std::string &s) { return s == "system"; });
	CHECK(host.lines == Lines{"thermal saturated: headroom 1.00 °C", "CPU saturated: steal 11.0 %"});
}

TEST_CASE("verdicts: 20 quiet intervals give none", "[verdicts]")
{
	std::mt19937 rng(16);
	std::uniform_real_distribution<double> u(0, 1);
	for (int i = 0; i < 20; ++i) {
		Builder b;
		// An idle host: values a quiet machine shows, with jitter.
		b.add("cpu.ipc", "system", 1.2 + u(rng), "insn/cycle")
			.add("cpu.llc_mpki", "system", 2 + 5 * u(rng), "MPKI")
			.add("sched.steal_ratio", "system", 0.02 * u(rng), "ratio")
			.add("sched.runq_wait_p99_us", "system", 20 + 400 * u(rng), "us")
			.add("psi.cpu_some_pct", "system", 3 * u(rng), "%")
			.add("psi.memory_some_pct", "system", 0, "%")
			.add("psi.memory_full_pct", "system", 0, "%")
			.add("psi.io_some_pct", "system", 2 * u(rng), "%")
			.add("mem.hugepage_utilization", "hugepages:2048kB", 0.5 * u(rng), "ratio")
			.add("mem.thp_fallback_ratio", "system", 0.05 * u(rng), "ratio")
			.add("mem.numa_remote_ratio", "system", 0.1 * u(rng), "ratio")
			.add("io.latency_p99_us", "dev:vda", 100 + 2000 * u(rng), "us")
			.add("io.queue_p99_us", "dev:vda", 50 * u(rng), "us")
			.add("io.pattern_entropy", "dev:vda", u(rng), "0..1")
			.add("vhost.queue_depth_p99", "vq:1:0:rx", 10 * u(rng), "descriptors")
			.add("vhost.ring_stalls_ps", "vq:1:0:rx", 0, "stalls/s")
			.add("thermal.headroom_c", "system", 30 + 20 * u(rng), "degC");
		Verdicts v = run(b.iv);
		INFO("interval " << i);
		CHECK(v.lines.empty());
		CHECK(v.findings.empty());
	}
}
