#include "hwsig/dump_info.h"

#include <cstdarg>
#include <cstdio>

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

std::string render_dump_info(const DumpContents &dump)
{
	std::string out;
	appendf(out, "format\t%d\ntrigger\t%s\ncreated_ns\t%llu\nsnapshots\t%zu\n", dump.version, dump.trigger.c_str(),
		ull(dump.created_ns), dump.snapshots.size());
	if (!dump.snapshots.empty())
		appendf(out, "first_snapshot_mono_ns\t%llu\nlast_snapshot_mono_ns\t%llu\n",
			ull(dump.snapshots.front().snapshot.mono_ns), ull(dump.snapshots.back().snapshot.mono_ns));
	if (dump.triggered_mono_ns)
		appendf(out, "triggered_mono_ns\t%llu\n", ull(*dump.triggered_mono_ns));
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
