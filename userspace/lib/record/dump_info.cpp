#include "hwsig/dump_info.h"

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace hwsig {

namespace {

[[gnu::format(printf, 2, 3)]] void appendf(std::string &out, const char *fmt, ...)
{
	va_list ap, again;
	va_start(ap, fmt);
	va_copy(again, ap);
	int n = std::vsnprintf(nullptr, 0, fmt, ap);
	va_end(ap);
	if (n > 0) {
		std::size_t at = out.size();
		out.resize(at + static_cast<std::size_t>(n) + 1);
		std::vsnprintf(out.data() + at, static_cast<std::size_t>(n) + 1, fmt, again);
		out.resize(at + static_cast<std::size_t>(n));
	}
	va_end(again);
}

unsigned long long ull(std::uint64_t v)
{
	return static_cast<unsigned long long>(v);
}

void append_rings(std::string &out, const DumpRings &r)
{
	std::uint64_t records = 0, lost = 0, head = 0;
	for (const auto &c : r.cpus) {
		records += c.records.size();
		lost += c.lost;
		head += c.head;
	}
	appendf(out, "rings\tconfiguration %llu, every %llu ns, %u records per ring, %s\n", ull(r.generation),
		ull(r.interval_ns), r.ring_records, r.running ? "running" : "stopped");
	for (std::size_t i = 0; i < r.events.size(); ++i)
		appendf(out, "ring_event\t%zu\t%s\t%s\t%s\n", i, r.events[i].name.c_str(), r.events[i].pmu.c_str(),
			r.events[i].state.c_str());
	appendf(out, "ring_records\t%llu records of %zu CPUs (%s), %llu lost of %llu written\n", ull(records),
		r.cpus.size(), dump_ring_cpus(r).c_str(), ull(lost), ull(head));
	if (r.status_written && r.status_overwritten)
		appendf(out, "module_status\t%llu written, %llu overwritten\n", ull(*r.status_written),
			ull(*r.status_overwritten));
}

} // namespace

std::string dump_ring_cpus(const DumpRings &rings)
{
	std::string s;
	for (const auto &c : rings.cpus)
		s += (s.empty() ? "" : ", ") + std::to_string(c.cpu);
	return s.empty() ? "none" : s;
}

// "2023-11-14 22:15:23 UTC": the wall clock a person reads, in UTC so
// that the same file says the same on every host.
std::string utc_time(std::uint64_t realtime_ns)
{
	const std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
	struct tm tm;
	char buf[32];
	if (!gmtime_r(&t, &tm) || !std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		return "?";
	return buf;
}

// Each nanosecond count comes with a line a person reads (created, span,
// triggered) after it.
std::string render_dump_info(const DumpContents &dump)
{
	std::string out;
	appendf(out, "format\t%d\ntrigger\t%s\ncreated_ns\t%llu\ncreated\t%s\nsnapshots\t%zu\n", dump.version,
		dump.trigger.c_str(), ull(dump.created_ns), utc_time(dump.created_ns).c_str(), dump.snapshots.size());
	if (!dump.snapshots.empty()) {
		const std::uint64_t first = dump.snapshots.front().snapshot.mono_ns,
				    last = dump.snapshots.back().snapshot.mono_ns;
		appendf(out, "first_snapshot_mono_ns\t%llu\nlast_snapshot_mono_ns\t%llu\nspan\t%.3f s from the first "
			     "snapshot to the last\n",
			ull(first), ull(last), static_cast<double>(last - first) / 1e9);
	}
	if (dump.triggered_mono_ns) {
		appendf(out, "triggered_mono_ns\t%llu\n", ull(*dump.triggered_mono_ns));
		if (!dump.snapshots.empty()) {
			const auto last = static_cast<std::int64_t>(dump.snapshots.back().snapshot.mono_ns);
			const auto at = static_cast<std::int64_t>(*dump.triggered_mono_ns);
			appendf(out, "triggered\t%.3f s %s the last snapshot\n", std::abs(static_cast<double>(last - at)) / 1e9,
				at <= last ? "before" : "after");
		}
	}
	for (const auto &[k, v] : dump.facts)
		out += k + "\t" + v + "\n";
	for (const auto &p : dump.pmu_plan)
		out += "pmu_plan\t" + p.series + "\t" + p.event + "\t" + p.pmu + "\t" + p.state + "\n";
	if (dump.rings)
		append_rings(out, *dump.rings);
	else
		out += "rings\tnone: " +
		       (dump.rings_absent.empty() ? std::string("this dump does not hold them") : dump.rings_absent) +
		       "\n";
	return out;
}

} // namespace hwsig
