// replay --info's text (render_dump_info) of a dump this test writes and
// reads back from a file, with rings and without.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "hwsig/dump_file.h"
#include "hwsig/dump_info.h"
#include "test_procfs_tree.h"

using namespace hwsig;

namespace {

SharedSnapshot snapshot_at(std::uint64_t mono_ns)
{
	SharedSnapshot s;
	s.snapshot.mono_ns = mono_ns;
	s.snapshot.realtime_ns = 1'700'000'000'000'000'000ull + mono_ns;
	s.claimed_ids = {"cpu.ipc"};
	return s;
}

// Two CPUs' rings of one software-event configuration: CPU 0 with 2 of
// its 5 records lost, CPU 3 with all of its 2.
DumpRings two_rings()
{
	DumpRings r{.generation = 7,
		    .interval_ns = 10'000'000,
		    .ring_records = 8,
		    .running = true,
		    .status_written = 7,
		    .status_overwritten = 2,
		    .events = {{"cpu-clock", "software", "active 2/2"}},
		    .cpus = {}};
	auto cpu = [](std::uint32_t id, std::uint64_t head, std::uint64_t lost) {
		DumpRingCpu c;
		c.cpu = id;
		c.online = true;
		c.head = head;
		c.lost = lost;
		for (std::uint64_t seq = lost + 1; seq <= head; ++seq) {
			DumpRingRecord x;
			x.seq = seq;
			x.time_ns = 1'000'000'000 + seq * 10'000'000;
			x.valid_mask = 1;
			x.values = x.enabled = x.running = {seq * 10'000'000};
			c.records.push_back(x);
		}
		return c;
	};
	r.cpus = {cpu(0, 5, 2), cpu(3, 2, 0)};
	return r;
}

// d written to a file and read back, as replay reads it.
DumpContents through_file(const DumpContents &d)
{
	procfs_test::TempTree dir;
	const std::string path = dir.root() + "/test.hwsd";
	std::FILE *f = std::fopen(path.c_str(), "wb");
	REQUIRE(f);
	const std::string bytes = encode_dump(d);
	REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
	REQUIRE(std::fclose(f) == 0);
	return read_dump_file(path);
}

} // namespace

TEST_CASE("dump info: header, snapshot span, facts, PMU plan and rings in file order", "[dump][info]")
{
	DumpContents d;
	d.trigger = "rule: sched.runq_wait_p99_us > 5000";
	d.created_ns = 1'700'000'123'000'000'000ull;
	d.facts = {{"kernel", "6.18.0"}, {"cpus", "4"}};
	d.snapshots = {snapshot_at(1'000'000'000), snapshot_at(1'500'000'000), snapshot_at(2'000'000'000)};
	d.triggered_mono_ns = 1'500'000'000;
	d.pmu_plan = {{"pmu.cycles", "-", "-", "unavailable: no hardware PMU"},
		      {"pmu.task_clock", "task-clock", "software", "planned"}};
	d.rings = two_rings();
	CHECK(render_dump_info(through_file(d)) ==
	      "format\t2\n"
	      "trigger\trule: sched.runq_wait_p99_us > 5000\n"
	      "created_ns\t1700000123000000000\n"
	      "created\t2023-11-14 22:15:23 UTC\n"
	      "snapshots\t3\n"
	      "first_snapshot_mono_ns\t1000000000\n"
	      "last_snapshot_mono_ns\t2000000000\n"
	      "span\t1.000 s from the first snapshot to the last\n"
	      "triggered_mono_ns\t1500000000\n"
	      "triggered\t0.500 s before the last snapshot\n"
	      "kernel\t6.18.0\n"
	      "cpus\t4\n"
	      "pmu_plan\tpmu.cycles\t-\t-\tunavailable: no hardware PMU\n"
	      "pmu_plan\tpmu.task_clock\ttask-clock\tsoftware\tplanned\n"
	      "rings\tconfiguration 7, every 10000000 ns, 8 records per ring, running\n"
	      "ring_event\t0\tcpu-clock\tsoftware\tactive 2/2\n"
	      "ring_records\t5 records of 2 CPUs (0, 3), 2 lost of 7 written\n"
	      "module_status\t7 written, 2 overwritten\n");
}

TEST_CASE("dump info: no snapshots and no rings say so, with the writer's reason or without", "[dump][info]")
{
	DumpContents d;
	d.trigger = "SIGUSR1";
	d.created_ns = 5;
	d.rings_absent = "hwsig.ko is not loaded";
	CHECK(render_dump_info(through_file(d)) ==
	      "format\t2\ntrigger\tSIGUSR1\ncreated_ns\t5\ncreated\t1970-01-01 00:00:00 UTC\nsnapshots\t0\n"
	      "rings\tnone: hwsig.ko is not loaded\n");
	d.rings_absent.clear();
	CHECK(render_dump_info(through_file(d)).ends_with("\nrings\tnone: this dump does not hold them\n"));
}

TEST_CASE("dump_ring_cpus lists the CPUs with a ring, or none", "[dump][info]")
{
	CHECK(dump_ring_cpus(two_rings()) == "0, 3");
	CHECK(dump_ring_cpus(DumpRings{}) == "none");
}
