// The PMU source end to end through perf_event_open, on fixture sysfs trees.
// perf_event_open itself is live, so each case first asks the kernel what it
// has and then asserts the matching outcome: counts where the PMU exists, the
// exact one-line reason where it does not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <linux/perf_event.h>

#include "hwsig/catalog.h"
#include "hwsig/error.h"
#include "hwsig/perf_open.h"
#include "hwsig/sampler.h"
#include "hwsig/series.h"
#include "hwsig/source_pmu.h"
#include "ring_writer.h"

using namespace hwsig;

namespace {

std::string fixture(const char *host)
{
	return std::string(HWSIG_FIXTURES) + "/pmu/" + host;
}

const UnavailableNote *find_note(const Snapshot &s, std::string_view id)
{
	for (const auto &n : s.unavailable())
		if (n.id == id)
			return &n;
	return nullptr;
}

// 0 when the kernel opens cycles on cpu 0, else its errno.
int cycles_errno()
{
	try {
		PerfGroup::open({PerfEventSpec{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0}}, 0);
		return 0;
	} catch (const Error &e) {
		return e.err();
	}
}

} // namespace

TEST_CASE("PMU source claims the cpu.* and mem.imc_* ids", "[source_pmu]")
{
	auto src = make_pmu_source();
	CHECK(src->name() == "pmu");
	auto ids = src->provides();
	CHECK(ids.size() == 13);
	CHECK(std::count(ids.begin(), ids.end(), "cpu.ipc") == 1);
	CHECK(std::count(ids.begin(), ids.end(), "mem.llc_miss_bps") == 1);
	CHECK(std::count(ids.begin(), ids.end(), "mem.imc_write_bps") == 1);
}

TEST_CASE("every source claims catalog ids only", "[source_pmu][catalog]")
{
	for (const auto &src : default_sources(SourceOptions{})) {
		INFO("source " << src->name());
		for (const auto &id : src->provides()) {
			INFO("id " << id);
			CHECK(std::any_of(catalog().begin(), catalog().end(),
					  [&](const MetricDef &m) { return m.id == id; }));
		}
	}
}

TEST_CASE("PMU source claims exactly the catalog metrics that read pmu.* and imc.* series", "[source_pmu][catalog]")
{
	using namespace series;
	// Spelled out here, not taken from pmu_plan.h: a series added there
	// without a test here shows up as a difference.
	const std::vector<std::string_view> all = {
		kPmuCycles,    kPmuInstructions, kPmuStallCycles,  kPmuL1dMisses,  kPmuL2Misses,
		kPmuLlcReferences, kPmuLlcMisses, kPmuBranches,   kPmuBranchMisses, kPmuDtlbMisses,
		kPmuItlbMisses, kImcCasReads,    kImcCasWrites,    kImcCasReadWrite,
	};
	const auto ids = make_pmu_source()->provides();
	CHECK(ids == metrics_reading(all));
	CHECK(ids == pmu_metric_ids());
	CHECK(std::count(ids.begin(), ids.end(), "mem.imc_bps") == 1);
}

TEST_CASE("PMU source: a DRAM metric its uncore PMU cannot split or join says why", "[source_pmu][uncore]")
{
	auto src = make_pmu_source({false, false});
	SourceContext ctx;
	Snapshot intel;
	ctx.root = fixture("skylake-sp");
	src->collect(ctx, intel);
	const auto *joined = find_note(intel, "mem.imc_bps");
	REQUIRE(joined);
	CHECK(joined->reason == "uncore_imc counts DRAM reads and writes apart (mem.imc_read_bps, mem.imc_write_bps)");

	Snapshot amd;
	ctx.root = fixture("zen2");
	src->collect(ctx, amd);
	for (const char *id : {"mem.imc_read_bps", "mem.imc_write_bps"}) {
		const auto *split = find_note(amd, id);
		REQUIRE(split);
		CHECK(split->reason == "amd_df counts DRAM reads and writes together (no read/write split)");
	}
	if (const auto *n = find_note(amd, "mem.imc_bps"))
		CHECK_THAT(n->reason, Catch::StartsWith("uncore amd_df: "));
	else
		CHECK(amd.counter(series::kImcCasReadWrite, "system"));
}

TEST_CASE("PMU source without a hardware PMU says why, once per metric", "[source_pmu]")
{
	const int err = cycles_errno();
	if (err == EACCES || err == EPERM)
		FAIL("perf_event_open not permitted here (" << errno_name(err)
							    << "): run as root or lower kernel.perf_event_paranoid");
	auto src = make_pmu_source({false, false});
	SourceContext ctx;
	ctx.root = fixture("kvm-guest");
	Snapshot s1, s2;
	src->collect(ctx, s1);
	src->collect(ctx, s2);

	for (const char *id : {"mem.imc_read_bps", "mem.imc_write_bps", "mem.imc_bps"}) {
		const auto *imc = find_note(s2, id);
		REQUIRE(imc);
		CHECK(imc->reason == "no uncore memory-controller PMU (uncore_imc/amd_umc/amd_df) on this host");
	}
	if (err) {
		for (const char *id : {"cpu.ipc", "cpu.stall_ratio", "cpu.l2_mpki", "cpu.itlb_mpki"}) {
			const auto *n = find_note(s2, id);
			REQUIRE(n);
			CHECK(n->scope == "system");
			// The fixture's cpuinfo has the hypervisor flag.
			CHECK(n->reason == "no hardware PMU: running under a hypervisor (perf cycles: " + errno_name(err) + ")");
		}
		CHECK(s2.counter(series::kPmuCycles, "system") == nullptr);
	} else {
		// A real PMU: counts per CPU and their sum, growing.
		const auto *c1 = s1.counter(series::kPmuCycles, "system");
		const auto *c2 = s2.counter(series::kPmuCycles, "system");
		REQUIRE(c1);
		REQUIRE(c2);
		CHECK(c2->value > c1->value);
		CHECK(s2.counter(series::kPmuInstructions, "cpu:0"));
	}
}

TEST_CASE("PMU source with uncore PMUs this kernel lacks reports the open error", "[source_pmu]")
{
	auto src = make_pmu_source({false, false});
	SourceContext ctx;
	ctx.root = fixture("skylake-sp");
	Snapshot s;
	src->collect(ctx, s);
	const auto *n = find_note(s, "mem.imc_write_bps");
	if (n) {
		CHECK_THAT(n->reason, Catch::StartsWith("uncore uncore_imc: perf_event_open uncore_imc_"));
	} else {
		// This kernel has PMUs of those dynamic types: counts per socket.
		CHECK(s.counter(series::kImcCasReads, "socket:0"));
		CHECK(s.counter(series::kImcCasReads, "socket:1"));
		CHECK(s.counter(series::kImcCasReads, "system"));
	}
}

TEST_CASE("default kmod events: the cpu.* set, or software events without a core PMU", "[source_pmu]")
{
	bool software = true;
	PmuDevices skx(fixture("skylake-sp"));
	auto ev = default_kmod_events(skx, read_cpu_identity(fixture("skylake-sp")), &software);
	CHECK_FALSE(software);
	REQUIRE(ev.size() == 11);
	CHECK(ev[0].name == "cycles");
	CHECK(ev[2].name == "stall-cycles");
	CHECK(ev[2].pmu_type == 4);
	CHECK(ev[2].config == 0x018002c2); // UOPS_RETIRED.STALLS
	for (const auto &e : ev) {
		CHECK(e.cpu == HWSIG_EVENT_ALL_CPUS);
		CHECK(e.name.size() < HWSIG_EVENT_NAME_MAX);
	}

	PmuDevices guest(fixture("kvm-guest"));
	ev = default_kmod_events(guest, read_cpu_identity(fixture("kvm-guest")), &software);
	CHECK(software);
	REQUIRE(ev.size() == 4);
	CHECK(ev[0].name == "task-clock");
	CHECK(ev[0].pmu_type == PERF_TYPE_SOFTWARE);
	CHECK(ev[0].config == PERF_COUNT_SW_TASK_CLOCK);
	CHECK(ev[1].config == PERF_COUNT_SW_CONTEXT_SWITCHES);
}

TEST_CASE("no_pmu_reason wording", "[source_pmu]")
{
	CpuIdentity bare;
	CHECK(no_pmu_reason(bare, ENOENT) == "no hardware PMU (perf cycles: ENOENT)");
	bare.hypervisor = true;
	CHECK(no_pmu_reason(bare, EOPNOTSUPP) == "no hardware PMU: running under a hypervisor (perf cycles: EOPNOTSUPP)");
	CHECK(no_pmu_reason(bare, ENOENT, "hwsig.ko") ==
	      "no hardware PMU: running under a hypervisor (hwsig.ko cycles: ENOENT)");
}

TEST_CASE("kmod backend: newest record per CPU becomes scaled counters, generations never mix", "[source_pmu]")
{
	hwsig::testing::RingWriter w(2, 8);
	for (int i = 0; i < 5; i++)
		w.write(0);
	for (int i = 0; i < 3; i++)
		w.write(1);
	w.begin(1); // a torn record on cpu 1 must not hide the complete one
	RingReader reader(w.base(), w.length(), RingReader::Start::Newest);
	// valid_mask is 0x7: event 3 is never valid, event 1 maps to no series.
	const std::vector<std::string> series_of = {series::kPmuCycles, "", series::kPmuInstructions,
						    series::kPmuBranches};
	ScaledCounters counters;
	Snapshot snap;
	add_ring_counters(reader, series_of, counters, snap);

	// The first read of a counter is one interval: from its start.
	auto expect = [](unsigned cpu, std::uint64_t idx, unsigned ev) {
		const hwsig_record r = hwsig::testing::RingWriter::expected(cpu, idx);
		return *scale_interval(r.values[ev], r.time_enabled[ev], r.time_running[ev]);
	};
	const double c0 = expect(0, 4, 0), c1 = expect(1, 2, 0), i0 = expect(0, 4, 2), i1 = expect(1, 2, 2);
	const auto *cy0 = snap.counter(series::kPmuCycles, "cpu:0");
	const auto *cy1 = snap.counter(series::kPmuCycles, "cpu:1");
	const auto *cys = snap.counter(series::kPmuCycles, "system");
	REQUIRE(cy0);
	REQUIRE(cy1);
	REQUIRE(cys);
	const hwsig_record r04 = hwsig::testing::RingWriter::expected(0, 4);
	CHECK(cy0->value == Approx(c0));
	CHECK(cy0->value == Approx(double(r04.values[0]) * 500000000.0 / 250000000.0));
	CHECK(cy0->mux.raw == double(r04.values[0]));
	CHECK(cy0->mux.enabled_ns == 500000000.0);
	CHECK(cy0->mux.running_ns == 250000000.0);
	CHECK(cy1->value == Approx(c1));
	CHECK(cys->value == Approx(c0 + c1));
	CHECK(cys->mux.enabled_ns == 500000000.0 + 300000000.0);
	CHECK(snap.counter(series::kPmuInstructions, "system")->value == Approx(i0 + i1));
	CHECK(snap.counter(series::kPmuBranches, "system") == nullptr);
	CHECK(snap.counters().size() == 2);

	// The next record of cpu 0 is scaled by its own interval's times.
	w.write(0);
	Snapshot next;
	add_ring_counters(reader, series_of, counters, next);
	const hwsig_record r05 = hwsig::testing::RingWriter::expected(0, 5);
	REQUIRE(next.counter(series::kPmuCycles, "cpu:0"));
	CHECK(next.counter(series::kPmuCycles, "cpu:0")->value - cy0->value ==
	      Approx(*scale_interval(r05.values[0] - r04.values[0], r05.time_enabled[0] - r04.time_enabled[0],
				     r05.time_running[0] - r04.time_running[0])));

	// A new configuration: the rings' records are of the old generation.
	w.control()->config_generation = 2;
	REQUIRE(reader.refresh());
	Snapshot after;
	add_ring_counters(reader, series_of, counters, after);
	// No record of it is read: no CPU has a value, and the system sums
	// stay where they were (the backend clears its counters when it
	// takes the new configuration on, init()).
	CHECK_FALSE(after.counter(series::kPmuCycles, "cpu:0"));
	CHECK_FALSE(after.counter(series::kPmuCycles, "cpu:1"));
	REQUIRE(after.counter(series::kPmuCycles, "system"));
	CHECK(after.counter(series::kPmuCycles, "system")->value ==
	      Approx(next.counter(series::kPmuCycles, "system")->value));
	counters.clear();
	Snapshot cleared;
	add_ring_counters(reader, series_of, counters, cleared);
	CHECK(cleared.counters().empty());
}
