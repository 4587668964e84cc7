#include "dump.h"

#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>

#include "hwsig/catalog.h"
#include "hwsig/dump_capture.h"
#include "hwsig/dump_file.h"
#include "hwsig/error.h"

namespace hwsigd {

namespace {

std::uint64_t realtime_now_ns()
{
	struct timespec ts;
	::clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// What a reader needs to interpret the numbers on another machine later:
// the host's facts and the daemon's own settings.
std::vector<std::pair<std::string, std::string>> daemon_facts(const Config &cfg)
{
	auto f = hwsig::host_facts(cfg.root);
	char num[32];
	std::snprintf(num, sizeof(num), "%g", cfg.interval);
	f.emplace_back("interval_s", num);
	f.emplace_back("per_cpu", cfg.per_cpu ? "yes" : "no");
	f.emplace_back("pmu", cfg.pmu);
	return f;
}

} // namespace
bool parse_seconds(std::string_view text, double &out)
{
	double v = 0;
	auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || p != text.data() + text.size() || text.empty() || !std::isfinite(v) || v < 0)
		return false;
	out = v;
	return true;
}

std::string make_dump(const History &history, const Config &cfg, const std::vector<std::string> &claimed,
		      double seconds, const std::string &trigger, std::optional<std::uint64_t> triggered_mono_ns)
{
	hwsig::DumpContents d;
	d.facts = daemon_facts(cfg);
	d.trigger = trigger;
	d.created_ns = realtime_now_ns();
	const std::size_t n = history.snapshots();
	if (n == 0)
		throw hwsig::Error("the history holds no snapshot yet");
	d.triggered_mono_ns = triggered_mono_ns ? *triggered_mono_ns : history.mono_ns(n - 1);
	d.pmu_plan = hwsig::pmu_plan_entries(cfg.root);
	hwsig::DumpWriter w;
	bool begun = false;
	// The module's rings as they are now, through a mapping of the dump's
	// own: the PMU source's reader keeps its tails and sees nothing. A CPU
	// at a time into the file: a 256-CPU host's rings are too many records
	// to hold in the daemon for the length of a dump.
	hwsig::capture_rings(cfg.root, d, [&](const hwsig::DumpContents &head, hwsig::DumpRingCpu &&cpu) {
		if (!begun)
			w.begin(head);
		begun = true;
		w.add_ring_cpu(cpu);
	});
	// The newest snapshot and those within `seconds` before it; one more
	// so that the first interval of the window can be derived.
	std::size_t first = 0;
	if (seconds > 0) {
		const std::uint64_t newest = history.mono_ns(n - 1);
		// A span past 2^64 ns (a client's "dump 1e12") is all of it,
		// not a wrapped, short one.
		const double span_ns = seconds * 1e9;
		const std::uint64_t span = span_ns < 18446744073709549568.0 ? static_cast<std::uint64_t>(span_ns)
									  : std::numeric_limits<std::uint64_t>::max();
		first = n - 1;
		while (first > 0 && newest - history.mono_ns(first) < span)
			--first;
	}
	if (!begun)
		w.begin(d); // no rings, or none with records
	for (std::size_t i = first; i < n; ++i)
		w.add(history.snapshot(i), history.vms(i), claimed);
	return w.finish();
}

} // namespace hwsigd
