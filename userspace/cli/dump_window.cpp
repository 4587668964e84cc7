#include "dump_window.h"

#include <cmath>
#include <ctime>

#include "duration.h"
#include "hwsig/plot.h"

namespace hwsigctl {

namespace {

double seconds_from_trigger(std::uint64_t mono_ns, const DumpClock &clock)
{
	return (static_cast<double>(mono_ns) - static_cast<double>(clock.trigger_mono_ns)) / 1e9;
}

// "-90s", "+2m": a signed duration. The sign is required, so that "90"
// is not mistaken for a time of day.
std::optional<double> signed_offset(const std::string &text)
{
	if (text == "0")
		return 0.0;
	if (text.size() < 2 || (text[0] != '-' && text[0] != '+'))
		return std::nullopt;
	auto d = parse_duration(text.substr(1));
	if (!d || *d > kMaxDurationSeconds)
		return std::nullopt;
	return text[0] == '-' ? -*d : *d;
}

// A UTC wall clock in one of the forms below, as seconds since the epoch;
// has_date says whether the text named the day.
std::optional<double> wall_clock(std::string text, bool *has_date)
{
	for (const char *suffix : {" UTC", "Z"})
		if (text.size() > std::string(suffix).size() &&
		    text.compare(text.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
			text.erase(text.size() - std::string(suffix).size());
	// Fractions of a second ("18:03:20.25") are kept apart: strptime
	// reads whole seconds only.
	double fraction = 0;
	const std::size_t colon = text.rfind(':'), dot = text.rfind('.');
	if (colon != std::string::npos && dot != std::string::npos && dot > colon) {
		const std::string digits = text.substr(dot + 1);
		if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
			return std::nullopt;
		fraction = std::stod("0." + digits);
		text.erase(dot);
	}
	struct Form {
		const char *format;
		bool date;
	};
	static const Form forms[] = {{"%Y-%m-%d %H:%M:%S", true}, {"%Y-%m-%dT%H:%M:%S", true},
				     {"%Y-%m-%d %H:%M", true},	  {"%Y-%m-%dT%H:%M", true},
				     {"%H:%M:%S", false},	  {"%H:%M", false}};
	for (const auto &f : forms) {
		struct tm tm {};
		const char *end = strptime(text.c_str(), f.format, &tm);
		if (!end || *end)
			continue;
		*has_date = f.date;
		if (!f.date) // the time of day alone: kept as seconds into the day
			return static_cast<double>(tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) + fraction;
		const std::time_t t = timegm(&tm);
		if (t == static_cast<std::time_t>(-1))
			return std::nullopt;
		return static_cast<double>(t) + fraction;
	}
	return std::nullopt;
}

} // namespace

DumpClock dump_clock(const hwsig::DumpContents &dump)
{
	DumpClock c;
	c.trigger_mono_ns = hwsig::trigger_time_ns(dump);
	// The wall clock of the snapshot nearest the trigger, moved by the
	// monotonic distance between them.
	const hwsig::Snapshot *nearest = nullptr;
	double best = 0;
	for (const auto &s : dump.snapshots) {
		if (!s.snapshot.realtime_ns)
			continue;
		const double d = std::fabs(seconds_from_trigger(s.snapshot.mono_ns, c));
		if (!nearest || d < best) {
			nearest = &s.snapshot;
			best = d;
		}
	}
	if (nearest) {
		const double wall = static_cast<double>(nearest->realtime_ns) -
				    (static_cast<double>(nearest->mono_ns) - static_cast<double>(c.trigger_mono_ns));
		c.trigger_realtime_ns = wall > 0 ? static_cast<std::uint64_t>(wall) : 0;
	}
	return c;
}

std::optional<double> parse_dump_time(const std::string &text, const DumpClock &clock, std::string *error)
{
	if (auto offset = signed_offset(text))
		return offset;
	bool has_date = false;
	auto wall = wall_clock(text, &has_date);
	if (!wall) {
		*error = "'" + text + "' is neither an offset from the trigger (-90s, +2m) nor a UTC time "
			 "(18:03:20, 2026-11-28 18:03:20)";
		return std::nullopt;
	}
	if (!clock.trigger_realtime_ns) {
		*error = "the dump's snapshots carry no wall clock: give '" + text +
			 "' as an offset from the trigger (-90s, +2m)";
		return std::nullopt;
	}
	const double trigger_s = static_cast<double>(clock.trigger_realtime_ns) / 1e9;
	if (has_date)
		return *wall - trigger_s;
	// A time of day: on the trigger's day, or the day before or after it
	// when that is nearer (a dump that spans midnight).
	const double day = std::floor(trigger_s / 86400) * 86400;
	double best = day + *wall - trigger_s;
	for (double shift : {-86400.0, 86400.0})
		if (std::fabs(best + shift) < std::fabs(best))
			best += shift;
	return best;
}

std::vector<std::size_t> intervals_in(const hwsig::DumpContents &dump, const DumpClock &clock, const DumpWindow &w)
{
	std::vector<std::size_t> in;
	for (std::size_t i = 1; i < dump.snapshots.size(); ++i) {
		const double start = seconds_from_trigger(dump.snapshots[i - 1].snapshot.mono_ns, clock);
		const double end = seconds_from_trigger(dump.snapshots[i].snapshot.mono_ns, clock);
		if (end > w.since_s && start < w.until_s)
			in.push_back(i);
	}
	return in;
}

} // namespace hwsigctl
