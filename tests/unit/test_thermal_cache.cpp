// The thermal source's cached layout: temperatures are read on every
// collect, names and limits only on a rescan (every rescan interval, or
// after a sensor vanished). Works on a private copy of the Xeon fixture.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hwsig/series.h"
#include "hwsig/thermal.h"

namespace fs = std::filesystem;
using namespace hwsig;

namespace {

class FixtureCopy {
public:
	FixtureCopy()
	{
		std::string tmpl = (fs::temp_directory_path() / "hwsig-thermal-XXXXXX").string();
		REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
		root_ = tmpl;
		fs::path from = fs::path(HWSIG_FIXTURES) / "xeon-2s-256cpu-8node" / "sys" / "class";
		fs::create_directories(root_ / "sys" / "class");
		for (const char *dir : {"thermal", "hwmon"})
			fs::copy(from / dir, root_ / "sys" / "class" / dir,
				 fs::copy_options::recursive | fs::copy_options::copy_symlinks);
	}
	~FixtureCopy()
	{
		std::error_code ec;
		fs::remove_all(root_, ec);
	}
	std::string root() const { return root_.string(); }
	void write(const std::string &rel, const std::string &text) const
	{
		std::ofstream f(root_ / rel, std::ios::trunc);
		REQUIRE(f);
		f << text;
	}
	void remove(const std::string &rel) const { fs::remove_all(root_ / rel); }

private:
	fs::path root_;
};

std::optional<double> headroom(Source &src, const std::string &root, const std::string &scope)
{
	SourceContext ctx;
	ctx.root = root;
	Snapshot snap;
	src.collect(ctx, snap);
	const double *v = snap.gauge(series::kThermalHeadroom, scope);
	return v ? std::optional<double>(*v) : std::nullopt;
}

// coretemp.0 is hwmon0; "Core 3" is temp5 (coretemp numbers core_id + 2).
const std::string kCore3 = "sys/class/hwmon/hwmon0/temp5";

} // namespace

TEST_CASE("thermal: a new temperature is seen at once, a new limit at the rescan", "[thermal][cache]")
{
	FixtureCopy copy;
	auto cached = make_thermal_source(3600.0);
	auto rescanning = make_thermal_source(0.0);
	CHECK(headroom(*cached, copy.root(), "zone:coretemp.0/Core_3") == Approx(100.0 - 67.0));
	CHECK(headroom(*rescanning, copy.root(), "zone:coretemp.0/Core_3") == Approx(100.0 - 67.0));

	copy.write(kCore3 + "_input", "70000\n");
	copy.write(kCore3 + "_max", "85000\n");
	copy.write(kCore3 + "_crit", "90000\n"); // coretemp's throttle point: TjMax
	// the cached limit (100 °C) with the new temperature
	CHECK(headroom(*cached, copy.root(), "zone:coretemp.0/Core_3") == Approx(100.0 - 70.0));
	// a source that rescans sees the new limit too
	CHECK(headroom(*rescanning, copy.root(), "zone:coretemp.0/Core_3") == Approx(90.0 - 70.0));
	// a zone's temperature likewise
	copy.write("sys/class/thermal/thermal_zone0/temp", "30800\n");
	CHECK(headroom(*cached, copy.root(), "zone:acpitz.0") == Approx(105.0 - 30.8));
}

TEST_CASE("thermal: a vanished sensor is a note, then the layout is rescanned", "[thermal][cache]")
{
	FixtureCopy copy;
	auto src = make_thermal_source(3600.0);
	CHECK(headroom(*src, copy.root(), "zone:coretemp.1/Core_17") == Approx(12.0));

	copy.remove("sys/class/hwmon/hwmon1"); // package 1's coretemp unbound
	SourceContext ctx;
	ctx.root = copy.root();
	Snapshot gone;
	src->collect(ctx, gone);
	CHECK(gone.gauge(series::kThermalHeadroom, "zone:coretemp.1/Core_17") == nullptr);
	bool noted = false;
	for (const auto &n : gone.unavailable())
		if (n.scope == "zone:coretemp.1/Core_17")
			noted = n.reason.find("No such file or directory") != std::string::npos;
	CHECK(noted);
	// the system minimum is over what could be read: package 0's hottest
	const double *sys = gone.gauge(series::kThermalHeadroom, "system");
	REQUIRE(sys);
	CHECK(*sys == Approx(29.0)); // coretemp.0's package: 100 - 71

	// next collect: rescanned, one coretemp left, named without a suffix
	Snapshot after;
	src->collect(ctx, after);
	CHECK(after.gauge(series::kThermalHeadroom, "zone:coretemp/Core_3") != nullptr);
	CHECK(after.gauge(series::kThermalHeadroom, "zone:coretemp.1/Core_17") == nullptr);
	for (const auto &n : after.unavailable())
		CHECK(n.scope.rfind("zone:coretemp.1", 0) != 0);
}
