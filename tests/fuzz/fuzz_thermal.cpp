// libFuzzer target: the thermal parsers never crash, never return a
// temperature outside [-273.15, 500] °C, and a zone's throttle point is
// always one of its passive/hot/critical trips.
// Input: lines. Line 0 is a temperature file, then (type, temp) line pairs
// are trip points; every line is also a sensor label.
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/parse.h"
#include "hwsig/thermal.h"

using namespace hwsig::thermal;

namespace {

void check_temperature(const std::optional<double> &c, bool limit)
{
	if (!c)
		return;
	if (!std::isfinite(*c) || *c < -273.15 || *c > 500.0)
		std::abort();
	if (limit && *c <= 0.0)
		std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto lines = hwsig::split_lines(text);
	if (lines.empty())
		return 0;

	auto temp = parse_millicelsius(lines[0]);
	check_temperature(temp, false);
	check_temperature(parse_limit_millicelsius(lines[0]), true);

	std::vector<Trip> trips;
	for (std::size_t i = 1; i + 1 < lines.size(); i += 2) {
		auto limit = parse_limit_millicelsius(lines[i + 1]);
		check_temperature(limit, true);
		if (limit)
			trips.push_back({parse_trip_type(lines[i]), *limit});
	}
	if (auto throttle = zone_throttle_c(trips)) {
		bool found = false;
		for (const auto &t : trips)
			found |= t.temp_c == *throttle && t.type != TripType::Active && t.type != TripType::Unknown;
		if (!found)
			std::abort();
		if (temp && !std::isfinite(*throttle - *temp))
			std::abort();
	}

	std::vector<std::string> names;
	for (auto line : lines) {
		auto c = scope_component(line);
		for (unsigned char ch : c)
			if (ch <= ' ' || ch == '/' || ch == 0x7f)
				std::abort();
		names.push_back(std::move(c));
	}
	auto unique = disambiguate(names);
	if (unique.size() != names.size())
		std::abort();
	if (std::set<std::string>(unique.begin(), unique.end()).size() != unique.size())
		std::abort();
	return 0;
}
