// A snapshot filled in another's storage (what hwsigd does every interval)
// and the history that recycles its oldest entry must hold exactly what a
// fresh one would: no value, scope, note or stamp of the old shape left.
#include <map>
#include <catch2/catch.hpp>

#include <string>

#include "history.h"
#include "hwsig/snapshot.h"

namespace {

// Every part of a snapshot, as text: two snapshots with the same text hold
// the same series, scopes, values, histograms, notes, stamps and sources.
std::string text_of(const hwsig::Snapshot &s)
{
	std::string out = "mono " + std::to_string(s.mono_ns) + "\n";
	for (const auto &[name, series] : s.counters())
		for (const auto &[scope, p] : series.by_scope)
			out += "C " + name + " " + scope + " " + series.source + " " + std::to_string(series.read_ns) +
			       " " + std::to_string(p.value) + " " + std::to_string(p.mux.raw) + " " +
			       std::to_string(p.mux.running_ns) + "\n";
	for (const auto &[name, series] : s.gauges())
		for (const auto &[scope, v] : series.by_scope)
			out += "G " + name + " " + scope + " " + series.source + " " + std::to_string(series.read_ns) +
			       " " + std::to_string(v) + "\n";
	for (const auto &[name, series] : s.histograms())
		for (const auto &[scope, h] : series.by_scope) {
			out += "H " + name + " " + scope + " " + series.source + " " + std::to_string(series.read_ns);
			for (auto c : h.counts)
				out += " " + std::to_string(c);
			out += "\n";
		}
	for (const auto &n : s.unavailable())
		out += "U " + n.id + " " + n.scope + " " + std::string(hwsig::code_name(n.code)) + " " + n.reason + "\n";
	for (const auto &z : s.from_zero())
		out += "Z " + z + "\n";
	return out;
}

hwsig::Histogram hist(std::initializer_list<std::uint64_t> counts)
{
	hwsig::Histogram h;
	h.counts.assign(counts);
	return h;
}

// Shape A: what a host had last interval.
void fill_a(hwsig::Snapshot &s)
{
	s.mono_ns = 1000;
	s.stamp_readings(900);
	s.add_counter("stat.total", "system", 10, "procfs");
	s.add_counter("stat.total", "cpu:0", 4, "procfs");
	s.add_counter("stat.total", "cpu:1", 6, "procfs");
	s.add_counter("pmu.cycles", "system", hwsig::CounterPoint{50, {25, 100, 50, 0}}, "perf");
	s.add_gauge("thermal.headroom_c", "zone:a", 40, "sysfs");
	s.add_gauge("psi.cpu_some", "system", 0.5, "procfs");
	s.add_histogram("bpf.runq", "system", hist({1, 2, 3, 4}), "bpf");
	s.add_histogram("bpf.block_lat", "dev:vda", hist({0, 9}), "bpf");
	s.add_histogram("bpf.block_lat", "dev:vdb", hist({7}), "bpf");
	s.add_unavailable("cpu.ipc", "system", hwsig::UnavailableCode::unsupported, "no PMU on this host");
	s.add_unavailable("vhost.queue_depth_p50", "system", hwsig::UnavailableCode::no_target, "no vhost device");
	s.set_counts_from_zero("bpf.runq");
	s.set_counts_from_zero("bpf.block_lat");
	s.stamp_readings(0);
}

// Shape B: the next interval on the same host: a CPU and a disk gone, a
// series dropped, one new, other values, other notes.
void fill_b(hwsig::Snapshot &s)
{
	s.mono_ns = 2000;
	s.stamp_readings(1900);
	s.add_counter("stat.total", "cpu:1", 16, "procfs");
	s.add_counter("stat.total", "system", 20, "procfs");
	s.add_counter("numa.numa_hit", "node:0", 77, "sysfs");
	s.add_counter("pmu.cycles", "system", 60, "kmod");
	s.add_gauge("psi.cpu_some", "system", 0.25, "procfs");
	s.add_histogram("bpf.block_lat", "dev:vdc", hist({5, 5, 5, 5, 5, 5}), "bpf");
	s.add_histogram("bpf.runq", "system", hist({4, 3}), "bpf");
	s.add_unavailable("vhost.queue_depth_p50", "vm:guest-with-a-longer-name", hwsig::UnavailableCode::no_target,
			  "its vhost worker was not found in /proc: a reason longer than the last one");
	s.set_counts_from_zero("bpf.block_lat");
	s.stamp_readings(0);
}

} // namespace

TEST_CASE("a snapshot filled in an old one's storage equals a fresh one", "[snapshot][reuse]")
{
	hwsig::Snapshot fresh_b;
	fill_b(fresh_b);
	hwsig::Snapshot fresh_a;
	fill_a(fresh_a);

	SECTION("A's storage filled with B, and back")
	{
		hwsig::Snapshot a;
		fill_a(a);
		hwsig::Snapshot b;
		b.reuse_storage(std::move(a));
		fill_b(b);
		b.release_spares();
		CHECK(text_of(b) == text_of(fresh_b));

		hwsig::Snapshot a2;
		a2.reuse_storage(std::move(b));
		fill_a(a2);
		a2.release_spares();
		CHECK(text_of(a2) == text_of(fresh_a));
	}
	SECTION("the same shape again, many times")
	{
		hwsig::Snapshot cur;
		fill_a(cur);
		for (int i = 0; i < 5; ++i) {
			hwsig::Snapshot next;
			next.reuse_storage(std::move(cur));
			if (i % 2)
				fill_a(next);
			else
				fill_b(next);
			next.release_spares();
			CHECK(text_of(next) == text_of(i % 2 ? fresh_a : fresh_b));
			cur = std::move(next);
		}
	}
	SECTION("a copy carries the content, not the spares")
	{
		hwsig::Snapshot a;
		fill_a(a);
		hwsig::Snapshot b;
		b.reuse_storage(std::move(a));
		hwsig::Snapshot copy = b; // spares of A's series left behind
		fill_b(copy);
		CHECK(text_of(copy) == text_of(fresh_b));
	}
}

TEST_CASE("the history rebuilds each snapshot as taken after it wraps around", "[history][reuse]")
{
	hwsigd::History h(3); // 4 snapshots kept
	std::vector<std::string> expected;
	for (int i = 0; i < 11; ++i) {
		hwsig::Snapshot s;
		// Shapes alternate irregularly, so that a recycled entry is
		// refilled with more and with fewer values and histograms.
		if (i % 3 == 0)
			fill_b(s);
		else
			fill_a(s);
		s.mono_ns += static_cast<std::uint64_t>(i);
		h.add(s, {}, true);
		expected.push_back(text_of(s));
	}
	REQUIRE(h.snapshots() == 4);
	for (std::size_t i = 0; i < 4; ++i)
		CHECK(text_of(h.snapshot(i)) == expected[expected.size() - 4 + i]);
}

TEST_CASE("the history without per-CPU scopes drops exactly those", "[history]")
{
	hwsigd::History h(2);
	hwsig::Snapshot s;
	fill_a(s);
	h.add(s, {}, false);
	const hwsig::Snapshot back = h.snapshot(0);
	CHECK(back.counter("stat.total", "system"));
	CHECK_FALSE(back.counter("stat.total", "cpu:0"));
	CHECK_FALSE(back.counter("stat.total", "cpu:1"));
	REQUIRE(back.histogram("bpf.block_lat", "dev:vdb"));
	CHECK(back.histogram("bpf.block_lat", "dev:vdb")->counts == std::vector<std::uint64_t>{7});
}

// History::add() finds a scope's key where the last snapshot had it: a
// scope gone, one new in the middle, a series from another source and
// the keys renumbered when the history wraps must not mislabel a value.
TEST_CASE("the history keeps each value with its scope while the snapshots change shape", "[history]")
{
	hwsigd::History h(3);
	auto take = [&](const std::vector<std::string> &scopes, double base, const char *source) {
		hwsig::Snapshot s;
		for (std::size_t i = 0; i < scopes.size(); ++i) {
			s.add_counter("stat.total", scopes[i], base + static_cast<double>(i), source);
			s.add_gauge("mem.free", scopes[i], 2 * base + static_cast<double>(i), source);
		}
		h.add(s, {}, true);
	};
	const std::vector<std::vector<std::string>> shapes = {
		{"vm:a", "vm:b", "vm:c"}, {"vm:a", "vm:c"}, {"vm:a", "vm:b", "vm:c"}, {"vm:a", "vm:aa", "vm:b", "vm:c"},
		{"vm:b"}, {"vm:a", "vm:b", "vm:c"}, {"vm:a", "vm:b", "vm:c"},
	};
	for (std::size_t round = 0; round < shapes.size(); ++round) {
		const double base = 100.0 * static_cast<double>(round + 1);
		const char *source = round == 5 ? "bpf" : "procfs";
		take(shapes[round], base, source);
		const hwsig::Snapshot back = h.snapshot(h.snapshots() - 1);
		INFO("round " << round);
		std::size_t i = 0;
		for (const auto &scope : shapes[round]) {
			const auto *c = back.counter("stat.total", scope);
			const auto *g = back.gauge("mem.free", scope);
			REQUIRE(c);
			REQUIRE(g);
			CHECK(c->value == base + static_cast<double>(i));
			CHECK(*g == 2 * base + static_cast<double>(i));
			++i;
		}
		CHECK(back.counters().at("stat.total").by_scope.size() == shapes[round].size());
		CHECK(back.counters().at("stat.total").source == source);
	}
}

// Snapshot::add_*() place a scope after the last one without a search and
// anywhere else by one lower_bound: any order, and a scope given twice,
// must come out as a map of the last values.
TEST_CASE("a snapshot keeps every scope once, with its last value, whatever the order of the adds", "[snapshot]")
{
	const std::vector<std::string> order = {"vm:b", "vm:d", "vm:a", "vm:d", "vm:c", "vm:e", "vm:a", "vm:b", "vm:e"};
	hwsig::Snapshot spare;
	for (int round = 0; round < 2; ++round) {
		hwsig::Snapshot s;
		s.reuse_storage(std::move(spare));
		std::map<std::string, double> want;
		double v = round * 100.0;
		for (const auto &scope : order) {
			s.add_counter("stat.total", scope, ++v, "procfs");
			s.add_gauge("mem.free", scope, -v, "procfs");
			want[scope] = v;
		}
		s.release_spares();
		INFO("round " << round);
		const auto &counters = s.counters().at("stat.total").by_scope;
		const auto &gauges = s.gauges().at("mem.free").by_scope;
		REQUIRE(counters.size() == want.size());
		REQUIRE(gauges.size() == want.size());
		for (const auto &[scope, value] : want) {
			CHECK(counters.at(scope).value == value);
			CHECK(gauges.at(scope) == -value);
		}
		spare = std::move(s);
	}
}

namespace {

// Shape C: A's scopes in A's order, with holes: the last scopes of a
// counter and of a histogram gone, one given twice (the second value
// stands), and a gauge given exactly as before.
void fill_c(hwsig::Snapshot &s)
{
	s.mono_ns = 3000;
	s.add_counter("stat.total", "cpu:0", 1, "procfs");
	s.add_counter("pmu.cycles", "system", 70, "perf");
	s.add_counter("pmu.cycles", "system", 71, "perf");
	s.add_gauge("thermal.headroom_c", "zone:a", 41, "sysfs");
	s.add_histogram("bpf.block_lat", "dev:vda", hist({1, 1}), "bpf");
}

} // namespace

// Refilling overwrites a series' scopes in place while they come in the old
// order; what comes out of it, or never comes, must not survive.
TEST_CASE("a refill in the old order, with holes and repeats, equals a fresh snapshot", "[snapshot][reuse]")
{
	hwsig::Snapshot fresh;
	fill_c(fresh);
	hwsig::Snapshot a;
	fill_a(a);
	hwsig::Snapshot c;
	c.reuse_storage(std::move(a));
	fill_c(c);
	c.release_spares();
	CHECK(text_of(c) == text_of(fresh));
	CHECK(c.counter("stat.total", "cpu:1") == nullptr);
	CHECK(c.counter("stat.total", "system") == nullptr);
	CHECK(c.histogram("bpf.block_lat", "dev:vdb") == nullptr);
	REQUIRE(c.counter("pmu.cycles", "system"));
	CHECK(c.counter("pmu.cycles", "system")->value == 71);
	// And A again in C's storage.
	hwsig::Snapshot fresh_a;
	fill_a(fresh_a);
	hwsig::Snapshot again;
	again.reuse_storage(std::move(c));
	fill_a(again);
	again.release_spares();
	CHECK(text_of(again) == text_of(fresh_a));
}

// hwsigd fills each snapshot in a spare storage, so two or three storages
// rotate, and History::add() takes a series' keys by position,
// without a comparison, when its shape (Series::shape) is one it knows.
// Whatever the scopes do between the two storages, every value must come
// back with its own scope.
TEST_CASE("the history keys refilled snapshots by shape and never mislabels a value", "[history][reuse]")
{
	// Steady lists long enough that every storage is refilled with the
	// same scopes (the shape then known), and changes in between.
	const std::vector<std::string> abc = {"vm:a", "vm:b", "vm:c"}, ac = {"vm:a", "vm:c"},
					abcd = {"vm:a", "vm:b", "vm:c", "vm:d"}, cpu = {"cpu:0", "vm:a", "vm:b", "vm:c", "vm:d"},
					xy = {"vm:x", "vm:y"};
	const std::vector<std::vector<std::string>> rounds = {
		abc, abc, abc, abc, abc, abc, ac, abc, ac, abcd, abcd, abcd, abcd, abcd, abcd,
		cpu, cpu, cpu, cpu, cpu, cpu, {"vm:b", "vm:c"}, xy, xy, xy, xy, xy, xy, abc,
	};
	const std::size_t storages = GENERATE(2, 3, 4);
	INFO(storages << " storages");
	hwsigd::History h(4);
	std::vector<hwsig::Snapshot> storage(storages);
	for (std::size_t round = 0; round < rounds.size(); ++round) {
		hwsig::Snapshot s;
		s.reuse_storage(std::move(storage[round % storages]));
		const double base = 100.0 * static_cast<double>(round + 1);
		for (std::size_t i = 0; i < rounds[round].size(); ++i)
			s.add_counter("stat.total", rounds[round][i], base + static_cast<double>(i), "procfs");
		s.release_spares();
		// The first round with per-CPU scopes keeps them; the ones after
		// it, with the same scopes, drop them.
		const bool keep_cpu = round == 15;
		h.add(s, {}, keep_cpu);
		const hwsig::Snapshot back = h.snapshot(h.snapshots() - 1);
		INFO("round " << round);
		std::size_t i = 0, kept = 0;
		for (const auto &scope : rounds[round]) {
			const bool dropped = !keep_cpu && scope.starts_with("cpu:");
			const auto *c = back.counter("stat.total", scope);
			if (dropped) {
				CHECK_FALSE(c);
			} else {
				REQUIRE(c);
				CHECK(c->value == base + static_cast<double>(i));
				++kept;
			}
			++i;
		}
		CHECK(back.counters().at("stat.total").by_scope.size() == kept);
		storage[round % storages] = std::move(s);
	}
}

// Past 65,536 keys the history renumbers them (compact_keys()), rewriting
// the key lists that entries share: a shared list renumbered twice, or an
// entry left with the old numbers, would relabel its values.
TEST_CASE("the history renumbers its keys without relabelling a value", "[history]")
{
	hwsigd::History h(3);
	std::vector<std::string> expected;
	bool compacted = false;
	std::size_t keys_before = 0;
	for (int round = 0; round < 40; ++round) {
		hwsig::Snapshot s;
		s.mono_ns = static_cast<std::uint64_t>(round);
		// A steady part, the same in every entry (its lists shared) ...
		for (int vm = 0; vm < 50; ++vm)
			s.add_counter("stat.total", "vm:steady" + std::to_string(vm), 1000 * round + vm, "procfs");
		s.add_gauge("psi.cpu_some", "system", 0.5 * round, "procfs");
		s.add_unavailable("cpu.ipc", "vm:*", hwsig::UnavailableCode::unsupported, "no PMU");
		// ... and 3,500 scopes never seen before, every other round from
		// the first: their keys come before the steady ones' (a series
		// sorting first), so the renumbering moves the steady keys.
		if (round % 2 == 0)
			for (int i = 0; i < 3500; ++i)
				s.add_counter("bpf.churn", "vm:r" + std::to_string(round) + "/vcpu:" + std::to_string(i),
					      round * 7 + i, "procfs");
		const std::size_t before = h.key_count();
		h.add(s, {}, true);
		if (h.key_count() < before) {
			compacted = true;
			keys_before = before;
		}
		expected.push_back(text_of(s));
		for (std::size_t i = 0; i < h.snapshots(); ++i)
			CHECK(text_of(h.snapshot(i)) == expected[expected.size() - h.snapshots() + i]);
	}
	INFO("keys before the renumbering: " << keys_before);
	CHECK(compacted);
}

TEST_CASE("adds by name reach their own series, in a copy, a moved snapshot and a refill alike", "[snapshot][reuse]")
{
	// More names in turn than the snapshot remembers, so that each is
	// found again both ways: remembered and searched for.
	const std::vector<std::string> names = {"a.one", "a.two", "b.three", "c.four", "d.five", "e.six"};
	hwsig::Snapshot s;
	for (int round = 0; round < 3; ++round)
		for (std::size_t i = 0; i < names.size(); ++i)
			s.add_counter(names[i], "vm:x/vcpu:" + std::to_string(round), static_cast<double>(10 * i + round),
				      "test");
	for (std::size_t i = 0; i < names.size(); ++i)
		for (int round = 0; round < 3; ++round)
			CHECK(s.counter(names[i], "vm:x/vcpu:" + std::to_string(round))->value == 10 * i + round);

	// A copy's adds go to the copy's series, never to the original's.
	hwsig::Snapshot copy = s;
	copy.add_counter("a.one", "vm:y", 1, "test");
	copy.add_counter("a.two", "vm:y", 2, "test");
	CHECK(copy.counter("a.one", "vm:y")->value == 1);
	CHECK_FALSE(s.counter("a.one", "vm:y"));
	CHECK_FALSE(s.counter("a.two", "vm:y"));
	copy = s; // assigned over: its own again
	copy.add_counter("a.one", "vm:z", 3, "test");
	CHECK_FALSE(s.counter("a.one", "vm:z"));

	// Moved: the new owner adds to the series it holds.
	hwsig::Snapshot moved = std::move(copy);
	moved.add_counter("a.one", "vm:w", 4, "test");
	CHECK(moved.counter("a.one", "vm:w")->value == 4);
	CHECK(moved.counter("a.one", "vm:z")->value == 3);

	// Refilled in the old one's storage: each value under its own name.
	hwsig::Snapshot refill;
	refill.reuse_storage(std::move(s));
	for (std::size_t i = names.size(); i-- > 0;)
		refill.add_counter(names[i], "vm:x/vcpu:0", static_cast<double>(100 + i), "test");
	refill.release_spares();
	for (std::size_t i = 0; i < names.size(); ++i) {
		REQUIRE(refill.counter(names[i], "vm:x/vcpu:0"));
		CHECK(refill.counter(names[i], "vm:x/vcpu:0")->value == 100 + i);
		CHECK(refill.counters().at(names[i]).by_scope.size() == 1);
	}
}
