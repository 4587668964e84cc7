// Thermal headroom from sysfs: thermal zones (/sys/class/thermal) and hwmon
// temperature sensors (/sys/class/hwmon). Documentation/thermal.rst defines
// the metric; the parsers here are pure so tests and fuzzers drive them
// without a sysfs tree.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/source.h"

namespace hwsig::thermal {

// A sysfs temperature in millidegrees Celsius ("67000\n") -> 67.0 °C.
// nullopt for garbage, overflow, or values outside [-273.15, 500] °C: no
// silicon sensor reads beyond that, drivers use such values as markers
// ("not connected", 65535 K for an unset NVMe threshold).
std::optional<double> parse_millicelsius(std::string_view text);

// A limit (trip point, tempN_max/_crit) in millidegrees: like
// parse_millicelsius, but a limit at or below 0 °C is not a throttle point
// (THERMAL_TEMP_INVALID, an unprogrammed x86_pkg_temp threshold) -> nullopt.
std::optional<double> parse_limit_millicelsius(std::string_view text);

enum class TripType { Passive, Hot, Critical, Active, Unknown };
TripType parse_trip_type(std::string_view text); // "passive\n" -> Passive

struct Trip {
	TripType type = TripType::Unknown;
	double temp_c = 0;
};

// Where the kernel starts throttling the zone: the lowest "passive" trip,
// else the lowest "hot", else the lowest "critical". "active" trips only
// switch fans on and are ignored. nullopt: no such trip.
std::optional<double> zone_throttle_c(const std::vector<Trip> &trips);

// An hwmon sensor's throttle point; device: the hwmon device's name. Intel coretemp's _crit is TjMax, the
// TCC activation point where the CPU throttles (what turbostat and PCM
// measure headroom to); its _max is TjMax minus a Tcontrol offset, 10-20
// degC lower, a fan-control target. Every other driver: _max, else _crit.
std::optional<double> hwmon_throttle_c(std::string_view device, std::optional<double> max_c,
				       std::optional<double> crit_c);

// A sysfs name as one scope component: whitespace, control characters and
// '/' become '_' ("Core 3" -> "Core_3"); empty stays empty.
std::string scope_component(std::string_view name);

// Names that occur more than once get ".<k>" appended, k counting from 0 in
// the given order (skipping a k whose result is already some other name);
// unique names stay as they are. The results are pairwise distinct.
// {"acpitz","x86_pkg_temp","acpitz"} -> {"acpitz.0","x86_pkg_temp","acpitz.1"}
std::vector<std::string> disambiguate(const std::vector<std::string> &names);

} // namespace hwsig::thermal

namespace hwsig {

// Source "sysfs.thermal": gauge series::kThermalHeadroom (°C) per
// zone:<thermal zone type> and zone:<hwmon name>/<sensor label>, and the
// minimum over all of them as scope "system". Sensors, names, trip points
// and limits are rescanned every rescan_interval_s seconds (and after a
// sensor vanished); every collect reads the temperatures.
SourcePtr make_thermal_source(double rescan_interval_s = 10.0);

} // namespace hwsig
