// Each source's reading carries its own CLOCK_MONOTONIC stamp, and a rate
// is taken between its own source's two stamps (issue 13 item 11): the
// sources run one after the other, after VM discovery, and a slow one
// must not bend the rates of those after it.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "hwsig/catalog.h"
#include "hwsig/derive.h"
#include "hwsig/sampler.h"
#include "hwsig/series.h"
#include "hwsig/snapshot_wire.h"

namespace {

using namespace std::chrono_literals;

// A source whose collect takes a known time, in the order of the list.
class SlowSource : public hwsig::Source {
public:
	explicit SlowSource(std::vector<std::chrono::milliseconds> delays) : delays_(std::move(delays)) {}
	std::string_view name() const override { return "test.slow"; }
	std::vector<std::string> provides() const override { return {}; }
	void collect(const hwsig::SourceContext &, hwsig::Snapshot &) override
	{
		std::this_thread::sleep_for(delays_.at(taken_++ % delays_.size()));
	}

private:
	std::vector<std::chrono::milliseconds> delays_;
	std::size_t taken_ = 0;
};

// A "CPU pressure" counter that runs at exactly 1 us per us of
// CLOCK_MONOTONIC: psi.cpu_some_pct of it is 100 % over any interval.
// delays: how long it works before it reads (it then stamps its reading
// itself, as a source with set-up work must).
class ClockSource : public hwsig::Source {
public:
	explicit ClockSource(std::vector<std::chrono::milliseconds> delays = {}) : delays_(std::move(delays)) {}
	std::string_view name() const override { return "test.clock"; }
	std::vector<std::string> provides() const override { return {"psi.cpu_some_pct"}; }
	void collect(const hwsig::SourceContext &, hwsig::Snapshot &snap) override
	{
		if (!delays_.empty()) {
			std::this_thread::sleep_for(delays_.at(taken_++ % delays_.size()));
			snap.restamp_readings();
		}
		snap.add_counter(hwsig::series::kPsiCpuSomeUs, "system",
				 static_cast<double>(hwsig::monotonic_ns()) / 1e3, "test");
	}

private:
	std::vector<std::chrono::milliseconds> delays_;
	std::size_t taken_ = 0;
};

// A preemption between a reading's stamp and its clock read adds to the
// counts alone: 7 ms of it over a 160 ms interval (seen on a loaded 2-CPU
// test machine) is 4.4 %. A rate timed by the wrong stamps reads 400 % here.
constexpr double kMargin = 5.0;

double cpu_some_pct(const hwsig::Interval &iv)
{
	for (const auto &m : iv.metrics)
		if (m.id == "psi.cpu_some_pct" && m.scope == "system")
			return m.value;
	FAIL("no psi.cpu_some_pct");
	return 0;
}

std::string empty_root()
{
	auto dir = std::filesystem::temp_directory_path() / "hwsig-stamps-root";
	std::filesystem::create_directories(dir / "proc");
	return dir.string();
}

} // namespace

TEST_CASE("a rate is timed by its own source's readings, not by a source before it", "[stamps]")
{
	// The slow source takes 0 ms in the first snapshot and 150 ms in the
	// second; 50 ms pass between them. One stamp per snapshot, taken
	// before every source, gives the clock 200 ms of counts over 50 ms of
	// stamps: 400 %.
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(std::make_unique<SlowSource>(std::vector{0ms, 150ms}));
	sources.push_back(std::make_unique<ClockSource>());
	hwsig::Sampler sampler(std::move(sources), empty_root(), 0);
	auto a = sampler.take();
	std::this_thread::sleep_for(50ms);
	auto b = sampler.take();
	CHECK(b.read_ns(hwsig::series::kPsiCpuSomeUs) - a.read_ns(hwsig::series::kPsiCpuSomeUs) >= 200'000'000u);
	auto iv = hwsig::derive(a, b, sampler.claimed_ids());
	CHECK(cpu_some_pct(iv) == Approx(100.0).margin(kMargin));
	// The snapshot's own time is still its beginning, before every source.
	CHECK(b.mono_ns < b.read_ns(hwsig::series::kPsiCpuSomeUs));
}

TEST_CASE("a source that works before it reads stamps its reading itself", "[stamps]")
{
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(std::make_unique<ClockSource>(std::vector{0ms, 120ms}));
	hwsig::Sampler sampler(std::move(sources), empty_root(), 0);
	auto a = sampler.take();
	std::this_thread::sleep_for(40ms);
	auto b = sampler.take();
	CHECK(cpu_some_pct(hwsig::derive(a, b, sampler.claimed_ids())) == Approx(100.0).margin(kMargin));
	// The Sampler stops stamping when take() returns: what a copy adds
	// later keeps the stamp it is given.
	auto c = b;
	const auto before = c.read_ns(hwsig::series::kPsiCpuSomeUs);
	c.add_counter(hwsig::series::kPsiCpuSomeUs, "other", 1, "test");
	CHECK(c.read_ns(hwsig::series::kPsiCpuSomeUs) == before);
}

namespace {

// Two hand-made snapshots, 1 s apart, whose series were read 0.5 s apart.
std::pair<hwsig::Snapshot, hwsig::Snapshot> stamped_pair()
{
	hwsig::Snapshot a, b;
	a.mono_ns = 10'000'000'000;
	b.mono_ns = 11'000'000'000;
	a.stamp_readings(10'400'000'000);
	a.add_counter(hwsig::series::kPsiIoSomeUs, "system", 1'000'000, "procfs");
	b.stamp_readings(10'900'000'000);
	b.add_counter(hwsig::series::kPsiIoSomeUs, "system", 1'250'000, "procfs"); // 0.25 s stalled
	a.stamp_readings(0);
	b.stamp_readings(0);
	return {a, b};
}

double value_of(const hwsig::Interval &iv, const std::string &id)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == "system")
			return m.value;
	FAIL("no " << id);
	return 0;
}

} // namespace

TEST_CASE("derive: a rate over its series' stamps, a summary too", "[stamps]")
{
	auto [a, b] = stamped_pair();
	auto iv = hwsig::derive(a, b, {"psi.io_some_pct"});
	CHECK(value_of(iv, "psi.io_some_pct") == Approx(50.0)); // 0.25 s of 0.5 s, not of 1 s
	CHECK(iv.interval_s == Approx(1.0));                     // the snapshots' own span
	hwsig::RunStart start;
	start.observe(a);
	start.observe(b);
	CHECK(value_of(hwsig::derive_summary(start, b, {"psi.io_some_pct"}), "psi.io_some_pct") ==
	      Approx(50.0));
	// Unstamped snapshots (an older hwsigd's) use the snapshot times.
	a.set_read_ns(hwsig::series::kPsiIoSomeUs, 0);
	b.set_read_ns(hwsig::series::kPsiIoSomeUs, 0);
	CHECK(value_of(hwsig::derive(a, b, {"psi.io_some_pct"}), "psi.io_some_pct") == Approx(25.0));
}

TEST_CASE("a summary covers a scope that appears later from its own source's stamp", "[stamps]")
{
	// bpf.io_reads counts from zero: dev:vdb, first seen in the third
	// snapshot, was idle before (0, not unknown): covered from the first
	// snapshot's reading of it. vm:new, a VM started there, is covered
	// from the second snapshot's reading.
	hwsig::Snapshot s[3];
	const std::uint64_t read_at[3] = {1'300'000'000, 2'700'000'000, 3'300'000'000};
	for (int i = 0; i < 3; i++) {
		s[i].mono_ns = 1'000'000'000ull * (i + 1);
		s[i].set_counts_from_zero(hwsig::series::kIoReads);
		s[i].stamp_readings(read_at[i]);
		s[i].add_counter(hwsig::series::kIoReads, "dev:vda", 100.0 * i, "bpf");
		if (i == 2) {
			s[i].add_counter(hwsig::series::kIoReads, "dev:vdb", 60, "bpf");
			s[i].add_counter(hwsig::series::kIoReads, "vm:new", 60, "bpf");
		}
		s[i].stamp_readings(0);
	}
	hwsig::RunStart start;
	for (const auto &x : s)
		start.observe(x);
	CHECK(start.since(hwsig::series::kIoReads, "dev:vdb") == read_at[0]);
	CHECK(start.since(hwsig::series::kIoReads, "vm:new") == read_at[1]);
	auto iv = hwsig::derive_summary(start, s[2], {"io.iops_read"});
	std::map<std::string, double> v;
	for (const auto &m : iv.metrics)
		if (m.id == "io.iops_read")
			v[m.scope] = m.value;
	CHECK(v["dev:vda"] == Approx(200.0 / 2.0)); // 200 reads over 1.3 s -> 3.3 s
	CHECK(v["dev:vdb"] == Approx(60.0 / 2.0));  // 60 reads over 1.3 s -> 3.3 s
	CHECK(v["vm:new"] == Approx(60.0 / 0.6));   // 60 reads over 2.7 s -> 3.3 s
}

TEST_CASE("the wire carries each series' stamp (version 3 on), version 2 is still read", "[stamps][wire]")
{
	auto [a, b] = stamped_pair();
	(void)a;
	b.add_gauge("thermal.headroom_c", "system", 20, "sysfs"); // unstamped
	auto text = hwsig::encode_snapshot(b, {}, {});
	CHECK(text.rfind("hwsig-snapshot\t6\n", 0) == 0);
	auto got = hwsig::decode_snapshot(text);
	CHECK(got.snapshot.mono_ns == 11'000'000'000u);
	CHECK(got.snapshot.read_ns(hwsig::series::kPsiIoSomeUs) == 10'900'000'000u);
	CHECK(got.snapshot.counters().at(hwsig::series::kPsiIoSomeUs).read_ns == 10'900'000'000u);
	CHECK(got.snapshot.read_ns("thermal.headroom_c") == 11'000'000'000u);
	CHECK(got.snapshot.gauges().at("thermal.headroom_c").read_ns == 0);
	// A stamp line may come before its series.
	auto early = hwsig::decode_snapshot("hwsig-snapshot\t3\ntime\t5\t6\nread\tx\t4\nC\tx\tsystem\tprocfs\t1\nend\n");
	CHECK(early.snapshot.read_ns("x") == 4);
	// Version 2 has no stamps: every series read at the snapshot's time,
	// and a "read" line there is refused as unknown.
	auto v2 = hwsig::decode_snapshot("hwsig-snapshot\t2\ntime\t100\t200\nC\tx\tsystem\tprocfs\t7\nend\n");
	CHECK(v2.snapshot.read_ns("x") == 100);
	CHECK(v2.snapshot.counter("x", "system")->value == 7);
	CHECK_THROWS_WITH(hwsig::decode_snapshot("hwsig-snapshot\t2\nread\tx\t4\nend\n"),
			  Catch::Contains("unknown record 'read'"));
	CHECK_THROWS_WITH(hwsig::decode_snapshot("hwsig-snapshot\t3\nread\tx\t-4\nend\n"),
			  Catch::Contains("not an unsigned integer"));
	CHECK_THROWS_WITH(hwsig::decode_snapshot("hwsig-snapshot\t7\nend\n"), Catch::Contains("reads 1 to 6"));
}
