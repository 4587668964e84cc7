// Thermal headroom: the pure parsers and rules, then the source on fixture
// trees with hand-computed expectations, then this host.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hwsig/fs.h"
#include "hwsig/series.h"
#include "hwsig/thermal.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace hwsig::thermal;
using namespace std::string_literals;
using Catch::Matchers::Contains;

namespace {

std::string fixture(const char *tree)
{
	return std::string(HWSIG_FIXTURES) + "/" + tree;
}

Snapshot collect(const std::string &root)
{
	SourceContext ctx;
	ctx.root = root;
	Snapshot snap;
	auto src = make_thermal_source();
	src->collect(ctx, snap);
	return snap;
}

// The headroom gauge for a scope, or NaN-free failure through REQUIRE.
double headroom(const Snapshot &snap, const std::string &scope)
{
	const double *v = snap.gauge(series::kThermalHeadroom, scope);
	INFO("scope " << scope);
	REQUIRE(v != nullptr);
	return *v;
}

bool has_gauge(const Snapshot &snap, const std::string &scope)
{
	return snap.gauge(series::kThermalHeadroom, scope) != nullptr;
}

const UnavailableNote *note_for(const Snapshot &snap, const std::string &scope)
{
	for (const auto &n : snap.unavailable())
		if (n.id == "thermal.headroom_c" && n.scope == scope)
			return &n;
	return nullptr;
}

std::size_t gauge_count(const Snapshot &snap)
{
	auto it = snap.gauges().find(series::kThermalHeadroom);
	return it == snap.gauges().end() ? 0 : it->second.by_scope.size();
}

} // namespace

TEST_CASE("parse_millicelsius and parse_limit_millicelsius", "[thermal][parse]")
{
	CHECK(parse_millicelsius("67000\n") == 67.0);
	CHECK(parse_millicelsius("  -5500 ") == -5.5);
	CHECK(parse_millicelsius("0") == 0.0);
	CHECK(parse_millicelsius("-273150") == Approx(-273.15));
	CHECK_FALSE(parse_millicelsius("-274000").has_value()); // THERMAL_TEMP_INVALID
	CHECK_FALSE(parse_millicelsius("65261850").has_value()); // NVMe "unset": 65535 K
	CHECK_FALSE(parse_millicelsius("").has_value());
	CHECK_FALSE(parse_millicelsius("garbage").has_value());
	CHECK_FALSE(parse_millicelsius("45000\0junk"s).has_value());
	CHECK_FALSE(parse_millicelsius("99999999999999999999999").has_value());
	CHECK_FALSE(parse_millicelsius("67.5").has_value());
	CHECK(parse_limit_millicelsius("100000") == 100.0);
	CHECK_FALSE(parse_limit_millicelsius("0").has_value()); // unprogrammed x86_pkg_temp trip
	CHECK_FALSE(parse_limit_millicelsius("-274000").has_value());
	CHECK_FALSE(parse_limit_millicelsius("NaN").has_value());
}

TEST_CASE("zone throttle precedence: passive, then hot, then critical", "[thermal][parse]")
{
	using T = TripType;
	CHECK(parse_trip_type("passive\n") == T::Passive);
	CHECK(parse_trip_type("hot") == T::Hot);
	CHECK(parse_trip_type("critical") == T::Critical);
	CHECK(parse_trip_type("active") == T::Active);
	CHECK(parse_trip_type("weird") == T::Unknown);

	CHECK(zone_throttle_c({{T::Critical, 105}, {T::Hot, 95}, {T::Passive, 90}, {T::Passive, 85}}) == 85.0);
	CHECK(zone_throttle_c({{T::Critical, 105}, {T::Hot, 100}, {T::Hot, 97}}) == 97.0);
	CHECK(zone_throttle_c({{T::Critical, 110}, {T::Critical, 105}}) == 105.0);
	// a passive trip above the critical one still wins: it is where the
	// kernel starts acting
	CHECK(zone_throttle_c({{T::Critical, 90}, {T::Passive, 95}}) == 95.0);
	// fans are no throttle point
	CHECK_FALSE(zone_throttle_c({{T::Active, 60}, {T::Active, 70}}).has_value());
	CHECK_FALSE(zone_throttle_c({{T::Unknown, 60}}).has_value());
	CHECK_FALSE(zone_throttle_c({}).has_value());

	CHECK(hwmon_throttle_c("nct6775", 100.0, 105.0) == 100.0);
	CHECK(hwmon_throttle_c("nct6775", std::nullopt, 105.0) == 105.0);
	CHECK_FALSE(hwmon_throttle_c("nct6775", std::nullopt, std::nullopt).has_value());
	// coretemp: _crit is TjMax (TCC activation), _max a lower Tcontrol target.
	CHECK(hwmon_throttle_c("coretemp", 95.0, 100.0) == 100.0);
	CHECK(hwmon_throttle_c("coretemp", 95.0, std::nullopt) == 95.0);
}

TEST_CASE("scope components and duplicate names", "[thermal][parse]")
{
	CHECK(scope_component("Core 3") == "Core_3");
	CHECK(scope_component("Package id 0\n") == "Package_id_0");
	CHECK(scope_component("a/b\tc") == "a_b_c");
	CHECK(scope_component("") == "");
	CHECK(disambiguate({"acpitz", "x86_pkg_temp", "acpitz"}) ==
	      std::vector<std::string>{"acpitz.0", "x86_pkg_temp", "acpitz.1"});
	CHECK(disambiguate({"a", "b"}) == std::vector<std::string>{"a", "b"});
	// a suffix never collides with a name that is already taken
	CHECK(disambiguate({"a", "a", "a.0"}) == std::vector<std::string>{"a.1", "a.2", "a.0"});
	CHECK(disambiguate({}).empty());
}

TEST_CASE("thermal source on the Xeon fixture", "[thermal][fixture]")
{
	auto snap = collect(fixture("xeon-2s-256cpu-8node"));
	// thermal zones: duplicates numbered, active trips ignored, lowest passive wins
	CHECK(headroom(snap, "zone:acpitz.0") == Approx(105.0 - 27.8));
	CHECK(headroom(snap, "zone:acpitz.1") == Approx(85.0 - 29.8));
	CHECK(headroom(snap, "zone:pch_lewisburg") == Approx(115.0 - 48.5));
	// x86_pkg_temp trips are thermald's notification thresholds (97 degC on
	// .1), not where the package throttles: no value, a note saying why.
	for (const char *pkg : {"zone:x86_pkg_temp.0", "zone:x86_pkg_temp.1"}) {
		CHECK_FALSE(has_gauge(snap, pkg));
		const auto *note = note_for(snap, pkg);
		REQUIRE(note);
		CHECK_THAT(note->reason, Contains("thermald's notification thresholds"));
	}

	// coretemp: crit (TjMax, TCC activation) before max (TjMax - Tcontrol)
	CHECK(headroom(snap, "zone:coretemp.0/Core_3") == Approx(33.0));
	CHECK(headroom(snap, "zone:coretemp.0/Package_id_0") == Approx(100.0 - 71.0));
	CHECK(headroom(snap, "zone:coretemp.1/Core_17") == Approx(12.0));
	CHECK(headroom(snap, "zone:coretemp.1/Package_id_1") == Approx(100.0 - 84.0));
	CHECK(headroom(snap, "zone:coretemp.1/Core_63") == Approx(100.0 - 63.0));
	// mirrors of thermal zones (acpitz via its parent link, pch_lewisburg
	// by name on an old kernel without the link) are not read twice
	CHECK_FALSE(has_gauge(snap, "zone:acpitz/temp1"));
	CHECK_FALSE(has_gauge(snap, "zone:pch_lewisburg/temp1"));

	// 3 zones + 2 x (1 package + 64 cores) + system
	CHECK(gauge_count(snap) == 3 + 2 * 65 + 1);
	CHECK(headroom(snap, "system") == Approx(12.0));
	CHECK(note_for(snap, "system") == nullptr);
}

// Issue 34, item 8: coretemp's crit is TjMax, but firmware may throttle
// below it by the TCC activation offset (MSR 0x1A2, bits 29:24). Where the
// msr driver lets hwsig read it, the throttle point is TjMax - offset and
// the source says so; elsewhere TjMax, source "sysfs".
TEST_CASE("thermal source: coretemp throttles at TjMax minus the MSR's TCC offset", "[thermal][fixture]")
{
	auto plain = collect(fixture("xeon-2s-256cpu-8node"));
	CHECK(plain.gauges().at(series::kThermalHeadroom).source == "sysfs");

	procfs_test::TempTree t;
	std::filesystem::copy(fixture("xeon-2s-256cpu-8node"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	t.put("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
	t.put("sys/devices/system/cpu/cpu64/topology/physical_package_id", "1\n");
	// Package 1's MSR (through CPU 64): TjMax 100, offset 10. Package 0
	// has no readable MSR (no /dev/cpu/0/msr).
	{
		const std::uint64_t msr = (10ull << 24) | (100ull << 16) | (1ull << 31);
		t.put("dev/cpu/64/msr", "");
		std::fstream f(t.root() + "/dev/cpu/64/msr", std::ios::in | std::ios::out | std::ios::binary);
		f.seekp(0x1A2);
		f.write(reinterpret_cast<const char *>(&msr), sizeof(msr));
	}
	auto snap = collect(t.root());
	CHECK(snap.gauges().at(series::kThermalHeadroom).source == "sysfs+msr");
	CHECK(headroom(snap, "zone:coretemp.1/Core_17") == Approx(12.0 - 10));
	CHECK(headroom(snap, "zone:coretemp.1/Package_id_1") == Approx(90.0 - 84.0));
	CHECK(headroom(snap, "zone:coretemp.0/Core_3") == Approx(33.0)); // TjMax: no MSR
	CHECK(headroom(snap, "zone:coretemp.0/Package_id_0") == Approx(100.0 - 71.0));
	CHECK(headroom(snap, "zone:acpitz.0") == Approx(105.0 - 27.8)); // not coretemp
	CHECK(headroom(snap, "system") == Approx(2.0));
}

TEST_CASE("thermal source on the AMD fixture", "[thermal][fixture]")
{
	auto snap = collect(fixture("amd-1s-64cpu-4node"));
	// k10temp on Zen exposes temperatures without limits
	CHECK_FALSE(has_gauge(snap, "zone:k10temp/Tctl"));
	CHECK_FALSE(has_gauge(snap, "zone:k10temp/Tccd1"));
	const auto *k10 = note_for(snap, "zone:k10temp");
	REQUIRE(k10);
	CHECK(k10->reason == "temperature only, the driver gives no max or crit limit: Tctl, Tccd1, Tccd2, Tccd3, Tccd4");
	// NVMe: max (WCTEMP) first; a crit-only drive uses crit
	CHECK(headroom(snap, "zone:nvme.0/Composite") == Approx(80.85 - 41.85));
	CHECK(headroom(snap, "zone:nvme.1/Composite") == Approx(84.85 - 39.85));
	// Sensor 1's max of 65535 K is the "unset" marker, not a limit
	CHECK_FALSE(has_gauge(snap, "zone:nvme.0/Sensor_1"));
	const auto *nvme0 = note_for(snap, "zone:nvme.0");
	REQUIRE(nvme0);
	CHECK_THAT(nvme0->reason, Contains("Sensor_1"));
	CHECK(gauge_count(snap) == 3);
	CHECK(headroom(snap, "system") == Approx(39.0));
}

TEST_CASE("thermal source on the garbled fixture", "[thermal][fixture]")
{
	Snapshot snap;
	REQUIRE_NOTHROW(snap = collect(fixture("garbled")));
	CHECK(headroom(snap, "zone:thermal_zone1") == Approx(45.0)); // no type file
	CHECK(headroom(snap, "zone:ok_zone") == Approx(40.0));
	CHECK(headroom(snap, "zone:hot_zone") == Approx(50.0)); // invalid hot trip ignored
	CHECK(headroom(snap, "zone:hwmon0/temp1") == Approx(57.0)); // no name, no label
	CHECK(headroom(snap, "zone:coretemp/Core_0") == Approx(45.0)); // max "NaN" -> crit
	CHECK(headroom(snap, "zone:coretemp/Core_5") == Approx(39.0)); // a crit under max is no TjMax: max
	CHECK(headroom(snap, "zone:dup/Composite.0") == Approx(50.0));
	CHECK(headroom(snap, "zone:dup/Composite.1") == Approx(45.0));
	CHECK(gauge_count(snap) == 8 + 1);
	CHECK(headroom(snap, "system") == Approx(39.0));

	// every unreadable sensor is a note for its own scope, never a number
	for (const char *scope : {"zone:acpitz", "zone:x86_pkg_temp", "zone:bogus", "zone:cpu-thermal",
				  "zone:nozone", "zone:coretemp/Package_id_0", "zone:coretemp/Core_1",
				  "zone:coretemp/Core_2", "zone:coretemp/Core_3", "zone:coretemp/Core_4"}) {
		INFO("scope " << scope);
		CHECK_FALSE(has_gauge(snap, scope));
		CHECK(note_for(snap, scope) != nullptr);
	}
	CHECK_THAT(note_for(snap, "zone:acpitz")->reason, Contains("\"garbage\""));
	CHECK_THAT(note_for(snap, "zone:nozone")->reason, Contains("No such file or directory"));
	CHECK_THAT(note_for(snap, "zone:coretemp/Core_2")->reason, Contains("Is a directory"));
	CHECK_THAT(note_for(snap, "zone:coretemp/Core_3")->reason, Contains("fault"));
	CHECK(note_for(snap, "system") == nullptr);
}

TEST_CASE("thermal source with no sensors at all", "[thermal][fixture]")
{
	// this development host (a VM): /sys/class/thermal is empty, no hwmon
	auto snap = collect(fixture("debian12-host"));
	CHECK(gauge_count(snap) == 0);
	REQUIRE(snap.unavailable().size() == 1);
	CHECK(snap.unavailable()[0].id == "thermal.headroom_c");
	CHECK(snap.unavailable()[0].scope == "system");
	CHECK(snap.unavailable()[0].reason ==
	      "no thermal zones or hwmon temperature sensors (typical inside a VM)");
	CHECK(collect(fixture("no-such-tree")).unavailable().size() == 1);
}

TEST_CASE("thermal source on this host agrees with its sysfs", "[thermal][live]")
{
	auto src = make_thermal_source();
	CHECK(src->name() == "sysfs.thermal");
	CHECK(src->provides() == std::vector<std::string>{"thermal.headroom_c"});
	auto snap = collect("/");
	bool no_sensors = list_dir("/sys/class/thermal", "thermal_zone").empty() &&
			  list_dir("/sys/class/hwmon", "hwmon").empty();
	if (no_sensors) {
		CHECK_FALSE(has_gauge(snap, "system"));
		const auto *n = note_for(snap, "system");
		REQUIRE(n);
		CHECK_THAT(n->reason, Contains("no thermal zones or hwmon"));
	} else {
		// either a minimum or a reason, never both
		CHECK(has_gauge(snap, "system") != (note_for(snap, "system") != nullptr));
	}
}
