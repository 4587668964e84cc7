// multiplex.h: the per-interval scaling formula, one counter's totals
// across reads (restarts, intervals it never ran), and the per-scope sums
// of one collect.
#include <catch2/catch.hpp>

#include "hwsig/error.h"
#include "hwsig/multiplex.h"
#include "hwsig/perf_open.h"

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

TEST_CASE("ScaledCounters: per scope what this collect read; system keeps an unread counter's total", "[multiplex]")
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
