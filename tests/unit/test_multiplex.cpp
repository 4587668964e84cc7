// multiplex.h: the per-interval scaling formula, one counter's totals
// across reads (restarts, intervals it never ran), and the per-scope sums
// of one collect.
#include <catch2/catch.hpp>

#include <algorithm>

#include "derive_check.h"
#include "hwsig/error.h"
#include "hwsig/multiplex.h"
#include "hwsig/perf_open.h"
#include "hwsig/series.h"

using namespace hwsig;

TEST_CASE("scale_interval scales by the interval's enabled/running and never invents a count", "[multiplex]")
{
	CHECK(scale_interval(1000, 200, 100) == Approx(2000));
	CHECK(scale_interval(1000, 100, 100) == 1000);
	CHECK_FALSE(scale_interval(1000, 100, 0)); // enabled, never running: unknown
	CHECK_FALSE(scale_interval(0, 100, 0));
	CHECK(scale_interval(0, 0, 0) == 0);   // not enabled in the interval: nothing to count
	CHECK(scale_interval(7, 5, 6) == 7);   // clock skew: running a little past enabled
}

TEST_CASE("IntervalScaledCounter adds per-interval estimates, restarts from zero, keeps unknown time apart",
	  "[multiplex]")
{
	IntervalScaledCounter c;
	c.read({100, 100, 100});
	c.read({300, 300, 200}); // 200 counted in half of 200 ns: 400
	CHECK(c.totals().value == Approx(500));
	CHECK(c.totals().mux.raw == 300);
	CHECK(c.totals().mux.enabled_ns == 300);
	CHECK(c.totals().mux.running_ns == 200);
	CHECK(c.totals().mux.uncounted_ns == 0);

	c.read({350, 400, 200}); // enabled 100 ns more, never running
	CHECK(c.totals().value == Approx(500));
	CHECK(c.totals().mux.raw == 350);
	CHECK(c.totals().mux.uncounted_ns == 100);

	c.read({30, 60, 60}); // the counter restarted (CPU back online): from zero
	CHECK(c.totals().value == Approx(530));
	CHECK(c.totals().mux.raw == 380);
	CHECK(c.totals().mux.enabled_ns == 460);
	CHECK(c.totals().mux.running_ns == 260);
	CHECK(c.totals().mux.uncounted_ns == 100);
}

TEST_CASE("ScaledCounters: per scope what this collect read, system keeps an unread counter's total", "[multiplex]")
{
	ScaledCounters counters;
	counters.read({0, 0}, "pmu.cycles", "cpu:0", {100, 10, 10});
	counters.read({1, 0}, "pmu.cycles", "cpu:1", {100, 10, 5});
	Snapshot first;
	counters.add_to(first, "perf");
	REQUIRE(first.counter("pmu.cycles", "system"));
	CHECK(first.counter("pmu.cycles", "cpu:1")->value == Approx(200));
	CHECK(first.counter("pmu.cycles", "system")->value == Approx(300));
	CHECK(first.counter("pmu.cycles", "system")->mux.raw == 200);
	CHECK(first.counter("pmu.cycles", "system")->mux.enabled_ns == 20);
	CHECK(first.counter("pmu.cycles", "system")->mux.running_ns == 15);
	CHECK(first.counters().at("pmu.cycles").source == "perf");

	counters.read({0, 0}, "pmu.cycles", "cpu:0", {150, 20, 20}); // cpu 1 not read this time
	Snapshot second;
	counters.add_to(second, "perf");
	CHECK_FALSE(second.counter("pmu.cycles", "cpu:1"));
	// cpu 0's 150 and cpu 1's last 200: never below the last sum (300),
	// which derive() would take for a counter reset.
	CHECK(second.counter("pmu.cycles", "system")->value == Approx(350));
	CHECK(second.counter("pmu.cycles", "system")->mux.raw == 250);

	counters.read({0, 0}, "pmu.cycles", "cpu:0", {160, 30, 30});
	counters.read({1, 0}, "pmu.cycles", "cpu:1", {180, 30, 15}); // back: 80 counted, running 10 of 20 ns
	Snapshot fourth;
	counters.add_to(fourth, "perf");
	CHECK(fourth.counter("pmu.cycles", "cpu:1")->value == Approx(200 + 80 * 2));
	CHECK(fourth.counter("pmu.cycles", "system")->value == Approx(160 + 360));

	counters.clear(); // reopened: counts start again
	counters.read({0, 0}, "pmu.cycles", "cpu:0", {5, 1, 1});
	Snapshot third;
	counters.add_to(third, "perf");
	CHECK(third.counter("pmu.cycles", "cpu:0")->value == Approx(5));
	CHECK(third.counter("pmu.cycles", "system")->value == Approx(5));
}

// Issue 13, item 12: an uncore socket sums several boxes (IMC channels, UMCs):
// a box not read in a collect must not take its count out of its socket's
// sum either, or the socket's counter goes down: a reset to derive().
TEST_CASE("ScaledCounters: a socket's sum keeps an unread box's last total", "[multiplex][uncore]")
{
	ScaledCounters boxes;
	boxes.read({0, 0}, "imc.cas_reads", "socket:0", {100, 10, 10});
	boxes.read({1, 0}, "imc.cas_reads", "socket:0", {40, 10, 10});
	boxes.read({2, 0}, "imc.cas_reads", "socket:1", {7, 10, 10});
	Snapshot first;
	boxes.add_to(first, "perf");
	REQUIRE(first.counter("imc.cas_reads", "socket:0"));
	CHECK(first.counter("imc.cas_reads", "socket:0")->value == Approx(140));
	CHECK(first.counter("imc.cas_reads", "socket:1")->value == Approx(7));

	boxes.read({0, 0}, "imc.cas_reads", "socket:0", {130, 20, 20}); // box 1 and socket 1's box unread
	Snapshot second;
	boxes.add_to(second, "perf");
	REQUIRE(second.counter("imc.cas_reads", "socket:0"));
	CHECK(second.counter("imc.cas_reads", "socket:0")->value == Approx(130 + 40));
	CHECK(second.counter("imc.cas_reads", "socket:0")->mux.raw == 170);
	CHECK(second.counter("imc.cas_reads", "socket:0")->mux.enabled_ns == 30);
	CHECK_FALSE(second.counter("imc.cas_reads", "socket:1")); // none of its boxes read
	CHECK(second.counter("imc.cas_reads", "system")->value == Approx(130 + 40 + 7));

	boxes.read({0, 0}, "imc.cas_reads", "socket:0", {150, 30, 30});
	boxes.read({1, 0}, "imc.cas_reads", "socket:0", {90, 30, 15}); // back: 50 counted, running 5 of 20 ns
	boxes.read({2, 0}, "imc.cas_reads", "socket:1", {9, 30, 30});
	Snapshot third;
	boxes.add_to(third, "perf");
	CHECK(third.counter("imc.cas_reads", "socket:0")->value == Approx(150 + 40 + 50 * 4));
	CHECK(third.counter("imc.cas_reads", "socket:1")->value == Approx(9));
}

TEST_CASE("ScaledCounters: a reopened counter counts from zero on top of its total", "[multiplex]")
{
	ScaledCounters counters;
	counters.read({3, 0}, "pmu.cycles", "cpu:3", {1000, 1000, 1000});
	Snapshot before;
	counters.add_to(before, "perf");
	// CPU 3 went offline and came back: its new counter has already
	// counted more than the old one did in all, which read() alone would
	// take for the old counter going on (a delta of 500).
	counters.restart({3, 0});
	counters.restart({9, 9}); // never read: nothing to restart
	counters.read({3, 0}, "pmu.cycles", "cpu:3", {1500, 2000, 1000});
	Snapshot after;
	counters.add_to(after, "perf");
	REQUIRE(after.counter("pmu.cycles", "cpu:3"));
	CHECK(after.counter("pmu.cycles", "cpu:3")->value == Approx(1000 + 1500 * 2));
	CHECK(after.counter("pmu.cycles", "cpu:3")->mux.raw == 2500);
	CHECK(after.counter("pmu.cycles", "cpu:3")->mux.enabled_ns == 3000);
	CHECK(after.counter("pmu.cycles", "cpu:3")->mux.running_ns == 2000);
	CHECK(after.counters().size() == 1);
}

// Issue 34, item 5: two CPUs at a constant 1M LLC misses per second each
// (64 MB/s each, 128 MB/s in all); CPU 1's read fails once. The system
// figure read 64 then 192 MB/s, with no note, and cpu:1 vanished for two
// intervals. Now both intervals the failure touches are unavailable, saying
// why, at cpu:1 and system; the others are 128 exactly.
TEST_CASE("ScaledCounters: a failed read makes its sums unknown, never a drop and a spike", "[multiplex][derive]")
{
	ScaledCounters counters;
	std::vector<Snapshot> snaps;
	const std::uint64_t second = 1'000'000'000;
	for (std::uint64_t t = 0; t <= 4; ++t) {
		const CounterReading r{t * 1'000'000, t * second, t * second};
		counters.read({0, 0}, series::kPmuLlcMisses, "cpu:0", r);
		if (t == 2)
			counters.read_failed({1, 0});
		else
			counters.read({1, 0}, series::kPmuLlcMisses, "cpu:1", r);
		Snapshot s;
		s.mono_ns = t * second;
		counters.add_to(s, "perf");
		snaps.push_back(std::move(s));
	}
	const char *id = metric_id::kMemLlcMissBps;
	for (std::size_t i = 1; i < snaps.size(); ++i) {
		INFO("interval " << i - 1 << ".." << i);
		auto iv = checked_derive(snaps[i - 1], snaps[i], {id});
		// The value or the note of id at a scope, in iv's metrics or notes.
		auto at = [&](const auto &list, const char *scope) {
			auto it = std::find_if(list.begin(), list.end(),
					       [&](const auto &x) { return x.id == id && x.scope == scope; });
			return it == list.end() ? nullptr : &*it;
		};
		const Metric *system = at(iv.metrics, "system"), *cpu1 = at(iv.metrics, "cpu:1");
		const UnavailableNote *why = at(iv.unavailable, "system"), *why1 = at(iv.unavailable, "cpu:1");
		if (i == 2 || i == 3) { // the failed read, then the read that holds two intervals
			CHECK_FALSE(system);
			CHECK_FALSE(cpu1);
			REQUIRE(why);
			REQUIRE(why1);
			CHECK(why->reason == "pmu.llc_misses: 1 counter read failed in this interval or the one "
					     "before (the next read holds both intervals' counts): unknown in this "
					     "interval, not a drop and a spike");
			CHECK(why1->reason == why->reason);
		} else {
			REQUIRE(system);
			REQUIRE(cpu1);
			CHECK(system->value == Approx(128e6));
			CHECK(cpu1->value == Approx(64e6));
		}
	}
	// Over the run the count missed at one read came with the next: the
	// summary of the whole run is whole.
	RunStart start;
	for (const auto &s : snaps)
		start.observe(s);
	auto run = checked_summary(start, snaps.back(), {id});
	bool whole = false;
	for (const auto &m : run.metrics)
		if (m.id == id && m.scope == "system")
			whole = m.value == Approx(128e6);
	CHECK(whole);
}

TEST_CASE("group_readings: one reading per member with the group's times", "[multiplex][perf]")
{
	auto r = group_readings({2, 1000, 250, 7, 9}, 2);
	REQUIRE(r.size() == 2);
	CHECK(r[0].count == 7);
	CHECK(r[1].count == 9);
	for (const auto &m : r) {
		CHECK(m.enabled_ns == 1000);
		CHECK(m.running_ns == 250);
	}
	CHECK_THROWS_AS(group_readings({3, 1000, 250, 7, 9}, 2), Error);
	CHECK_THROWS_AS(group_readings({2, 1000, 250, 7}, 2), Error);
	CHECK_THROWS_AS(group_readings({}, 0), Error);
}
