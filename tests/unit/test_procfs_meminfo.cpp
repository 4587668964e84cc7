// /proc/meminfo, hugetlb sysfs and THP parsers and the huge page source.
#include <catch2/catch.hpp>

#include "hwsig/series.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

namespace {

const char *const kUtil = "mem.hugepage_utilization";

std::optional<std::string> interval_note(const Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &u : iv.unavailable)
		if (u.id == id && u.scope == scope)
			return u.reason;
	return std::nullopt;
}

} // namespace

TEST_CASE("meminfo: captured debian12 host", "[procfs][meminfo]")
{
	auto mi = parse_meminfo(fixture_text("debian12-host", "/proc/meminfo"));
	REQUIRE(mi.error.empty());
	CHECK(mi.values.size() == 54);
	CHECK(mi.values.at("MemTotal").value == 24682416u);
	CHECK(mi.values.at("MemTotal").kb);
	CHECK(mi.values.at("Active(anon)").value == 1608u);
	CHECK(mi.values.at("AnonHugePages").value == 0u);
	CHECK(mi.values.at("HugePages_Total").value == 0u);
	CHECK_FALSE(mi.values.at("HugePages_Total").kb);
	CHECK(mi.values.at("Hugepagesize").value == 2048u);
	CHECK(mi.values.at("Hugepagesize").kb);
}

TEST_CASE("meminfo: hand-made 2-socket host", "[procfs][meminfo]")
{
	auto mi = parse_meminfo(fixture_text("xeon-2s-256cpu-8node", "/proc/meminfo"));
	REQUIRE(mi.error.empty());
	CHECK(mi.values.at("AnonHugePages").value == 4194304u);
	CHECK(mi.values.at("HugePages_Total").value == 8256u);
	CHECK(mi.values.at("HugePages_Free").value == 3584u);
	CHECK(mi.values.at("HugePages_Surp").value == 64u);
}

TEST_CASE("meminfo: garbage is an error", "[procfs][meminfo]")
{
	auto expect_error = [](std::string_view text, std::string_view fragment) {
		auto mi = parse_meminfo(text);
		INFO(std::string(text));
		CHECK(mi.error.find(fragment) != std::string::npos);
		CHECK(mi.values.empty());
	};
	expect_error(fixture_text("garbled", "/proc/meminfo"),
		     "line 2: AnonHugePages: expected 'value' or 'value kB', got '4096 MB'");
	expect_error("", "empty");
	expect_error("MemTotal 5 kB\n", "line 1: no ':' in 'MemTotal 5 kB'");
	expect_error("MemTotal: 5 kB\nMemTotal: 6 kB\n", "line 2: MemTotal listed twice");
	expect_error("Mem Total: 5 kB\n", "bad name 'Mem Total'");
	expect_error("MemTotal: abc kB\n", "MemTotal is not an unsigned number: 'abc'");
	expect_error("MemTotal:\n", "expected 'value' or 'value kB'");
	expect_error("MemTotal: 1 kB extra\n", "expected 'value' or 'value kB'");
}

TEST_CASE("hugepages directory names and THP mode", "[procfs][meminfo]")
{
	CHECK(parse_hugepage_dir_kb("hugepages-2048kB") == 2048u);
	CHECK(parse_hugepage_dir_kb("hugepages-1048576kB") == 1048576u);
	CHECK(parse_hugepage_dir_kb("hugepages-64kB") == 64u);
	for (std::string_view bad : {"hugepages-kB", "hugepages-0kB", "hugepages-2048", "hugepages-02048kB",
				     "hugepages--1kB", "hugepages-2048MB", "hugepages", "", "xhugepages-2048kB"})
		CHECK_FALSE(parse_hugepage_dir_kb(bad));

	CHECK(parse_thp_mode("always [madvise] never\n") == "madvise");
	CHECK(parse_thp_mode("[always] madvise never") == "always");
	CHECK(parse_thp_mode("always madvise [never]\n") == "never");
	CHECK(parse_thp_mode("always inherit madvise [never]") == "never");
	CHECK_FALSE(parse_thp_mode(fixture_text("garbled", "/sys/kernel/mm/transparent_hugepage/enabled")));
	CHECK_FALSE(parse_thp_mode("[always] [never]"));
	CHECK_FALSE(parse_thp_mode("[] never"));
	CHECK_FALSE(parse_thp_mode("[Always] never"));
	CHECK_FALSE(parse_thp_mode(""));
}

TEST_CASE("meminfo source: captured host (no pools reserved)", "[procfs][meminfo][source]")
{
	auto src = make_meminfo_source();
	auto snap = collect(*src, fixture("debian12-host"));
	for (const char *scope : {"hugepages:2048kB", "node:0/hugepages:2048kB"})
		CHECK(note(snap, kUtil, scope) == "no 2048kB huge pages reserved");
	for (const char *scope : {"hugepages:1048576kB", "node:0/hugepages:1048576kB"})
		CHECK(note(snap, kUtil, scope) == "no 1048576kB huge pages reserved");
	CHECK(gauge(snap, series::kThpAnonBytes, "system") == 0.0);
	CHECK(gauge(snap, series::kMemAvailableBytes, "system") == 24040084.0 * 1024);
	CHECK_FALSE(note(snap, "mem.thp_fallback_ratio", "system")); // madvise: THP can fault
	CHECK(series_count(snap) == 2);
	CHECK(snap.unavailable().size() == 4);
}

TEST_CASE("meminfo source: 8 nodes, two page sizes, surplus pages", "[procfs][meminfo][source]")
{
	auto src = make_meminfo_source();
	auto snap = collect(*src, fixture("xeon-2s-256cpu-8node"));
	// Global 2048 kB pool: 8192 persistent + 64 surplus pages (nr_hugepages
	// 8256), 3584 free of which 512 reserved: reserved pages are in use.
	CHECK(gauge(snap, series::kHugepageUtilization, "hugepages:2048kB") == Approx((8256.0 - 3584 + 512) / 8256));
	CHECK(gauge(snap, series::kHugepageUtilization, "hugepages:1048576kB") == Approx(24.0 / 32));
	// Per node the same definition: node k holds 128k of the 3584 free
	// pages, so 512 * 128k / 3584 of the reservations; node 7 896 of them.
	double spoken_for = 0;
	for (unsigned k = 0; k < 7; ++k) {
		const double share = 512.0 * 128 * k / 3584;
		const auto util =
			gauge(snap, series::kHugepageUtilization, "node:" + std::to_string(k) + "/hugepages:2048kB");
		REQUIRE(util);
		CHECK(*util == Approx((1024.0 - 128 * k + share) / 1024));
		spoken_for += *util * 1024;
	}
	const auto node7 = gauge(snap, series::kHugepageUtilization, "node:7/hugepages:2048kB");
	REQUIRE(node7);
	CHECK(*node7 == Approx((192.0 + 128) / 1088));
	spoken_for += *node7 * 1088;
	// The nodes' pages in use add up to the system's.
	CHECK(spoken_for == Approx(8256.0 - 3584 + 512));
	for (unsigned k = 0; k < 4; ++k)
		CHECK(gauge(snap, series::kHugepageUtilization, "node:" + std::to_string(k) + "/hugepages:1048576kB") ==
		      Approx(0.75));
	for (unsigned k = 4; k < 8; ++k) {
		std::string scope = "node:" + std::to_string(k) + "/hugepages:1048576kB";
		CHECK_FALSE(gauge(snap, series::kHugepageUtilization, scope));
		CHECK(note(snap, kUtil, scope) == "no 1048576kB huge pages reserved");
	}
	CHECK(gauge(snap, series::kThpAnonBytes, "system") == 4194304.0 * 1024);
	CHECK(gauge(snap, series::kMemAvailableBytes, "system") == 900123456.0 * 1024);
	CHECK(snap.unavailable().size() == 4);
	CHECK(series_count(snap) == 2 + 8 + 4 + 1 + 1);
	CHECK(snap.gauges().at(series::kHugepageUtilization).source == "sysfs");
}

TEST_CASE("meminfo source: 4 nodes, THP never, no 2 MiB pool", "[procfs][meminfo][source]")
{
	auto src = make_meminfo_source();
	auto snap = collect(*src, fixture("amd-1s-64cpu-4node"));
	CHECK(note(snap, kUtil, "hugepages:2048kB") == "no 2048kB huge pages reserved");
	CHECK(gauge(snap, series::kHugepageUtilization, "hugepages:1048576kB") == Approx(10.0 / 16));
	for (unsigned k = 0; k < 4; ++k) {
		std::string node = "node:" + std::to_string(k);
		CHECK(gauge(snap, series::kHugepageUtilization, node + "/hugepages:1048576kB") == Approx((4.0 - k) / 4));
		CHECK(note(snap, kUtil, node + "/hugepages:2048kB") == "no 2048kB huge pages reserved");
	}
	CHECK(note(snap, "mem.thp_fallback_ratio", "system") == "THP disabled (transparent_hugepage/enabled = never)");
	CHECK(gauge(snap, series::kThpAnonBytes, "system") == 0.0);
	CHECK(note(snap, "mem.available_bytes", "system") ==
	      "no MemAvailable in kB in /proc/meminfo (kernel before 3.14)");
}

TEST_CASE("meminfo source: missing and garbled files", "[procfs][meminfo][source]")
{
	auto src = make_meminfo_source();
	SECTION("missing")
	{
		auto snap = collect(*src, fixture("missing"));
		CHECK(note(snap, kUtil, "hugepages:2048kB") ==
		      "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages missing");
		CHECK(note(snap, "mem.thp_anon_bytes", "system") == "/proc/meminfo missing");
		CHECK(note(snap, "mem.available_bytes", "system") == "/proc/meminfo missing");
		CHECK(note(snap, "mem.thp_fallback_ratio", "system") ==
		      "THP not available (no /sys/kernel/mm/transparent_hugepage/enabled: kernel without "
		      "CONFIG_TRANSPARENT_HUGEPAGE)");
		CHECK(series_count(snap) == 0);
	}
	SECTION("garbled")
	{
		auto snap = collect(*src, fixture("garbled"));
		CHECK(note(snap, kUtil, "hugepages:2048kB") ==
		      "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages garbled: not a number: 'abc'");
		CHECK(note(snap, kUtil, "node:0/hugepages:2048kB") ==
		      "/sys/devices/system/node/node0/hugepages/hugepages-2048kB: 2048 free of 1024 pages "
		      "(pool resized while reading)");
		CHECK(note(snap, "mem.thp_anon_bytes", "system") ==
		      "/proc/meminfo garbled: line 2: AnonHugePages: expected 'value' or 'value kB', got '4096 MB'");
		CHECK(note(snap, "mem.thp_fallback_ratio", "system") ==
		      "/sys/kernel/mm/transparent_hugepage/enabled garbled: no single [mode] in 'always madvise never'");
		CHECK(series_count(snap) == 0);
	}
}

TEST_CASE("meminfo source: Hugetlb 0 kB in /proc/meminfo: the pools' files are not read", "[procfs][meminfo][source]")
{
	// Pool files that would be garbled if read: with "Hugetlb: 0 kB" the
	// pools are known empty without them; with pages, they are read.
	TempTree t;
	const std::string pool = "sys/kernel/mm/hugepages/hugepages-2048kB/";
	for (const char *f : {"nr_hugepages", "free_hugepages", "resv_hugepages"})
		t.put(pool + f, "abc\n");
	t.put("sys/devices/system/node/online", "0\n");
	t.put("sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "abc\n");
	t.put("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "abc\n");
	const std::string head = "MemTotal: 1000 kB\nAnonHugePages: 0 kB\nHugePages_Total: 0\nHugePages_Free: 0\n"
				 "Hugepagesize: 2048 kB\n";
	SECTION("no pages")
	{
		t.put("proc/meminfo", head + "Hugetlb: 0 kB\n");
		auto snap = collect(*make_meminfo_source(), t.root());
		for (const char *scope : {"hugepages:2048kB", "node:0/hugepages:2048kB"})
			CHECK(note(snap, kUtil, scope) == "no 2048kB huge pages reserved");
	}
	SECTION("pages of another size: every pool is read")
	{
		t.put("proc/meminfo", head + "Hugetlb: 1048576 kB\n");
		auto snap = collect(*make_meminfo_source(), t.root());
		CHECK(note(snap, kUtil, "hugepages:2048kB") ==
		      "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages garbled: not a number: 'abc'");
	}
}

TEST_CASE("meminfo source: /proc/meminfo fallback without the sysfs pools", "[procfs][meminfo][source]")
{
	auto src = make_meminfo_source();
	SECTION("default 2 MiB pages")
	{
		TempTree t;
		t.put("proc/meminfo", "MemTotal: 1000 kB\nAnonHugePages:    2048 kB\nHugePages_Total:     100\n"
				      "HugePages_Free:       25\nHugepagesize:    2048 kB\n");
		auto snap = collect(*src, t.root());
		CHECK(gauge(snap, series::kHugepageUtilization, "hugepages:2048kB") == Approx(0.75));
		CHECK(snap.gauges().at(series::kHugepageUtilization).source == "procfs");
		CHECK(gauge(snap, series::kThpAnonBytes, "system") == 2048.0 * 1024);
	}
	SECTION("default 1 GiB pages, none free")
	{
		TempTree t;
		t.put("proc/meminfo", "HugePages_Total: 4\nHugePages_Free: 0\nHugepagesize: 1048576 kB\n");
		auto snap = collect(*src, t.root());
		CHECK(gauge(snap, series::kHugepageUtilization, "hugepages:1048576kB") == Approx(1.0));
		CHECK(note(snap, "mem.thp_anon_bytes", "system") ==
		      "no AnonHugePages in /proc/meminfo (kernel without CONFIG_TRANSPARENT_HUGEPAGE)");
	}
	SECTION("no hugetlb at all")
	{
		TempTree t;
		t.put("proc/meminfo", "MemTotal: 1000 kB\n");
		auto snap = collect(*src, t.root());
		CHECK(note(snap, kUtil, "system") ==
		      "no /sys/kernel/mm/hugepages and no HugePages_Total/HugePages_Free/Hugepagesize in "
		      "/proc/meminfo (kernel without CONFIG_HUGETLBFS)");
		CHECK(series_count(snap) == 0);
	}
	SECTION("counts with units are garbled")
	{
		TempTree t;
		t.put("proc/meminfo", "HugePages_Total: 4 kB\nHugePages_Free: 0\nHugepagesize: 2048 kB\n");
		auto snap = collect(*src, t.root());
		CHECK(note(snap, kUtil, "system")->find("/proc/meminfo garbled") == 0);
		CHECK(series_count(snap) == 0);
	}
}

// Issue 34, item 7: one pool of 2 pages on a one-node host, one in use and
// one reserved: the system said 1.00 and the node 0.50.
TEST_CASE("meminfo source: a node's utilisation counts reserved pages as the system's does",
	  "[procfs][meminfo][source]")
{
	TempTree t;
	t.put("proc/meminfo", "MemAvailable: 1000 kB\nHugetlb: 4096 kB\n");
	t.put("sys/devices/system/node/online", "0\n");
	t.put("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "2\n");
	t.put("sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "1\n");
	t.put("sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages", "1\n");
	t.put("sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "2\n");
	t.put("sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "1\n");
	auto src = make_meminfo_source();
	auto snap = collect(*src, t.root());
	CHECK(gauge(snap, series::kHugepageUtilization, "hugepages:2048kB") == 1.0);
	CHECK(gauge(snap, series::kHugepageUtilization, "node:0/hugepages:2048kB") == 1.0);
}

TEST_CASE("meminfo source end to end: gauges read at the later snapshot", "[procfs][meminfo][derive]")
{
	auto src = make_meminfo_source();
	auto iv = derive_between(*src, "xeon-2s-256cpu-8node", "xeon-2s-256cpu-8node-t1");
	CHECK(metric_count(iv, "mem.hugepage_utilization") == 14);
	// At t1 node k has 100k free 2 MiB pages and nodes 0-3 one free 1 GiB
	// page; 512 of the 2800 free 2 MiB pages are reserved (in use).
	REQUIRE(metric(iv, kUtil, "hugepages:2048kB"));
	CHECK(metric(iv, kUtil, "hugepages:2048kB")->value == Approx((5456.0 + 512) / 8256));
	REQUIRE(metric(iv, kUtil, "hugepages:1048576kB"));
	CHECK(metric(iv, kUtil, "hugepages:1048576kB")->value == Approx(28.0 / 32));
	REQUIRE(metric(iv, kUtil, "node:3/hugepages:2048kB"));
	CHECK(metric(iv, kUtil, "node:3/hugepages:2048kB")->value == Approx((724.0 + 512.0 * 300 / 2800) / 1024));
	REQUIRE(metric(iv, kUtil, "node:7/hugepages:2048kB"));
	CHECK(metric(iv, kUtil, "node:7/hugepages:2048kB")->value == Approx((388.0 + 512.0 * 700 / 2800) / 1088));
	CHECK(interval_note(iv, kUtil, "node:6/hugepages:1048576kB") == "no 1048576kB huge pages reserved");
	REQUIRE(metric(iv, "mem.thp_anon_bytes", "system"));
	CHECK(metric(iv, "mem.thp_anon_bytes", "system")->value == 6291456.0 * 1024);
	CHECK(metric(iv, "mem.thp_anon_bytes", "system")->unit == "B");
}
