#include <catch2/catch.hpp>
#include <cmath>

#include "derive_check.h"
#include "hwsig/derive.h"
#include "hwsig/series.h"

using namespace hwsig;

static const Metric *find(const Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == scope)
			return &m;
	return nullptr;
}

static const UnavailableNote *find_unavailable(const Interval &iv, const std::string &id,
					       const std::string &scope)
{
	for (const auto &u : iv.unavailable)
		if (u.id == id && u.scope == scope)
			return &u;
	return nullptr;
}

static Snapshot at(double seconds)
{
	Snapshot s;
	s.mono_ns = static_cast<std::uint64_t>(seconds * 1e9);
	s.realtime_ns = 1700000000000000000ull + s.mono_ns;
	return s;
}

TEST_CASE("ratio of deltas per scope", "[derive]")
{
	Snapshot a = at(10), b = at(12);
	a.add_counter(series::kCpuStealTicks, "cpu:0", 100, "procfs");
	a.add_counter(series::kCpuTotalTicks, "cpu:0", 1000, "procfs");
	b.add_counter(series::kCpuStealTicks, "cpu:0", 130, "procfs");
	b.add_counter(series::kCpuTotalTicks, "cpu:0", 1200, "procfs");
	auto iv = checked_derive(a, b, {"sched.steal_ratio"});
	CHECK(iv.interval_s == Approx(2.0));
	const Metric *m = find(iv, "sched.steal_ratio", "cpu:0");
	REQUIRE(m);
	CHECK(m->value == Approx(30.0 / 200.0));
	CHECK(m->unit == "ratio");
	CHECK(m->source == "procfs");
	CHECK(m->layer == Layer::Sched);
}

TEST_CASE("ratio with summed denominator (NUMA remote)", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	a.add_counter(series::kNumaLocal, "node:1", 1000, "procfs");
	a.add_counter(series::kNumaOther, "node:1", 10, "procfs");
	b.add_counter(series::kNumaLocal, "node:1", 1300, "procfs");
	b.add_counter(series::kNumaOther, "node:1", 110, "procfs");
	auto iv = checked_derive(a, b, {});
	const Metric *m = find(iv, "mem.numa_remote_ratio", "node:1");
	REQUIRE(m);
	CHECK(m->value == Approx(100.0 / 400.0));
}

TEST_CASE("rates use the interval and the rule's scale", "[derive]")
{
	Snapshot a = at(5), b = at(5.5);
	a.add_counter(series::kImcCasReads, "socket:0", 1000, "kmod");
	b.add_counter(series::kImcCasReads, "socket:0", 2000, "kmod");
	auto iv = checked_derive(a, b, {});
	const Metric *m = find(iv, "mem.imc_read_bps", "socket:0");
	REQUIRE(m);
	CHECK(m->value == Approx(1000.0 * 64 / 0.5)); // CAS x 64 B, scaled once
}

TEST_CASE("multiplexed counters carry a note", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	a.add_counter(series::kPmuInstructions, "cpu:3", 0, "perf", 0.5);
	a.add_counter(series::kPmuCycles, "cpu:3", 0, "perf", 0.5);
	b.add_counter(series::kPmuInstructions, "cpu:3", 3000, "perf", 0.43);
	b.add_counter(series::kPmuCycles, "cpu:3", 2000, "perf", 1.0);
	auto iv = checked_derive(a, b, {});
	const Metric *m = find(iv, "cpu.ipc", "cpu:3");
	REQUIRE(m);
	CHECK(m->value == Approx(1.5));
	CHECK(m->note.find("43%") != std::string::npos);
}

TEST_CASE("zero denominators, resets and new scopes are not made-up numbers", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	a.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	a.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	b.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	b.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	a.add_counter(series::kCpuStealTicks, "cpu:1", 50, "procfs");
	a.add_counter(series::kCpuTotalTicks, "cpu:1", 500, "procfs");
	b.add_counter(series::kCpuStealTicks, "cpu:1", 10, "procfs"); // reset (CPU re-onlined)
	b.add_counter(series::kCpuTotalTicks, "cpu:1", 600, "procfs");
	b.add_counter(series::kCpuStealTicks, "cpu:2", 1, "procfs"); // appeared
	b.add_counter(series::kCpuTotalTicks, "cpu:2", 9, "procfs");
	auto iv = checked_derive(a, b, {"mem.thp_fallback_ratio", "sched.steal_ratio"});
	CHECK_FALSE(find(iv, "mem.thp_fallback_ratio", "system"));
	auto u = find_unavailable(iv, "mem.thp_fallback_ratio", "system");
	REQUIRE(u);
	CHECK(u->reason.find("no ") == 0);
	CHECK_FALSE(find(iv, "sched.steal_ratio", "cpu:1"));
	REQUIRE(find_unavailable(iv, "sched.steal_ratio", "cpu:1"));
	CHECK(find_unavailable(iv, "sched.steal_ratio", "cpu:1")->reason.find("backwards") != std::string::npos);
	CHECK_FALSE(find(iv, "sched.steal_ratio", "cpu:2"));
}

TEST_CASE("gauges, percentiles and entropy", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	b.add_gauge(series::kThermalHeadroom, "system", 21.5, "sysfs");
	Histogram h0, h1;
	h0.counts = {0, 0, 0, 0, 10};
	h1.counts = {0, 0, 0, 0, 110}; // 100 new values in [16,32)
	a.add_histogram(series::kRunqWaitUs, "system", h0, "bpf");
	b.add_histogram(series::kRunqWaitUs, "system", h1, "bpf");
	Histogram s0, s1;
	s0.counts = {0, 0, 0, 0};
	s1.counts = {25, 25, 25, 25};
	a.add_histogram(series::kIoSeekSlots, "dev:vda", s0, "bpf");
	b.add_histogram(series::kIoSeekSlots, "dev:vda", s1, "bpf");
	a.add_histogram(series::kIoLatencyUs, "dev:vdb", h0, "bpf");
	b.add_histogram(series::kIoLatencyUs, "dev:vdb", h0, "bpf"); // idle device
	auto iv = checked_derive(a, b, {});
	REQUIRE(find(iv, "thermal.headroom_c", "system"));
	CHECK(find(iv, "thermal.headroom_c", "system")->value == Approx(21.5));
	REQUIRE(find(iv, "sched.runq_wait_p50_us", "system"));
	CHECK(find(iv, "sched.runq_wait_p50_us", "system")->value == Approx(24.0));
	REQUIRE(find(iv, "io.pattern_entropy", "dev:vda"));
	// Four equally full slots, folded into 6 bins (seek_pattern_entropy).
	CHECK(find(iv, "io.pattern_entropy", "dev:vda")->value == Approx(2.0 / std::log2(6.0)));
	CHECK_FALSE(find(iv, "io.latency_p50_us", "dev:vdb"));
	REQUIRE(find_unavailable(iv, "io.latency_p50_us", "dev:vdb"));
}

TEST_CASE("every catalog id is either measured or unavailable with a reason", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	b.add_unavailable("cpu.ipc", "system", "no hardware PMU: running under a hypervisor");
	auto iv = checked_derive(a, b, {"cpu.ipc", "psi.cpu_some_pct"});
	for (const auto &def : catalog()) {
		bool seen = false;
		for (const auto &u : iv.unavailable)
			seen = seen || (u.id == def.id && !u.reason.empty());
		CHECK(seen);
	}
	CHECK(find_unavailable(iv, "cpu.ipc", "system")->reason == "no hardware PMU: running under a hypervisor");
	CHECK(find_unavailable(iv, "psi.cpu_some_pct", "system")->reason == "no data in this interval");
	CHECK(find_unavailable(iv, "io.iops_read", "system")->reason == "no source for it in this build");
}

TEST_CASE("output is in catalog order, then natural scope order", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	for (int cpu : {10, 2, 1}) {
		std::string scope = "cpu:" + std::to_string(cpu);
		a.add_counter(series::kCpuStealTicks, scope, 0, "procfs");
		a.add_counter(series::kCpuTotalTicks, scope, 0, "procfs");
		b.add_counter(series::kCpuStealTicks, scope, 1, "procfs");
		b.add_counter(series::kCpuTotalTicks, scope, 10, "procfs");
	}
	a.add_counter(series::kCpuStealTicks, "system", 0, "procfs");
	a.add_counter(series::kCpuTotalTicks, "system", 0, "procfs");
	b.add_counter(series::kCpuStealTicks, "system", 3, "procfs");
	b.add_counter(series::kCpuTotalTicks, "system", 30, "procfs");
	a.add_gauge(series::kPsiCpuSome, "system", 1, "procfs");
	b.add_gauge(series::kPsiCpuSome, "system", 1, "procfs");
	auto iv = checked_derive(a, b, {});
	REQUIRE(iv.metrics.size() == 5);
	CHECK(iv.metrics[0].scope == "system");
	CHECK(iv.metrics[1].scope == "cpu:1");
	CHECK(iv.metrics[2].scope == "cpu:2");
	CHECK(iv.metrics[3].scope == "cpu:10");
	CHECK(iv.metrics[4].id == "psi.cpu_some_pct");
}

TEST_CASE("a source's own reason beats derive's generic one", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	a.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	a.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	b.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	b.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	b.add_unavailable("mem.thp_fallback_ratio", "system", "THP disabled (transparent_hugepage/enabled = never)");
	auto iv = checked_derive(a, b, {"mem.thp_fallback_ratio"});
	int notes = 0;
	for (const auto &u : iv.unavailable)
		if (u.id == "mem.thp_fallback_ratio") {
			++notes;
			CHECK(u.reason == "THP disabled (transparent_hugepage/enabled = never)");
		}
	CHECK(notes == 1);
}

TEST_CASE("percentile rule: ranks on and beside slot boundaries, every layout", "[derive][exact]")
{
	// 100 new samples per scope (prev holds older ones: derive works on the
	// delta). Catalog: runq_wait p50/p99 and vhost depth p50/p99.
	Snapshot a = at(0), b = at(1);
	Histogram l0, l1;
	// Log2: 50 in [16,32), 49 in [64,128), 1 in [256,512). p50 = rank 50,
	// the top of [16,32): 32 (not 64); p99 = rank 99, the top of [64,128).
	l0.counts = {0, 0, 0, 0, 5, 0, 7, 0, 1};
	l1.counts = {0, 0, 0, 0, 55, 0, 56, 0, 2};
	a.add_histogram(series::kRunqWaitUs, "system", l0, "bpf");
	b.add_histogram(series::kRunqWaitUs, "system", l1, "bpf");
	// LinearLog2: 50 fives, 49 in [64,128), 1 in [128,256). p50 = rank 50:
	// the last 5; p99 = rank 99, j = 49 of slot 64: 64 + floor(48.5 * 64 / 49) = 127.
	auto depth = [](std::uint64_t fives, std::uint64_t mid, std::uint64_t high) {
		Histogram h;
		h.layout = Histogram::Layout::LinearLog2;
		h.counts.assign(74, 0);
		h.counts[5] = fives;
		h.counts[64] = mid;
		h.counts[65] = high;
		return h;
	};
	a.add_histogram(series::kVhostDepth, "vm:a", depth(1, 1, 1), "bpf");
	b.add_histogram(series::kVhostDepth, "vm:a", depth(51, 50, 2), "bpf");
	// Just below / above the p50 boundary: 51 fives (rank 50 inside them),
	// 49 fives (rank 50 is the first of slot 64, j=1: 64 + floor(0.5 * 64/51) = 64).
	b.add_histogram(series::kVhostDepth, "vm:b", depth(51, 48, 1), "bpf");
	a.add_histogram(series::kVhostDepth, "vm:b", depth(0, 0, 0), "bpf");
	b.add_histogram(series::kVhostDepth, "vm:c", depth(49, 51, 0), "bpf");
	a.add_histogram(series::kVhostDepth, "vm:c", depth(0, 0, 0), "bpf");
	// Linear through the io queue: 50 ones and 50 twos; p50 = rank 50 = 1,
	// p99 = 2.
	Histogram q0, q1;
	q0.layout = q1.layout = Histogram::Layout::Linear;
	q0.counts = {0, 0, 0};
	q1.counts = {0, 50, 50};
	a.add_histogram(series::kIoQueueUs, "dev:vda", q0, "bpf");
	b.add_histogram(series::kIoQueueUs, "dev:vda", q1, "bpf");
	auto iv = checked_derive(a, b, {});
	auto value = [&](const char *id, const char *scope) {
		const Metric *m = find(iv, id, scope);
		REQUIRE(m);
		return m->value;
	};
	CHECK(value("sched.runq_wait_p50_us", "system") == Approx(32.0).margin(1e-9));
	CHECK(value("sched.runq_wait_p99_us", "system") == Approx(128.0).margin(1e-9));
	CHECK(value("vhost.queue_depth_p50", "vm:a") == 5.0);
	CHECK(value("vhost.queue_depth_p99", "vm:a") == 127.0);
	CHECK(value("vhost.queue_depth_p50", "vm:b") == 5.0);
	CHECK(value("vhost.queue_depth_p50", "vm:c") == 64.0);
	CHECK(value("io.queue_p50_us", "dev:vda") == 1.0);
	CHECK(value("io.queue_p99_us", "dev:vda") == 2.0);
}

TEST_CASE("a value beats a source's note for the same id and scope", "[derive]")
{
	// THP was "never" when the source looked, but the counters moved in the
	// interval (the mode changed mid-way): the value stands, the note goes.
	Snapshot a = at(0), b = at(1);
	a.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	a.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	b.add_counter(series::kThpFaultAlloc, "system", 9, "procfs");
	b.add_counter(series::kThpFaultFallback, "system", 2, "procfs");
	b.add_unavailable("mem.thp_fallback_ratio", "system", "THP disabled (transparent_hugepage/enabled = never)");
	// A note for another scope of a measured id stays.
	a.add_counter(series::kCpuStealTicks, "cpu:0", 0, "procfs");
	a.add_counter(series::kCpuTotalTicks, "cpu:0", 0, "procfs");
	b.add_counter(series::kCpuStealTicks, "cpu:0", 1, "procfs");
	b.add_counter(series::kCpuTotalTicks, "cpu:0", 4, "procfs");
	b.add_unavailable("sched.steal_ratio", "cpu:1", "offline");
	auto iv = checked_derive(a, b, {"mem.thp_fallback_ratio", "sched.steal_ratio"});
	REQUIRE(find(iv, "mem.thp_fallback_ratio", "system"));
	CHECK(find(iv, "mem.thp_fallback_ratio", "system")->value == Approx(1.0 / 5.0));
	CHECK_FALSE(find_unavailable(iv, "mem.thp_fallback_ratio", "system"));
	CHECK(find(iv, "sched.steal_ratio", "cpu:0")->value == Approx(0.25));
	REQUIRE(find_unavailable(iv, "sched.steal_ratio", "cpu:1"));
	CHECK(interval_conflicts(iv).empty());
}

TEST_CASE("interval_conflicts names each contradiction", "[derive]")
{
	Interval iv;
	iv.metrics.push_back({"cpu.ipc", "cpu:0", 1.0, "ratio", "perf", "", Layer::Cpu});
	iv.metrics.push_back({"cpu.ipc", "cpu:1", 1.0, "ratio", "perf", "", Layer::Cpu});
	CHECK(interval_conflicts(iv).empty());
	iv.unavailable.push_back({"cpu.ipc", "cpu:2", "offline"});
	CHECK(interval_conflicts(iv).empty());
	iv.unavailable.push_back({"cpu.ipc", "cpu:1", "no PMU"});
	iv.metrics.push_back({"cpu.ipc", "cpu:0", 2.0, "ratio", "perf", "", Layer::Cpu});
	iv.unavailable.push_back({"cpu.ipc", "cpu:2", "again"});
	auto c = interval_conflicts(iv);
	REQUIRE(c.size() == 3);
	CHECK(c[0] == "cpu.ipc cpu:0: two values");
	CHECK(c[1] == "cpu.ipc cpu:2: unavailable twice");
	CHECK(c[2] == "cpu.ipc cpu:1: a value and unavailable");
}
