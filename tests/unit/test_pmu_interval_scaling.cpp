// Multiplexed PMU counters are scaled per interval and per CPU, then summed
// (issue 13, item 1), through both core backends' own code: hwsig.ko ring
// records (add_ring_counters over a RingWriter) and perf_event_open group
// reads (group_readings + add_perf_group, what PerfBackend::collect runs on
// every group it reads), then derive(). Synthetic counter sequences whose
// true counts are known: each interval is 1 s, each counter enabled all of
// it and running the stated fraction of it.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include <linux/hwsig.h>

#include "derive_check.h"
#include "hwsig/derive.h"
#include "hwsig/kmod.h"
#include "hwsig/perf_open.h"
#include "hwsig/series.h"
#include "hwsig/source_pmu.h"
#include "ring_writer.h"

using namespace hwsig;

namespace {

constexpr std::uint64_t kSecond = 1000000000;

// What one counter did in one 1 s interval.
struct Delta {
	std::uint64_t count, enabled_ns, running_ns;
};

// A counter running `fraction` of the interval at `true_per_s` events a
// second counts fraction x true_per_s of them.
Delta ran(double fraction, double true_per_s)
{
	return {static_cast<std::uint64_t>(fraction * true_per_s), kSecond,
		static_cast<std::uint64_t>(fraction * kSecond)};
}

// One CPU's interval: its cycles and instructions counters.
struct CpuInterval {
	unsigned cpu;
	Delta cycles, instructions;
};

// Cumulative readings per CPU, as the kernel reports them.
struct Readings {
	CounterReading cycles, instructions;
};

void accumulate(CounterReading &r, const Delta &d)
{
	r.count += d.count;
	r.enabled_ns += d.enabled_ns;
	r.running_ns += d.running_ns;
}

// hwsig.ko: each event is its own perf event with its own times, read by
// the CPU's hrtimer into a ring record.
class KmodFeed {
public:
	explicit KmodFeed(unsigned cpus) : ring_(cpus, 64), reader_(ring_.base(), ring_.length()) {}

	Snapshot next(const std::vector<CpuInterval> &interval)
	{
		for (const auto &i : interval) {
			Readings &r = readings_[i.cpu];
			accumulate(r.cycles, i.cycles);
			accumulate(r.instructions, i.instructions);
			hwsig_record rec{};
			rec.time_ns = (n_ + 1) * kSecond;
			rec.valid_mask = 0x3;
			rec.config_generation = 1;
			rec.values[0] = r.cycles.count;
			rec.time_enabled[0] = r.cycles.enabled_ns;
			rec.time_running[0] = r.cycles.running_ns;
			rec.values[1] = r.instructions.count;
			rec.time_enabled[1] = r.instructions.enabled_ns;
			rec.time_running[1] = r.instructions.running_ns;
			ring_.write(i.cpu, rec);
		}
		Snapshot s;
		s.mono_ns = ++n_ * kSecond;
		add_ring_counters(reader_, {series::kPmuCycles, series::kPmuInstructions}, counters_, s);
		return s;
	}

private:
	testing::RingWriter ring_;
	RingReader reader_;
	ScaledCounters counters_;
	std::map<unsigned, Readings> readings_;
	std::uint64_t n_ = 0;
};

// perf_event_open: one group {cycles, instructions} per CPU, read with
// PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING: one pair of
// times for the group.
class PerfFeed {
public:
	explicit PerfFeed(unsigned) {}

	Snapshot next(const std::vector<CpuInterval> &interval)
	{
		for (const auto &i : interval) {
			REQUIRE(i.cycles.enabled_ns == i.instructions.enabled_ns);
			REQUIRE(i.cycles.running_ns == i.instructions.running_ns);
			Readings &r = readings_[i.cpu];
			accumulate(r.cycles, i.cycles);
			accumulate(r.instructions, i.instructions);
			const std::vector<std::uint64_t> words = {2, r.cycles.enabled_ns, r.cycles.running_ns,
								  r.cycles.count, r.instructions.count};
			add_perf_group(counters_, i.cpu, i.cpu, {series::kPmuCycles, series::kPmuInstructions},
				       group_readings(words, 2));
		}
		Snapshot s;
		s.mono_ns = ++n_ * kSecond;
		counters_.add_to(s, "perf");
		return s;
	}

private:
	ScaledCounters counters_;
	std::map<unsigned, Readings> readings_;
	std::uint64_t n_ = 0;
};

// snaps[0] is taken before the first interval; snaps[k] after the k-th.
template <typename Feed>
std::vector<Snapshot> run(unsigned cpus, const std::vector<std::vector<CpuInterval>> &intervals)
{
	Feed feed(cpus);
	std::vector<CpuInterval> zero;
	for (unsigned c = 0; c < cpus; c++)
		zero.push_back({c, {0, 0, 0}, {0, 0, 0}});
	std::vector<Snapshot> snaps{feed.next(zero)};
	for (const auto &i : intervals)
		snaps.push_back(feed.next(i));
	return snaps;
}

double delta(const std::vector<Snapshot> &snaps, std::size_t k, const char *series, const char *scope)
{
	const CounterPoint *before = snaps[k - 1].counter(series, scope);
	const CounterPoint *after = snaps[k].counter(series, scope);
	REQUIRE(before);
	REQUIRE(after);
	return after->value - before->value;
}

const Metric *metric(const Interval &iv, const char *id, const char *scope)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == scope)
			return &m;
	return nullptr;
}

const UnavailableNote *unavailable(const Interval &iv, const char *id, const char *scope)
{
	for (const auto &u : iv.unavailable)
		if (u.id == id && u.scope == scope)
			return &u;
	return nullptr;
}

// The k-th interval, derived.
Interval interval(const std::vector<Snapshot> &snaps, std::size_t k)
{
	return checked_derive(snaps[k - 1], snaps[k], {"cpu.ipc"});
}

std::vector<std::vector<CpuInterval>> repeat(std::size_t n, const std::vector<CpuInterval> &one)
{
	return std::vector<std::vector<CpuInterval>>(n, one);
}

} // namespace

TEMPLATE_TEST_CASE("PMU: after 10 intervals at 100%, an interval at 10% is its raw delta / 0.1", "[pmu][multiplex]",
		   KmodFeed, PerfFeed)
{
	auto intervals = repeat(10, {{0, ran(1.0, 2e9), ran(1.0, 2e9)}});
	// Then a faster interval, of which the counters saw a tenth.
	intervals.push_back({{0, ran(0.1, 3e9), ran(0.1, 9e9)}});
	const auto snaps = run<TestType>(1, intervals);

	for (const char *scope : {"cpu:0", "system"}) {
		INFO(scope);
		CHECK(delta(snaps, 11, series::kPmuCycles, scope) == Approx(3e8 / 0.1));
		CHECK(delta(snaps, 11, series::kPmuInstructions, scope) == Approx(9e8 / 0.1));
		const auto iv = interval(snaps, 11);
		const Metric *ipc = metric(iv, "cpu.ipc", scope);
		REQUIRE(ipc);
		// Both counted over the same running time: the ratio of raw deltas.
		CHECK(ipc->value == Approx(9e8 / 3e8));
		CHECK(ipc->note == "multiplexed: counted 10% of the time, scaled");
	}
	// The intervals before were not multiplexed: no note.
	const Interval previous = interval(snaps, 10);
	const Metric *before = metric(previous, "cpu.ipc", "cpu:0");
	REQUIRE(before);
	CHECK(before->value == Approx(1.0));
	CHECK(before->note.empty());
}

TEMPLATE_TEST_CASE("PMU: a counter that never ran in an interval is unknown there, not a rate", "[pmu][multiplex]",
		   KmodFeed, PerfFeed)
{
	auto intervals = repeat(10, {{0, ran(1.0, 1e9), ran(1.0, 2e9)}, {1, ran(1.0, 1e9), ran(1.0, 2e9)}});
	// cpu 1: enabled all along, never scheduled (a guest's vPMU held the
	// counters): nothing counted.
	intervals.push_back({{0, ran(1.0, 1e9), ran(1.0, 2e9)}, {1, ran(0.0, 1e9), ran(0.0, 2e9)}});
	// and counting again after.
	intervals.push_back({{0, ran(1.0, 1e9), ran(1.0, 2e9)}, {1, ran(0.5, 1e9), ran(0.5, 3e9)}});
	const auto snaps = run<TestType>(2, intervals);

	const auto iv = interval(snaps, 11);
	const Metric *cpu0 = metric(iv, "cpu.ipc", "cpu:0");
	REQUIRE(cpu0);
	CHECK(cpu0->value == Approx(2.0));
	CHECK_FALSE(metric(iv, "cpu.ipc", "cpu:1"));
	const UnavailableNote *cpu1 = unavailable(iv, "cpu.ipc", "cpu:1");
	REQUIRE(cpu1);
	CHECK_THAT(cpu1->reason, Catch::Contains("was not counted at all between two reads (1.00 s enabled"));
	// The host's sum lacks cpu 1's count: unknown too, never a guess.
	CHECK_FALSE(metric(iv, "cpu.ipc", "system"));
	REQUIRE(unavailable(iv, "cpu.ipc", "system"));
	CHECK_THAT(unavailable(iv, "cpu.ipc", "system")->reason, Catch::Contains("not counted at all"));
	// Nothing was added for the interval it did not count.
	CHECK(delta(snaps, 11, series::kPmuCycles, "cpu:1") == 0);

	// The next interval is its own: half counted, scaled by 2.
	const auto next = interval(snaps, 12);
	REQUIRE(metric(next, "cpu.ipc", "cpu:1"));
	CHECK(metric(next, "cpu.ipc", "cpu:1")->value == Approx(3.0));
	CHECK(delta(snaps, 12, series::kPmuCycles, "cpu:1") == Approx(1e9));
	REQUIRE(metric(next, "cpu.ipc", "system"));
	CHECK(metric(next, "cpu.ipc", "system")->value == Approx((2e9 + 3e9) / (1e9 + 1e9)));
}

TEMPLATE_TEST_CASE("PMU: when contention ends the counts do not go backwards", "[pmu][multiplex]", KmodFeed,
		   PerfFeed)
{
	// Ten intervals counted a tenth of the time, then all of it, at half
	// the instruction rate: the lifetime-scaled count would fall below
	// its previous value.
	auto intervals = repeat(10, {{0, ran(0.1, 1e9), ran(0.1, 1e9)}});
	intervals.push_back({{0, ran(1.0, 1e9), ran(1.0, 0.5e9)}});
	const auto snaps = run<TestType>(1, intervals);

	CHECK(delta(snaps, 11, series::kPmuInstructions, "cpu:0") == Approx(0.5e9));
	CHECK(delta(snaps, 11, series::kPmuCycles, "cpu:0") == Approx(1e9));
	const auto iv = interval(snaps, 11);
	for (const char *scope : {"cpu:0", "system"}) {
		INFO(scope);
		const Metric *ipc = metric(iv, "cpu.ipc", scope);
		REQUIRE(ipc);
		CHECK(ipc->value == Approx(0.5));
		CHECK(ipc->note.empty());
	}
	for (std::size_t k = 2; k < snaps.size(); k++)
		CHECK(delta(snaps, k, series::kPmuInstructions, "system") >= 0);
}

TEMPLATE_TEST_CASE("PMU: each CPU is scaled by its own fraction, then the CPUs are summed", "[pmu][multiplex]",
		   KmodFeed, PerfFeed)
{
	auto intervals = repeat(10, {{0, ran(1.0, 1e9), ran(1.0, 1e9)}, {1, ran(1.0, 1e9), ran(1.0, 1e9)}});
	// cpu 0 counts all of the interval, cpu 1 a fifth of it (at three
	// instructions a cycle).
	intervals.push_back({{0, ran(1.0, 1e9), ran(1.0, 1e9)}, {1, ran(0.2, 1e9), ran(0.2, 3e9)}});
	const auto snaps = run<TestType>(2, intervals);

	CHECK(delta(snaps, 11, series::kPmuInstructions, "cpu:1") == Approx(3e9));
	// 1e9 + 3e9: scaling the sum by the summed times would give 2.67e9.
	CHECK(delta(snaps, 11, series::kPmuInstructions, "system") == Approx(4e9));
	CHECK(delta(snaps, 11, series::kPmuCycles, "system") == Approx(2e9));
	const auto iv = interval(snaps, 11);
	REQUIRE(metric(iv, "cpu.ipc", "cpu:1"));
	CHECK(metric(iv, "cpu.ipc", "cpu:1")->value == Approx(3.0));
	CHECK(metric(iv, "cpu.ipc", "cpu:1")->note == "multiplexed: counted 20% of the time, scaled");
	REQUIRE(metric(iv, "cpu.ipc", "cpu:0"));
	CHECK(metric(iv, "cpu.ipc", "cpu:0")->note.empty());
	const Metric *system = metric(iv, "cpu.ipc", "system");
	REQUIRE(system);
	CHECK(system->value == Approx(2.0));
	// Of the two CPUs' 2 s of enabled counter time, 1.2 s counted.
	CHECK(system->note == "multiplexed: counted 60% of the time, scaled");
}

TEMPLATE_TEST_CASE("PMU: the multiplexing note is this interval's running fraction", "[pmu][multiplex]", KmodFeed,
		   PerfFeed)
{
	auto intervals = repeat(10, {{0, ran(0.5, 1e9), ran(0.5, 1e9)}});
	intervals.push_back({{0, ran(1.0, 1e9), ran(1.0, 1e9)}});
	intervals.push_back({{0, ran(0.4, 1e9), ran(0.4, 1e9)}});
	const auto snaps = run<TestType>(1, intervals);

	const Interval all_counted = interval(snaps, 11), part_counted = interval(snaps, 12);
	const Metric *full = metric(all_counted, "cpu.ipc", "cpu:0");
	REQUIRE(full);
	CHECK(full->note.empty()); // counted all of it, whatever came before
	const Metric *part = metric(part_counted, "cpu.ipc", "cpu:0");
	REQUIRE(part);
	CHECK(part->note == "multiplexed: counted 40% of the time, scaled");
}

TEMPLATE_TEST_CASE("PMU: a span of several reads is the sum of their per-interval estimates", "[pmu][multiplex]",
		   KmodFeed, PerfFeed)
{
	// What hwsigd's history, a client reading the daemon at a longer
	// interval, and a run's summary derive: snapshots further apart than
	// the reads that scaled them.
	auto intervals = repeat(10, {{0, ran(1.0, 2e9), ran(1.0, 2e9)}});
	intervals.push_back({{0, ran(0.3, 2e9), ran(0.3, 6e9)}});
	const auto snaps = run<TestType>(1, intervals);

	const Interval iv = checked_derive(snaps[9], snaps[11], {"cpu.ipc"});
	const Metric *ipc = metric(iv, "cpu.ipc", "system");
	REQUIRE(ipc);
	CHECK(ipc->value == Approx((2e9 + 6e9) / (2e9 + 2e9)));
	// 1 s + 0.3 s counted of 2 s.
	CHECK(ipc->note == "multiplexed: counted 65% of the time, scaled");
	CHECK(snaps[11].counter(series::kPmuInstructions, "system")->value -
		      snaps[9].counter(series::kPmuInstructions, "system")->value ==
	      Approx(8e9));
}

TEST_CASE("PMU: hwsig.ko's events are scaled each by its own times", "[pmu][multiplex]")
{
	// The module opens every event on its own (no group): cycles may count
	// all the time while instructions are multiplexed.
	auto intervals = repeat(10, {{0, ran(1.0, 1e9), ran(1.0, 1e9)}});
	intervals.push_back({{0, ran(1.0, 1e9), ran(0.25, 2e9)}});
	const auto snaps = run<KmodFeed>(1, intervals);

	const auto iv = interval(snaps, 11);
	const Metric *ipc = metric(iv, "cpu.ipc", "cpu:0");
	REQUIRE(ipc);
	CHECK(ipc->value == Approx(2.0));
	CHECK(ipc->note == "multiplexed: counted 25% of the time, scaled");
}

TEST_CASE("PMU: uncore boxes are scaled each by its own interval, then summed per socket", "[pmu][multiplex]")
{
	// The uncore backend's step: one reading per memory-controller box.
	ScaledCounters counts;
	CounterReading box0, box1;
	std::vector<Snapshot> snaps;
	auto take = [&](const Delta &d0, const Delta &d1) {
		accumulate(box0, d0);
		accumulate(box1, d1);
		counts.read({0, 0}, series::kImcCasReads, "socket:0", box0);
		counts.read({1, 0}, series::kImcCasReads, "socket:0", box1);
		Snapshot s;
		s.mono_ns = snaps.size() * kSecond;
		counts.add_to(s, "perf");
		snaps.push_back(s);
	};
	take({0, 0, 0}, {0, 0, 0});
	for (int i = 0; i < 10; i++)
		take(ran(1.0, 1e6), ran(1.0, 1e6));
	take(ran(1.0, 1e6), ran(0.5, 4e6)); // box 1 busier, half counted

	const auto iv = checked_derive(snaps[10], snaps[11], {"mem.imc_read_bps"});
	for (const char *scope : {"socket:0", "system"}) {
		INFO(scope);
		const Metric *bps = metric(iv, "mem.imc_read_bps", scope);
		REQUIRE(bps);
		CHECK(bps->value == Approx(64 * (1e6 + 4e6)));
		CHECK(bps->note == "multiplexed: counted 75% of the time, scaled");
	}
}
