// hwsigd -> hwsigctl: a snapshot crosses the local socket unchanged, and a
// malformed one is refused with the line that is wrong.
#include <catch2/catch.hpp>
#include <cstring>

#include "hwsig/error.h"
#include "hwsig/snapshot_wire.h"

using hwsig::Histogram;
using hwsig::UnavailableCode;
using hwsig::UnavailableNote;

namespace {

hwsig::Snapshot sample()
{
	hwsig::Snapshot s;
	s.mono_ns = 123456789012345ull;
	s.realtime_ns = 1795462893733518768ull;
	s.add_counter("pmu.cycles", "cpu:3", hwsig::CounterPoint{1e15 + 0.25, {4.375e14 + 0.5, 1e12 + 1, 4.375e11, 3.5, 2}},
		      "kmod");
	s.add_counter("stat.total", "system", 118514, "procfs");
	s.add_gauge("thermal.headroom_c", "zone:x86_pkg_temp", -1.5, "sysfs");
	Histogram h;
	h.layout = Histogram::Layout::LinearLog2;
	h.counts = {0, 7, 0, 18446744073709551615ull};
	s.add_histogram("bpf.vhost_depth", "vq:4242:0:rx", h, "bpf");
	s.add_cpu_counts("bpf.vm_wait_behind_cpus", "vm:web\t01/culprit:vm:batch7", {{3, 2}, {5, 18446744073709551615ull}},
			 "bpf");
	s.add_unavailable("cpu.ipc", "system", UnavailableCode::unsupported, "no PMU\twith a tab\nand a newline \\ backslash");
	return s;
}

} // namespace

TEST_CASE("a snapshot crosses the socket bit for bit", "[wire]")
{
	hwsig::Vm vm;
	vm.pid = 4242;
	vm.name = "web\t\"01\"\\";
	vm.vcpu_tids = {4243, 4244};
	vm.vhost_tids = {4250};
	vm.taps = {"vnet0", "vnet1"};
	auto text = hwsig::encode_snapshot(sample(), {vm}, {"cpu.ipc", "sched.steal_ratio"});
	auto got = hwsig::decode_snapshot(text);
	CHECK(got.snapshot.mono_ns == 123456789012345ull);
	CHECK(got.snapshot.realtime_ns == 1795462893733518768ull);
	const auto *c = got.snapshot.counter("pmu.cycles", "cpu:3");
	REQUIRE(c);
	CHECK(c->value == 1e15 + 0.25); // exact: %.17g
	CHECK(c->mux.raw == 4.375e14 + 0.5);
	CHECK(c->mux.enabled_ns == 1e12 + 1);
	CHECK(c->mux.running_ns == 4.375e11);
	CHECK(c->mux.uncounted_ns == 3.5);
	CHECK(c->mux.unread == 2);
	REQUIRE(got.snapshot.counter("stat.total", "system"));
	CHECK(got.snapshot.counter("stat.total", "system")->mux.empty());
	CHECK(got.snapshot.counters().at("pmu.cycles").source == "kmod");
	REQUIRE(got.snapshot.gauge("thermal.headroom_c", "zone:x86_pkg_temp"));
	CHECK(*got.snapshot.gauge("thermal.headroom_c", "zone:x86_pkg_temp") == -1.5);
	const auto *h = got.snapshot.histogram("bpf.vhost_depth", "vq:4242:0:rx");
	REQUIRE(h);
	CHECK(h->layout == Histogram::Layout::LinearLog2);
	CHECK(h->counts == std::vector<std::uint64_t>{0, 7, 0, 18446744073709551615ull});
	const auto *where = got.snapshot.cpu_count("bpf.vm_wait_behind_cpus", "vm:web\t01/culprit:vm:batch7");
	REQUIRE(where);
	CHECK(*where == hwsig::CpuCounts{{3, 2}, {5, 18446744073709551615ull}});
	CHECK(got.snapshot.cpu_counts().at("bpf.vm_wait_behind_cpus").source == "bpf");
	REQUIRE(got.snapshot.unavailable().size() == 1);
	CHECK(got.snapshot.unavailable()[0].reason == "no PMU\twith a tab\nand a newline \\ backslash");
	CHECK(got.snapshot.unavailable()[0].code == UnavailableCode::unsupported);
	REQUIRE(got.vms.size() == 1);
	CHECK(got.vms[0].name == "web\t\"01\"\\");
	CHECK(got.vms[0].pid == 4242);
	CHECK(got.vms[0].vcpu_tids == std::vector<int>{4243, 4244});
	CHECK(got.vms[0].vhost_tids == std::vector<int>{4250});
	CHECK(got.vms[0].taps == std::vector<std::string>{"vnet0", "vnet1"});
	CHECK(got.claimed_ids == std::vector<std::string>{"cpu.ipc", "sched.steal_ratio"});
	// And the text itself is stable.
	CHECK(hwsig::encode_snapshot(got.snapshot, got.vms, got.claimed_ids) == text);
}

TEST_CASE("a malformed snapshot is refused, naming the line", "[wire]")
{
	const std::string good = hwsig::encode_snapshot(sample(), {}, {"cpu.ipc"});
	auto refused = [](const std::string &text, const char *want) {
		try {
			hwsig::decode_snapshot(text);
		} catch (const hwsig::Error &e) {
			INFO(e.what());
			CHECK(std::strstr(e.what(), want) != nullptr);
			return true;
		}
		return false;
	};
	CHECK(refused("", "empty"));
	CHECK(refused("HTTP/1.1 200 OK\n", "line 1: not a hwsigd snapshot"));
	CHECK(refused("hwsig-snapshot\t7\nend\n", "version 7, this hwsigctl reads 1 to 6"));
	CHECK(refused("hwsig-snapshot\t0\nend\n", "version 0, this hwsigctl reads 1 to 6"));
	CHECK(refused("hwsig-snapshot\t5\nP\tx\tvm:a/culprit:idle\tbpf\t3:1\nend\n", "unknown record 'P'"));
	CHECK(refused("hwsig-snapshot\t6\nP\tx\tvm:a/culprit:idle\tbpf\nend\n", "'P' needs 4 fields, has 3"));
	CHECK(refused("hwsig-snapshot\t6\nP\tx\tvm:a/culprit:idle\tbpf\t3\nend\n", "not CPU:COUNT: '3'"));
	CHECK(refused("hwsig-snapshot\t6\nP\tx\tvm:a/culprit:idle\tbpf\t5:1,3:1\nend\n", "CPUs not ascending"));
	CHECK(refused("hwsig-snapshot\t6\nP\tx\tvm:a/culprit:idle\tbpf\t3:1,3:2\nend\n", "CPUs not ascending"));
	CHECK(refused("hwsig-snapshot\t6\nP\tx\tvm:a/culprit:idle\tbpf\t3:-1\nend\n", "not an unsigned integer"));
	CHECK(refused("hwsig-snapshot\t6\nP\tx\tvm:a/culprit:idle\tbpf\t99999:1\nend\n", "CPU out of range"));
	CHECK(refused("hwsig-snapshot\t5\nM\tx\tsystem\tkmod\t1\t1\t1\t1\t0\nend\n", "'M' needs 9 fields, has 8"));
	CHECK(refused("hwsig-snapshot\t4\nU\tcpu.ipc\tsystem\tno PMU\nend\n", "line 2: 'U' needs 4 fields, has 3"));
	CHECK(refused("hwsig-snapshot\t4\nU\tcpu.ipc\tsystem\tgone\tno PMU\nend\n",
		      "line 2: unknown unavailable code 'gone'"));
	CHECK(refused(good.substr(0, good.size() - 4), "truncated (no 'end')"));
	CHECK(refused(good.substr(0, good.size() - 1), "truncated (no newline)"));
	CHECK(refused(good + "C\tx\tsystem\tkmod\t1\t1\n", "data after 'end'"));
	CHECK(refused("hwsig-snapshot\t1\nC\tx\tsystem\tkmod\tnan\t1\nend\n", "line 2: not a finite number"));
	CHECK(refused("hwsig-snapshot\t1\nC\tx\tsystem\tkmod\t1\nend\n", "line 2: 'C' needs 5 fields, has 4"));
	CHECK(refused("hwsig-snapshot\t2\nC\tx\tsystem\tkmod\t1\t1\nend\n", "line 2: 'C' needs 4 fields, has 5"));
	CHECK(refused("hwsig-snapshot\t2\nM\tx\tsystem\tkmod\t1\t1\t1\t1\nend\n", "'M' needs 8 fields, has 7"));
	CHECK(refused("hwsig-snapshot\t2\nM\tx\tsystem\tkmod\t1\t1\t1\tinf\t0\nend\n", "not a finite number"));
	CHECK(refused("hwsig-snapshot\t1\nM\tx\tsystem\tkmod\t1\t1\t1\t1\t0\nend\n", "unknown record 'M'"));
	CHECK(refused("hwsig-snapshot\t1\nH\tx\tsystem\tbpf\t9\t1\nend\n", "unknown histogram layout 9"));
	CHECK(refused("hwsig-snapshot\t1\nH\tx\tsystem\tbpf\t0\t1,-2\nend\n", "not an unsigned integer: '-2'"));
	CHECK(refused("hwsig-snapshot\t1\nG\tx\\q\tsystem\tsysfs\t1\nend\n", "unknown escape"));
	CHECK(refused("hwsig-snapshot\t1\nZ\tx\nend\n", "unknown record 'Z'"));
	CHECK(refused("hwsig-snapshot\t1\ntime\t-1\t0\nend\n", "not an unsigned integer"));
}

TEST_CASE("counts_from_zero crosses the socket (a disk first seen in interval 1 keeps its counts)", "[wire]")
{
	hwsig::Snapshot s = sample();
	s.set_counts_from_zero("bpf.io_reads");
	s.set_counts_from_zero("bpf.io_latency_us");
	auto got = hwsig::decode_snapshot(hwsig::encode_snapshot(s, {}, {}));
	CHECK(got.snapshot.counts_from_zero("bpf.io_reads"));
	CHECK(got.snapshot.counts_from_zero("bpf.io_latency_us"));
	CHECK_FALSE(got.snapshot.counts_from_zero("stat.total"));
	CHECK(got.snapshot.from_zero().size() == 2);
	CHECK_THROWS_WITH(hwsig::decode_snapshot("hwsig-snapshot\t1\nzero\tx\ty\nend\n"),
			  Catch::Contains("'zero' needs 1 fields, has 2"));
}

TEST_CASE("a version 1 snapshot (an older hwsigd, its dumps) is still read", "[wire]")
{
	// Version 1 counters carried a lifetime running fraction: read as plain
	// counters, the values as they were.
	auto got = hwsig::decode_snapshot("hwsig-snapshot\t1\ntime\t100\t200\nC\tpmu.cycles\tsystem\tkmod\t1000.5\t0.5\n"
					  "C\tstat.total\tsystem\tprocfs\t7\t1\nend\n");
	const auto *c = got.snapshot.counter("pmu.cycles", "system");
	REQUIRE(c);
	CHECK(c->value == 1000.5);
	CHECK(c->mux.empty());
	REQUIRE(got.snapshot.counter("stat.total", "system"));
	CHECK(got.snapshot.counter("stat.total", "system")->value == 7);
	// and written back as the current version
	CHECK(hwsig::encode_snapshot(got.snapshot, {}, {}).rfind("hwsig-snapshot\t6\n", 0) == 0);
	CHECK(got.snapshot.cpu_counts().empty());
}

TEST_CASE("a version 3 snapshot's notes, without codes, are read as 'unknown'", "[wire]")
{
	auto got = hwsig::decode_snapshot("hwsig-snapshot\t3\ntime\t100\t200\n"
					  "U\tio.pattern_entropy\tdev:sda\ttoo few requests (3 in the interval, 16 needed)\n"
					  "end\n");
	REQUIRE(got.snapshot.unavailable().size() == 1);
	const UnavailableNote &n = got.snapshot.unavailable()[0];
	CHECK(n.id == "io.pattern_entropy");
	CHECK(n.scope == "dev:sda");
	CHECK(n.code == UnavailableCode::unknown);
	CHECK(n.reason == "too few requests (3 in the interval, 16 needed)");
	// Written back with that code, which reads back the same.
	const std::string again = hwsig::encode_snapshot(got.snapshot, {}, {});
	CHECK(again.find("U\tio.pattern_entropy\tdev:sda\tunknown\ttoo few requests (3 in the interval, 16 "
			 "needed)\n") != std::string::npos);
	CHECK(hwsig::decode_snapshot(again).snapshot.unavailable()[0].code == UnavailableCode::unknown);
}

TEST_CASE("CPU counts cross the socket as P lines, ascending, with their read stamp", "[wire]")
{
	hwsig::Snapshot s;
	s.mono_ns = 1000;
	s.stamp_readings(900);
	s.add_cpu_counts("bpf.vm_wait_behind_cpus", "vm:a/culprit:host:other", {{0, 1}, {63, 4}, {64, 2}, {511, 9}},
			 "bpf");
	s.add_cpu_counts("bpf.vm_wait_behind_cpus", "vm:a/culprit:idle", {}, "bpf");
	s.set_counts_from_zero("bpf.vm_wait_behind_cpus");
	const std::string text = hwsig::encode_snapshot(s, {}, {});
	CHECK(text.find("P\tbpf.vm_wait_behind_cpus\tvm:a/culprit:host:other\tbpf\t0:1,63:4,64:2,511:9\n") !=
	      std::string::npos);
	CHECK(text.find("P\tbpf.vm_wait_behind_cpus\tvm:a/culprit:idle\tbpf\t\n") != std::string::npos);
	auto got = hwsig::decode_snapshot(text);
	REQUIRE(got.snapshot.cpu_count("bpf.vm_wait_behind_cpus", "vm:a/culprit:host:other"));
	CHECK(*got.snapshot.cpu_count("bpf.vm_wait_behind_cpus", "vm:a/culprit:host:other") ==
	      hwsig::CpuCounts{{0, 1}, {63, 4}, {64, 2}, {511, 9}});
	REQUIRE(got.snapshot.cpu_count("bpf.vm_wait_behind_cpus", "vm:a/culprit:idle"));
	CHECK(got.snapshot.cpu_count("bpf.vm_wait_behind_cpus", "vm:a/culprit:idle")->empty());
	CHECK(got.snapshot.read_ns("bpf.vm_wait_behind_cpus") == 900);
	CHECK(got.snapshot.counts_from_zero("bpf.vm_wait_behind_cpus"));
	CHECK(hwsig::encode_snapshot(got.snapshot, {}, {}) == text);
}
