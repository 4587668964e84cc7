// /proc/vmstat and node*/numastat parsers and the NUMA source.
#include <catch2/catch.hpp>

#include "hwsig/series.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

TEST_CASE("vmstat: captured debian12 host", "[procfs][vmstat]")
{
	auto kv = parse_vmstat(fixture_text("debian12-host", "/proc/vmstat"));
	REQUIRE(kv.error.empty());
	CHECK(kv.values.size() == 192);
	CHECK(kv.values.at("numa_local") == 4339086u);
	CHECK(kv.values.at("numa_other") == 0u);
	CHECK(kv.values.at("pgmigrate_success") == 0u);
	CHECK(kv.values.at("numa_pages_migrated") == 0u);
	CHECK(kv.values.at("thp_fault_alloc") == 78u);
	CHECK(kv.values.at("thp_fault_fallback") == 0u);
}

TEST_CASE("vmstat: garbage is an error", "[procfs][vmstat]")
{
	auto expect_error = [](std::string_view text, std::string_view fragment) {
		auto kv = parse_vmstat(text);
		INFO(std::string(text));
		CHECK(kv.error.find(fragment) != std::string::npos);
		CHECK(kv.values.empty());
	};
	expect_error(fixture_text("garbled", "/proc/vmstat"),
		     "line 2: numa_local is not an unsigned number: '12x4'");
	expect_error("", "empty");
	expect_error("a 1\na 2\n", "line 2: a listed twice");
	expect_error("a 1 2\n", "expected 'name value', got 3 fields");
	expect_error("pgfault\n", "got 1 fields");
	expect_error("a-b 1\n", "bad name 'a-b'");
	expect_error("a 18446744073709551616\n", "not an unsigned number");
	expect_error("a +1\n", "'+1'");
}

TEST_CASE("numastat: captured host and hand-made nodes", "[procfs][numastat]")
{
	auto host = parse_numastat(fixture_text("debian12-host", "/sys/devices/system/node/node0/numastat"));
	REQUIRE(host.error.empty());
	CHECK(host.local_node == 4345568u);
	CHECK(host.other_node == 0u);
	for (unsigned k = 0; k < 8; ++k) {
		auto st = parse_numastat(
			fixture_text("xeon-2s-256cpu-8node", "/sys/devices/system/node/node" + std::to_string(k) + "/numastat"));
		REQUIRE(st.error.empty());
		CHECK(st.local_node == 1000000u * (k + 1));
		CHECK(st.other_node == 10000u * (k + 1));
	}
}

TEST_CASE("numastat: garbage and missing fields", "[procfs][numastat]")
{
	CHECK(parse_numastat(fixture_text("garbled", "/sys/devices/system/node/node0/numastat")).error ==
	      "line 5: local_node is not an unsigned number: '18446744073709551616'");
	CHECK(parse_numastat(fixture_text("garbled", "/sys/devices/system/node/node1/numastat")).error ==
	      "line 6: other_node is not an unsigned number: '-5'");
	CHECK(parse_numastat("numa_hit 5\nlocal_node 5\n").error == "no other_node");
	CHECK(parse_numastat("other_node 5\n").error == "no local_node");
	CHECK(parse_numastat("").error == "empty");
}

TEST_CASE("numa source: captured host", "[procfs][numa][source]")
{
	auto src = make_numa_source();
	auto snap = collect(*src, fixture("debian12-host"));
	CHECK(snap.unavailable().empty());
	CHECK(counter(snap, series::kNumaLocal, "node:0") == 4345568.0);
	CHECK(counter(snap, series::kNumaOther, "node:0") == 0.0);
	CHECK(counter(snap, series::kNumaLocal, "system") == 4345568.0);
	CHECK(counter(snap, series::kPgmigrateSuccess, "system") == 0.0);
	CHECK(counter(snap, series::kNumaPagesMigrated, "system") == 0.0);
	CHECK(counter(snap, series::kThpFaultAlloc, "system") == 78.0);
	CHECK(counter(snap, series::kThpFaultFallback, "system") == 0.0);
	CHECK(counter(snap, series::kNumaHit, "node:0") == 4345568.0);
	CHECK(counter(snap, series::kNumaForeign, "system") == 0.0);
	CHECK(series_count(snap) == 12);
	CHECK(snap.counters().at(series::kNumaLocal).source == "sysfs");
}

TEST_CASE("numa source: 8 and 4 nodes, system sums the nodes", "[procfs][numa][source]")
{
	auto src = make_numa_source();
	SECTION("xeon, 8 nodes")
	{
		auto snap = collect(*src, fixture("xeon-2s-256cpu-8node"));
		CHECK(snap.unavailable().empty());
		for (unsigned k = 0; k < 8; ++k) {
			std::string scope = "node:" + std::to_string(k);
			CHECK(counter(snap, series::kNumaLocal, scope) == 1e6 * (k + 1));
			CHECK(counter(snap, series::kNumaOther, scope) == 1e4 * (k + 1));
		}
		CHECK(counter(snap, series::kNumaLocal, "system") == 36e6);
		CHECK(counter(snap, series::kNumaOther, "system") == 360e3);
		CHECK(counter(snap, series::kPgmigrateSuccess, "system") == 123456.0);
		CHECK(counter(snap, series::kNumaPagesMigrated, "system") == 23456.0);
		CHECK(counter(snap, series::kThpFaultAlloc, "system") == 80000.0);
		CHECK(counter(snap, series::kThpFaultFallback, "system") == 20000.0);
		CHECK(series_count(snap) == 4 * 9 + 4);
	}
	SECTION("amd, 4 nodes")
	{
		auto snap = collect(*src, fixture("amd-1s-64cpu-4node"));
		CHECK(snap.unavailable().empty());
		CHECK(counter(snap, series::kNumaLocal, "node:3") == 2750000.0);
		CHECK(counter(snap, series::kNumaOther, "node:3") == 12000.0);
		CHECK(counter(snap, series::kNumaLocal, "system") == 2000000.0 + 2250000 + 2500000 + 2750000);
		CHECK(counter(snap, series::kNumaOther, "system") == 3000.0 + 6000 + 9000 + 12000);
		CHECK_FALSE(counter(snap, series::kNumaLocal, "node:4"));
		CHECK(counter(snap, series::kPgmigrateSuccess, "system") == 777.0);
	}
}

TEST_CASE("numa source: missing and garbled files", "[procfs][numa][source]")
{
	auto src = make_numa_source();
	SECTION("missing")
	{
		auto snap = collect(*src, fixture("missing"));
		CHECK(note(snap, "mem.numa_remote_ratio", "system") ==
		      "no /sys/devices/system/node/node*, and /proc/vmstat missing");
		for (const char *id : {"mem.page_migrations_ps", "mem.numa_pages_migrated_ps", "mem.thp_fallback_ratio"})
			CHECK(note(snap, id, "system") == "/proc/vmstat missing");
		CHECK(series_count(snap) == 0);
	}
	SECTION("garbled: no node value, no system sum over the good ones")
	{
		auto snap = collect(*src, fixture("garbled"));
		CHECK(note(snap, "mem.numa_remote_ratio", "node:0") ==
		      "/sys/devices/system/node/node0/numastat garbled: line 5: local_node is not an unsigned "
		      "number: '18446744073709551616'");
		CHECK(note(snap, "mem.numa_remote_ratio", "node:1") ==
		      "/sys/devices/system/node/node1/numastat garbled: line 6: other_node is not an unsigned "
		      "number: '-5'");
		auto sys = note(snap, "mem.numa_remote_ratio", "system");
		REQUIRE(sys);
		CHECK(sys->rfind("needs every node; node:0: ", 0) == 0);
		CHECK(note(snap, "mem.page_migrations_ps", "system") ==
		      "/proc/vmstat garbled: line 2: numa_local is not an unsigned number: '12x4'");
		CHECK(series_count(snap) == 0);
	}
	SECTION("one node unreadable, the other fine")
	{
		TempTree t;
		t.put("sys/devices/system/node/node0/numastat", "local_node 10\nother_node 1\n");
		t.mkdir("sys/devices/system/node/node1");
		t.put("proc/vmstat", "pgmigrate_success 1\n");
		auto snap = collect(*src, t.root());
		CHECK(counter(snap, series::kNumaLocal, "node:0") == 10.0);
		CHECK(note(snap, "mem.numa_remote_ratio", "node:1") ==
		      "/sys/devices/system/node/node1/numastat missing");
		CHECK_FALSE(counter(snap, series::kNumaLocal, "system"));
		CHECK(note(snap, "mem.numa_remote_ratio", "system") ==
		      "needs every node; node:1: /sys/devices/system/node/node1/numastat missing");
	}
}

TEST_CASE("numa source: fallbacks and kernels without the counters", "[procfs][numa][source]")
{
	auto src = make_numa_source();
	SECTION("no node directory: /proc/vmstat numa_local/numa_other")
	{
		TempTree t;
		t.put("proc/vmstat", "numa_hit 1012\nnuma_foreign 13\nnuma_local 1000\nnuma_other 25\n"
				     "pgmigrate_success 9\nnuma_pages_migrated 4\nthp_fault_alloc 3\nthp_fault_fallback 2\n");
		auto snap = collect(*src, t.root());
		CHECK(snap.unavailable().empty());
		CHECK(counter(snap, series::kNumaLocal, "system") == 1000.0);
		CHECK(counter(snap, series::kNumaOther, "system") == 25.0);
		CHECK(counter(snap, series::kNumaHit, "system") == 1012.0);
		CHECK(counter(snap, series::kNumaForeign, "system") == 13.0);
		CHECK(snap.counters().at(series::kNumaLocal).source == "procfs");
		CHECK(series_count(snap) == 8);
		// Without numa_foreign only the fallback ratio is unavailable.
		TempTree u;
		u.put("proc/vmstat", "numa_hit 12\nnuma_local 1000\nnuma_other 25\n");
		auto without = collect(*src, u.root());
		CHECK(note(without, "mem.numa_fallback_ratio", "system") ==
		      "no /sys/devices/system/node/node* and no numa_hit/numa_foreign in /proc/vmstat");
		CHECK_FALSE(note(without, "mem.numa_remote_ratio", "system"));
	}
	SECTION("no NUMA, no migration, no NUMA balancing, no THP")
	{
		TempTree t;
		t.put("proc/vmstat", "nr_free_pages 5\npgfault 7\n");
		auto snap = collect(*src, t.root());
		CHECK(note(snap, "mem.numa_remote_ratio", "system") ==
		      "no /sys/devices/system/node/node* and no numa_local/numa_other in /proc/vmstat "
		      "(kernel without CONFIG_NUMA)");
		CHECK(note(snap, "mem.numa_fallback_ratio", "system") ==
		      "no /sys/devices/system/node/node* and no numa_local/numa_other in /proc/vmstat "
		      "(kernel without CONFIG_NUMA)");
		CHECK(note(snap, "mem.page_migrations_ps", "system") ==
		      "/proc/vmstat has no pgmigrate_success (kernel without CONFIG_MIGRATION)");
		CHECK(note(snap, "mem.numa_pages_migrated_ps", "system") ==
		      "/proc/vmstat has no numa_pages_migrated (kernel without CONFIG_NUMA_BALANCING)");
		CHECK(note(snap, "mem.thp_fallback_ratio", "system") ==
		      "/proc/vmstat has no thp_fault_alloc (kernel without CONFIG_TRANSPARENT_HUGEPAGE)");
		CHECK(series_count(snap) == 0);
	}
	SECTION("one THP counter alone is not paired with a zero")
	{
		TempTree t;
		t.put("proc/vmstat", "numa_local 1\nnuma_other 1\nthp_fault_alloc 3\n");
		auto snap = collect(*src, t.root());
		CHECK_FALSE(counter(snap, series::kThpFaultAlloc, "system"));
		CHECK_FALSE(counter(snap, series::kThpFaultFallback, "system"));
		CHECK(note(snap, "mem.thp_fallback_ratio", "system") ==
		      "/proc/vmstat has no thp_fault_fallback (kernel without CONFIG_TRANSPARENT_HUGEPAGE)");
	}
}

TEST_CASE("numa source end to end: remote ratio, migrations, THP fallback", "[procfs][numa][derive]")
{
	auto src = make_numa_source();
	auto iv = derive_between(*src, "xeon-2s-256cpu-8node", "xeon-2s-256cpu-8node-t1");
	// Node k allocated 10000 - 1000k local and 1000k remote pages.
	CHECK(metric_count(iv, "mem.numa_remote_ratio") == 9);
	for (unsigned k = 0; k < 8; ++k) {
		const Metric *m = metric(iv, "mem.numa_remote_ratio", "node:" + std::to_string(k));
		REQUIRE(m);
		CHECK(m->value == Approx(k / 10.0).margin(1e-12));
	}
	const Metric *sys = metric(iv, "mem.numa_remote_ratio", "system");
	REQUIRE(sys);
	CHECK(sys->value == Approx(28000.0 / 80000.0));
	// 5000 pages migrated (3000 by NUMA balancing) in 2 s.
	REQUIRE(metric(iv, "mem.page_migrations_ps", "system"));
	CHECK(metric(iv, "mem.page_migrations_ps", "system")->value == Approx(2500.0));
	REQUIRE(metric(iv, "mem.numa_pages_migrated_ps", "system"));
	CHECK(metric(iv, "mem.numa_pages_migrated_ps", "system")->value == Approx(1500.0));
	// 900 THP faults succeeded, 100 fell back.
	REQUIRE(metric(iv, "mem.thp_fallback_ratio", "system"));
	CHECK(metric(iv, "mem.thp_fallback_ratio", "system")->value == Approx(0.1));
}

// vm.numa_stat = 0: the kernel zeroes the NUMA counters and stops counting.
// The ratio is unavailable with that reason, not "no allocations"; the
// migration and THP counters (vm events, counted regardless) stay.
TEST_CASE("numa source: vm.numa_stat = 0 says so", "[procfs][numa][source]")
{
	TempTree t;
	std::filesystem::copy(fixture("xeon-2s-256cpu-8node"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	t.put("proc/sys/vm/numa_stat", "0\n");
	auto src = make_numa_source();
	auto snap = collect(*src, t.root());
	const std::string why =
		"vm.numa_stat = 0: the kernel does not count NUMA allocations (sysctl vm.numa_stat=1 counts them)";
	CHECK(note(snap, "mem.numa_remote_ratio", "system") == why);
	CHECK(note(snap, "mem.numa_remote_ratio", "node:*") == why);
	CHECK(note(snap, "mem.numa_fallback_ratio", "system") == why);
	CHECK(note(snap, "mem.numa_fallback_ratio", "node:*") == why);
	CHECK_FALSE(counter(snap, series::kNumaLocal, "node:0"));
	CHECK_FALSE(counter(snap, series::kNumaOther, "system"));
	CHECK(counter(snap, series::kPgmigrateSuccess, "system") == 123456.0);
	// Turned on (1), and off again: the same source sees each switch at
	// its next collect (it was read every 5 s: three intervals said "off"
	// after it was on, and the zeroed counters read as a reset).
	t.put("proc/sys/vm/numa_stat", "1\n");
	auto snap_on = collect(*src, t.root());
	CHECK(counter(snap_on, series::kNumaLocal, "node:0") == 1e6);
	CHECK_FALSE(note(snap_on, "mem.numa_remote_ratio", "system"));
	t.put("proc/sys/vm/numa_stat", "0\n");
	auto snap_off = collect(*src, t.root());
	CHECK(note(snap_off, "mem.numa_remote_ratio", "system") == why);
	CHECK_FALSE(counter(snap_off, series::kNumaLocal, "node:0"));
}

// Allocations counted by the node they preferred: node k preferred
// 1000 * (10 - k) + 100 * k pages in the interval and got 100 * k of them
// from another node. numa_remote_ratio cannot say this (it is keyed by the
// node that gave the memory).
TEST_CASE("numa source end to end: fallback ratio by preferred node", "[procfs][numa][derive]")
{
	TempTree t0, t1;
	const auto opts = std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks;
	std::filesystem::copy(fixture("xeon-2s-256cpu-8node"), t0.root(), opts);
	std::filesystem::copy(fixture("xeon-2s-256cpu-8node-t1"), t1.root(), opts);
	auto numastat = [](std::uint64_t hit, std::uint64_t foreign) {
		return "numa_hit " + std::to_string(hit) + "\nnuma_miss 0\nnuma_foreign " + std::to_string(foreign) +
		       "\ninterleave_hit 0\nlocal_node " + std::to_string(hit) + "\nother_node 0\n";
	};
	double hits = 0, foreigns = 0;
	for (unsigned k = 0; k < 8; ++k) {
		const std::string file = "sys/devices/system/node/node" + std::to_string(k) + "/numastat";
		t0.put(file, numastat(1000000, 50));
		t1.put(file, numastat(1000000 + 1000 * (10 - k), 50 + 100 * k));
		hits += 1000.0 * (10 - k);
		foreigns += 100.0 * k;
	}
	auto src = make_numa_source();
	auto a = collect(*src, t0.root(), nullptr, 10'000'000'000ull);
	auto b = collect(*src, t1.root(), nullptr, 12'000'000'000ull);
	auto iv = checked_derive(a, b, src->provides());
	CHECK(metric_count(iv, "mem.numa_fallback_ratio") == 9);
	for (unsigned k = 0; k < 8; ++k) {
		const Metric *m = metric(iv, "mem.numa_fallback_ratio", "node:" + std::to_string(k));
		REQUIRE(m);
		CHECK(m->value == Approx(100.0 * k / (1000.0 * (10 - k) + 100.0 * k)).margin(1e-12));
	}
	const Metric *sys = metric(iv, "mem.numa_fallback_ratio", "system");
	REQUIRE(sys);
	CHECK(sys->value == Approx(foreigns / (hits + foreigns)));
	// A node without the two counters: that node and the system say why.
	t1.put("sys/devices/system/node/node3/numastat", "local_node 5\nother_node 0\n");
	auto c = collect(*src, t1.root(), nullptr, 14'000'000'000ull);
	CHECK(note(c, "mem.numa_fallback_ratio", "node:3") == "numastat has no numa_hit/numa_foreign");
	CHECK(note(c, "mem.numa_fallback_ratio", "system") ==
	      "needs every node; node:3: numastat has no numa_hit/numa_foreign");
	CHECK(counter(c, series::kNumaLocal, "node:3") == 5.0);
}
