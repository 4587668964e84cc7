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

// One rule per row: a metric from two snapshots of the series it reads,
// with its catalog unit and layer and the source that fed it.
TEST_CASE("ratio, summed-denominator ratio and rate rules over two snapshots", "[derive]")
{
	struct Counter {
		const char *series;
		double before, after;
	};
	struct Row {
		const char *id, *scope, *source;
		double from_s, to_s;
		std::vector<Counter> counters;
		double value;
		const char *unit;
		Layer layer;
	};
	const Row rows[] = {
		{"sched.steal_ratio", "cpu:0", "procfs", 10, 12,
		 {{series::kCpuStealTicks, 100, 130}, {series::kCpuTotalTicks, 1000, 1200}}, 30.0 / 200.0, "ratio",
		 Layer::Sched},
		// NUMA remote: other / (local + other).
		{"mem.numa_remote_ratio", "node:1", "procfs", 0, 1,
		 {{series::kNumaLocal, 1000, 1300}, {series::kNumaOther, 10, 110}}, 100.0 / 400.0, "ratio",
		 Layer::Memory},
		// The interval and the rule's scale: CAS x 64 B, scaled once.
		{"mem.imc_read_bps", "socket:0", "kmod", 5, 5.5, {{series::kImcCasReads, 1000, 2000}},
		 1000.0 * 64 / 0.5, "B/s", Layer::Memory},
	};
	for (const Row &row : rows) {
		INFO(row.id << " at " << row.scope);
		Snapshot a = at(row.from_s), b = at(row.to_s);
		for (const Counter &c : row.counters) {
			a.add_counter(c.series, row.scope, c.before, row.source);
			b.add_counter(c.series, row.scope, c.after, row.source);
		}
		auto iv = checked_derive(a, b, {row.id});
		CHECK(iv.interval_s == Approx(row.to_s - row.from_s));
		const Metric *m = find(iv, row.id, row.scope);
		REQUIRE(m);
		CHECK(m->value == Approx(row.value));
		CHECK(m->unit == row.unit);
		CHECK(m->source == row.source);
		CHECK(m->layer == row.layer);
	}
}

// A multiplexed counter's point: its per-interval-scaled total (value) and
// what it was estimated from.
static CounterPoint mux_point(double value, double raw, double enabled_s, double running_s, double uncounted_s = 0)
{
	return {value, {raw, enabled_s * 1e9, running_s * 1e9, uncounted_s * 1e9}};
}

TEST_CASE("multiplexed counters carry a note with the interval's running fraction", "[derive]")
{
	Snapshot a = at(10), b = at(11);
	// Lifetime: half counted. This interval: instructions 43%, cycles all.
	a.add_counter(series::kPmuInstructions, "cpu:3", mux_point(2000, 1000, 10, 5), "perf");
	a.add_counter(series::kPmuCycles, "cpu:3", mux_point(2000, 1000, 10, 5), "perf");
	b.add_counter(series::kPmuInstructions, "cpu:3", mux_point(5000, 2290, 11, 5.43), "perf");
	b.add_counter(series::kPmuCycles, "cpu:3", mux_point(4000, 3000, 11, 6), "perf");
	auto iv = checked_derive(a, b, {});
	const Metric *m = find(iv, "cpu.ipc", "cpu:3");
	REQUIRE(m);
	CHECK(m->value == Approx(1.5)); // the values' deltas: already scaled
	CHECK(m->note == "multiplexed: counted 43% of the time, scaled");
}

TEST_CASE("a multiplexed counter not counted for part of the interval is unavailable", "[derive]")
{
	Snapshot a = at(0), b = at(2);
	a.add_counter(series::kPmuInstructions, "system", mux_point(100, 100, 4, 4), "perf");
	a.add_counter(series::kPmuCycles, "system", mux_point(100, 100, 4, 4), "perf");
	b.add_counter(series::kPmuInstructions, "system", mux_point(300, 300, 8, 6, 1.5), "perf");
	b.add_counter(series::kPmuCycles, "system", mux_point(300, 300, 8, 8), "perf");
	auto iv = checked_derive(a, b, {"cpu.ipc"});
	CHECK_FALSE(find(iv, "cpu.ipc", "system"));
	const auto *u = find_unavailable(iv, "cpu.ipc", "system");
	REQUIRE(u);
	CHECK(u->reason == "pmu.instructions was not counted at all between two reads (1.50 s enabled, never "
			   "running: the PMU was busy with other events): unknown in this interval");
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
	// Four equally full slots of 100 requests: 25 continued a stream, 75
	// seeked, spread over three bins (seek_pattern_entropy): 3/4 of
	// (log2 3 + Miller-Madow 2 / (150 ln 2)) / log2 5.
	CHECK(find(iv, "io.pattern_entropy", "dev:vda")->value ==
	      Approx(0.75 * (std::log2(3.0) + 2 / (150 * std::log(2.0))) / std::log2(5.0)));
	CHECK_FALSE(find(iv, "io.latency_p50_us", "dev:vdb"));
	REQUIRE(find_unavailable(iv, "io.latency_p50_us", "dev:vdb"));
}

// Entropy of a handful of seeks says nothing: below kMinEntropyRequests the
// device's value is unavailable with the count; at it, a value.
TEST_CASE("pattern entropy: too few requests is unavailable, saying how many", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	Histogram none, few, enough;
	none.counts = {0, 0, 0, 0};
	few.counts = {5, 5, 5, 0};    // 15 requests
	enough.counts = {4, 4, 4, 4}; // 16
	a.add_histogram(series::kIoSeekSlots, "dev:vda", none, "bpf");
	b.add_histogram(series::kIoSeekSlots, "dev:vda", few, "bpf");
	a.add_histogram(series::kIoSeekSlots, "dev:vdb", none, "bpf");
	b.add_histogram(series::kIoSeekSlots, "dev:vdb", enough, "bpf");
	auto iv = checked_derive(a, b, {});
	CHECK_FALSE(find(iv, "io.pattern_entropy", "dev:vda"));
	REQUIRE(find_unavailable(iv, "io.pattern_entropy", "dev:vda"));
	CHECK(find_unavailable(iv, "io.pattern_entropy", "dev:vda")->reason ==
	      "too few requests (15 in the interval, 16 needed)");
	CHECK(find_unavailable(iv, "io.pattern_entropy", "dev:vda")->code == UnavailableCode::no_events);
	REQUIRE(find(iv, "io.pattern_entropy", "dev:vdb"));
}

TEST_CASE("every catalog id is either measured or unavailable with a reason", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	b.add_unavailable("cpu.ipc", "system", UnavailableCode::unsupported, "no hardware PMU: running under a hypervisor");
	auto iv = checked_derive(a, b, {"cpu.ipc", "psi.cpu_some_pct"});
	for (const auto &def : catalog()) {
		bool seen = false;
		for (const auto &u : iv.unavailable)
			seen = seen || (u.id == def.id && !u.reason.empty());
		CHECK(seen);
	}
	CHECK(find_unavailable(iv, "cpu.ipc", "system")->reason == "no hardware PMU: running under a hypervisor");
	CHECK(find_unavailable(iv, "psi.cpu_some_pct", "system")->reason == "no data in this interval");
	REQUIRE(find_unavailable(iv, "io.iops_read", "dev:*"));
	CHECK(find_unavailable(iv, "io.iops_read", "dev:*")->reason == "no source for it in this build");
	CHECK_FALSE(find_unavailable(iv, "io.iops_read", "system")); // per device only
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
	a.add_counter(series::kPsiCpuSomeUs, "system", 0, "procfs");
	b.add_counter(series::kPsiCpuSomeUs, "system", 1000, "procfs");
	auto iv = checked_derive(a, b, {});
	std::vector<std::pair<std::string, std::string>> order;
	for (const auto &m : iv.metrics)
		order.emplace_back(m.id, m.scope);
	CHECK(order == std::vector<std::pair<std::string, std::string>>{{"sched.steal_ratio", "system"},
									 {"sched.steal_ratio", "cpu:1"},
									 {"sched.steal_ratio", "cpu:2"},
									 {"sched.steal_ratio", "cpu:10"},
									 {"psi.cpu_some_pct", "system"}});
}

TEST_CASE("a source's own reason beats derive's generic one", "[derive]")
{
	Snapshot a = at(0), b = at(1);
	a.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	a.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	b.add_counter(series::kThpFaultAlloc, "system", 5, "procfs");
	b.add_counter(series::kThpFaultFallback, "system", 1, "procfs");
	b.add_unavailable("mem.thp_fallback_ratio", "system", UnavailableCode::disabled, "THP disabled (transparent_hugepage/enabled = never)");
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
	struct Expected {
		const char *id, *scope;
		double value;
	};
	for (const Expected &e : {Expected{"sched.runq_wait_p50_us", "system", 32.0},
				  Expected{"sched.runq_wait_p99_us", "system", 128.0},
				  Expected{"vhost.queue_depth_p50", "vm:a", 5.0},
				  Expected{"vhost.queue_depth_p99", "vm:a", 127.0},
				  Expected{"vhost.queue_depth_p50", "vm:b", 5.0},
				  Expected{"vhost.queue_depth_p50", "vm:c", 64.0},
				  Expected{"io.queue_p50_us", "dev:vda", 1.0}, Expected{"io.queue_p99_us", "dev:vda", 2.0}}) {
		INFO(e.id << " at " << e.scope);
		const Metric *m = find(iv, e.id, e.scope);
		REQUIRE(m);
		CHECK(m->value == Approx(e.value).epsilon(0).margin(1e-9));
	}
}

TEST_CASE("a percentile in the lowest log2 slot is an upper bound, not an interpolation", "[derive][exact]")
{
	// 4,002 requests all in [0, 2) us (issue 34, item 6): p50 and p99 are
	// "< 2", flagged; a p99 above the slot stays an estimate.
	Snapshot a = at(0), b = at(1);
	Histogram h0, h1;
	h0.counts = {2, 0, 0};
	h1.counts = {4004, 0, 0};
	a.add_histogram(series::kIoQueueUs, "dev:loop0", h0, "bpf");
	b.add_histogram(series::kIoQueueUs, "dev:loop0", h1, "bpf");
	Histogram w0, w1;
	w0.counts = {0, 0, 0, 0};
	w1.counts = {90, 0, 0, 10}; // p50 in [0, 2), p99 in [8, 16)
	a.add_histogram(series::kRunqWaitUs, "system", w0, "bpf");
	b.add_histogram(series::kRunqWaitUs, "system", w1, "bpf");
	auto iv = checked_derive(a, b, {});
	for (const char *id : {"io.queue_p50_us", "io.queue_p99_us"}) {
		INFO(id);
		const Metric *m = find(iv, id, "dev:loop0");
		REQUIRE(m);
		CHECK(m->value == 2.0);
		CHECK(m->upper_bound);
	}
	const Metric *p50 = find(iv, "sched.runq_wait_p50_us", "system");
	const Metric *p99 = find(iv, "sched.runq_wait_p99_us", "system");
	REQUIRE(p50);
	REQUIRE(p99);
	CHECK(p50->upper_bound);
	CHECK(p50->value == 2.0);
	CHECK_FALSE(p99->upper_bound);
	CHECK(p99->value == Approx(8.0 + 8.0 * 9.0 / 10.0));
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
	b.add_unavailable("mem.thp_fallback_ratio", "system", UnavailableCode::disabled, "THP disabled (transparent_hugepage/enabled = never)");
	// A note for another scope of a measured id stays.
	a.add_counter(series::kCpuStealTicks, "cpu:0", 0, "procfs");
	a.add_counter(series::kCpuTotalTicks, "cpu:0", 0, "procfs");
	b.add_counter(series::kCpuStealTicks, "cpu:0", 1, "procfs");
	b.add_counter(series::kCpuTotalTicks, "cpu:0", 4, "procfs");
	b.add_unavailable("sched.steal_ratio", "cpu:1", UnavailableCode::unsupported, "offline");
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
	iv.unavailable.push_back({"cpu.ipc", "cpu:2", UnavailableCode::unsupported, "offline"});
	CHECK(interval_conflicts(iv).empty());
	iv.unavailable.push_back({"cpu.ipc", "cpu:1", UnavailableCode::unsupported, "no PMU"});
	iv.metrics.push_back({"cpu.ipc", "cpu:0", 2.0, "ratio", "perf", "", Layer::Cpu});
	iv.unavailable.push_back({"cpu.ipc", "cpu:2", UnavailableCode::unsupported, "again"});
	auto c = interval_conflicts(iv);
	REQUIRE(c.size() == 3);
	CHECK(c[0] == "cpu.ipc cpu:0: two values");
	CHECK(c[1] == "cpu.ipc cpu:2: unavailable twice");
	CHECK(c[2] == "cpu.ipc cpu:1: a value and unavailable");
}

// Issue 17: I/O disappeared from interval 1 and from every summary when the
// disk was not yet in the first snapshot.
static Histogram lat(std::uint64_t n_at_64us)
{
	Histogram h;
	h.layout = Histogram::Layout::Log2;
	h.counts.assign(12, 0);
	h.counts[6] = n_at_64us; // [64, 128) us
	return h;
}

static void disk(Snapshot &s, const std::string &dev, double reads, double read_bytes, std::uint64_t events)
{
	s.add_counter(series::kIoReads, dev, reads, "bpf");
	s.add_counter(series::kIoWrites, dev, 0, "bpf");
	s.add_counter(series::kIoReadBytes, dev, read_bytes, "bpf");
	s.add_counter(series::kIoWriteBytes, dev, 0, "bpf");
	s.add_histogram(series::kIoLatencyUs, dev, lat(events), "bpf");
}

static const std::vector<std::string> kIoIds = {"io.iops_read", "io.iops_write", "io.read_bps",
						"io.write_bps", "io.latency_p50_us", "io.latency_p99_us"};

static void no_system_scope_and_wording(const Interval &iv, const char *wrong_span)
{
	for (const auto &u : iv.unavailable) {
		if (u.id.rfind("io.", 0) == 0)
			CHECK_FALSE(u.scope == "system");
		CHECK(u.reason.find(wrong_span) == std::string::npos);
	}
}

TEST_CASE("a disk absent from the first snapshot is in the summary over its own time", "[derive][summary]")
{
	// No counts_from_zero: the scope starts where it first appears.
	Snapshot s1 = at(100), s2 = at(101), s3 = at(103);
	disk(s2, "dev:vdb", 1000, 4096000, 1000);
	disk(s3, "dev:vdb", 1800, 7372800, 1800);
	RunStart run;
	run.observe(s1);
	run.observe(s2);
	run.observe(s3);
	auto iv = checked_summary(run, s3, kIoIds);
	CHECK(iv.interval_s == Approx(3.0));
	const Metric *r = find(iv, "io.iops_read", "dev:vdb");
	REQUIRE(r);
	CHECK(r->value == Approx(800.0 / 2.0)); // 800 reads over its 2 s, not 3 s
	CHECK(r->note.find("first seen 1.00 s into the run: over its last 2.00 s") != std::string::npos);
	const Metric *b = find(iv, "io.read_bps", "dev:vdb");
	REQUIRE(b);
	CHECK(b->value == Approx(3276800.0 / 2.0));
	const Metric *w = find(iv, "io.iops_write", "dev:vdb");
	REQUIRE(w);
	CHECK(w->value == 0);
	const Metric *p = find(iv, "io.latency_p50_us", "dev:vdb");
	REQUIRE(p);
	CHECK(p->value >= 64);
	CHECK(p->value < 128);
	CHECK_FALSE(find_unavailable(iv, "io.iops_read", "system"));
	CHECK_FALSE(find_unavailable(iv, "io.iops_read", "dev:*"));
	no_system_scope_and_wording(iv, "in this interval");

	// A scope present from the start covers the whole run, without a note.
	RunStart whole;
	disk(s1, "dev:vdb", 200, 819200, 200);
	whole.observe(s1);
	whole.observe(s2);
	whole.observe(s3);
	auto all = checked_summary(whole, s3, kIoIds);
	const Metric *a = find(all, "io.iops_read", "dev:vdb");
	REQUIRE(a);
	CHECK(a->value == Approx(1600.0 / 3.0));
	CHECK(a->note.empty());
}

TEST_CASE("a source counting from zero: a new scope's first interval is from zero", "[derive][summary]")
{
	Snapshot warm = at(9), s1 = at(10), s2 = at(11), s3 = at(12);
	for (Snapshot *s : {&warm, &s1, &s2, &s3})
		for (const char *name : {series::kIoReads, series::kIoWrites, series::kIoReadBytes,
					 series::kIoWriteBytes, series::kIoLatencyUs})
			s->set_counts_from_zero(name);
	// The BPF map has no entry for the disk in s1 (no request yet).
	disk(s2, "dev:loop0", 500, 2048000, 500);
	disk(s3, "dev:loop0", 500, 2048000, 500); // no I/O in interval 2

	auto iv1 = checked_derive(s1, s2, kIoIds);
	const Metric *r1 = find(iv1, "io.iops_read", "dev:loop0");
	REQUIRE(r1);
	CHECK(r1->value == Approx(500.0));
	const Metric *p1 = find(iv1, "io.latency_p99_us", "dev:loop0");
	REQUIRE(p1);

	// A known device without I/O: 0 requests/s and 0 B/s, latency unavailable.
	auto iv2 = checked_derive(s2, s3, kIoIds);
	const Metric *r2 = find(iv2, "io.iops_read", "dev:loop0");
	REQUIRE(r2);
	CHECK(r2->value == 0);
	const Metric *b2 = find(iv2, "io.read_bps", "dev:loop0");
	REQUIRE(b2);
	CHECK(b2->value == 0);
	const UnavailableNote *u2 = find_unavailable(iv2, "io.latency_p50_us", "dev:loop0");
	REQUIRE(u2);
	CHECK(u2->reason == "no I/O in this interval");
	// Queue time: only requests inserted into the scheduler's queue have one.
	Snapshot q1 = at(0), q2 = at(1);
	q1.set_counts_from_zero(series::kIoQueueUs);
	q2.set_counts_from_zero(series::kIoQueueUs);
	q2.add_histogram(series::kIoQueueUs, "dev:loop0", Histogram{Histogram::Layout::Log2, {0, 0}}, "bpf");
	auto qiv = checked_derive(q1, q2, {"io.queue_p50_us"});
	const UnavailableNote *qn = find_unavailable(qiv, "io.queue_p50_us", "dev:loop0");
	REQUIRE(qn);
	CHECK(qn->reason == "no request went through the I/O scheduler queue in this interval");

	// The summary from s1 covers the whole run (the disk counted from 0).
	RunStart run;
	run.observe(s1);
	run.observe(s2);
	run.observe(s3);
	auto sum = checked_summary(run, s3, kIoIds);
	const Metric *rs = find(sum, "io.iops_read", "dev:loop0");
	REQUIRE(rs);
	CHECK(rs->value == Approx(500.0 / 2.0));
	CHECK(rs->note.empty());
	no_system_scope_and_wording(sum, "in this interval");

	// A disk whose first request comes after the second snapshot: it
	// was there, idle (its counts were 0, not unknown): covered over the
	// whole run, nothing lost, no note (issue 34).
	Snapshot s4 = at(14);
	for (const char *name : {series::kIoReads, series::kIoWrites, series::kIoReadBytes,
				 series::kIoWriteBytes, series::kIoLatencyUs})
		s4.set_counts_from_zero(name);
	disk(s4, "dev:loop0", 500, 2048000, 500);
	disk(s4, "dev:loop1", 300, 1228800, 300);
	RunStart late;
	late.observe(s1);
	late.observe(s2);
	late.observe(s3);
	late.observe(s4);
	auto late_sum = checked_summary(late, s4, kIoIds);
	const Metric *l1 = find(late_sum, "io.iops_read", "dev:loop1");
	REQUIRE(l1);
	CHECK(l1->value == Approx(300.0 / 4.0)); // 300 reads between s3 (12 s) and s4 (14 s), 0 before
	CHECK(l1->note.empty());
	const Metric *l0 = find(late_sum, "io.iops_read", "dev:loop0");
	REQUIRE(l0);
	CHECK(l0->value == Approx(500.0 / 4.0)); // seen since s2: counted from s1, the run's start
	CHECK(l0->note.empty());

	// No device at all: the reason is at dev:*, per run in a summary.
	Snapshot e1 = at(0), e2 = at(1);
	e1.set_counts_from_zero(series::kIoReads);
	e2.set_counts_from_zero(series::kIoReads);
	auto none = checked_derive(e1, e2, kIoIds);
	const UnavailableNote *n = find_unavailable(none, "io.iops_read", "dev:*");
	REQUIRE(n);
	CHECK(n->reason == "no block device with I/O in this interval");
	no_system_scope_and_wording(none, "in this run");
	RunStart empty_run;
	empty_run.observe(e1);
	empty_run.observe(e2);
	auto none_sum = checked_summary(empty_run, e2, kIoIds);
	const UnavailableNote *ns = find_unavailable(none_sum, "io.iops_read", "dev:*");
	REQUIRE(ns);
	CHECK(ns->reason == "no block device with I/O in this run");
	no_system_scope_and_wording(none_sum, "in this interval");
}

TEST_CASE("without counts_from_zero a new scope still waits for its second sighting", "[derive][summary]")
{
	Snapshot s1 = at(0), s2 = at(1);
	disk(s2, "dev:vdb", 10, 40960, 10);
	auto iv = checked_derive(s1, s2, kIoIds);
	CHECK_FALSE(find(iv, "io.iops_read", "dev:vdb"));
}

TEST_CASE("a VM started mid-run: the summary covers it from its first sighting", "[derive][summary]")
{
	Snapshot s1 = at(0), s2 = at(2), s3 = at(4);
	s1.add_counter(series::kCpuStealTicks, "cpu:0", 0, "procfs");
	s1.add_counter(series::kCpuTotalTicks, "cpu:0", 0, "procfs");
	s2.add_counter(series::kCpuStealTicks, "cpu:0", 10, "procfs");
	s2.add_counter(series::kCpuTotalTicks, "cpu:0", 200, "procfs");
	s3.add_counter(series::kCpuStealTicks, "cpu:0", 20, "procfs");
	s3.add_counter(series::kCpuTotalTicks, "cpu:0", 400, "procfs");
	// vm:web01 appears in s2, with a steal share of 50/100 after it.
	s2.add_counter(series::kCpuStealTicks, "vm:web01", 1000, "procfs");
	s2.add_counter(series::kCpuTotalTicks, "vm:web01", 5000, "procfs");
	s3.add_counter(series::kCpuStealTicks, "vm:web01", 1050, "procfs");
	s3.add_counter(series::kCpuTotalTicks, "vm:web01", 5100, "procfs");
	RunStart run;
	run.observe(s1);
	run.observe(s2);
	run.observe(s3);
	auto iv = checked_summary(run, s3, {"sched.steal_ratio"});
	const Metric *host = find(iv, "sched.steal_ratio", "cpu:0");
	REQUIRE(host);
	CHECK(host->value == Approx(20.0 / 400.0));
	const Metric *vm = find(iv, "sched.steal_ratio", "vm:web01");
	REQUIRE(vm);
	CHECK(vm->value == Approx(0.5));
	CHECK(vm->note.find("first seen 2.00 s into the run: over its last 2.00 s") != std::string::npos);
}
