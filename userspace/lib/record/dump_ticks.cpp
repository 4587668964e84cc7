#include "hwsig/dump_ticks.h"

#include <linux/hwsig.h>

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <vector>

#include "hwsig/multiplex.h"

namespace hwsig {

namespace {

// Index of the first event with one of these names, or -1.
int find_event(const DumpRings &r, std::initializer_list<const char *> names)
{
	for (std::size_t i = 0; i < r.events.size(); ++i)
		for (const char *n : names)
			if (r.events[i].name == n)
				return static_cast<int>(i);
	return -1;
}

// The count of event i over the tick from a to b, scaled by that tick's
// enabled / running (multiplexing); nullopt when either record did not
// read the event, the counter went back (a restart), or it never ran.
std::optional<double> tick_count(const DumpRingRecord &a, const DumpRingRecord &b, std::size_t i)
{
	const std::uint32_t bit = 1u << i;
	if (!(a.valid_mask & bit) || !(b.valid_mask & bit))
		return std::nullopt;
	if (b.values[i] < a.values[i] || b.enabled[i] < a.enabled[i] || b.running[i] < a.running[i])
		return std::nullopt;
	return scale_interval(b.values[i] - a.values[i], b.enabled[i] - a.enabled[i], b.running[i] - a.running[i]);
}

std::string json_string(const std::string &s)
{
	std::string o = "\"";
	for (char c : s) {
		if (c == '"' || c == '\\') {
			o += '\\';
			o += c;
		} else if (static_cast<unsigned char>(c) < 0x20) {
			char b[8];
			std::snprintf(b, sizeof(b), "\\u%04x", c);
			o += b;
		} else {
			o += c;
		}
	}
	return o + "\"";
}

// v with `decimals` digits after the point.
std::string fixed(double v, int decimals)
{
	char b[64];
	std::snprintf(b, sizeof(b), "%.*f", decimals, v);
	return b;
}

// v in the shortest of %g's forms with `digits` significant digits (17:
// the double comes back bit for bit).
std::string general(double v, int digits)
{
	char b[64];
	std::snprintf(b, sizeof(b), "%.*g", digits, v);
	return b;
}

class Renderer {
public:
	Renderer(const DumpRings &r, const TickOptions &o) : r_(r), o_(o)
	{
		cycles_ = find_event(r, {"cycles", "cpu-cycles"});
		instructions_ = find_event(r, {"instructions"});
		ref_ = o.triggered_mono_ns.value_or(std::numeric_limits<std::uint64_t>::max());
		if (!o.triggered_mono_ns)
			for (const auto &c : r.cpus)
				if (!c.records.empty() && c.records.front().time_ns < ref_)
					ref_ = c.records.front().time_ns;
	}

	std::string run()
	{
		if (!o_.json) {
			out_ += "ticks of hwsig.ko's rings: every " + general(static_cast<double>(r_.interval_ns) / 1e6, 6) +
				" ms, " + std::to_string(r_.ring_records) + " records per ring, configuration " +
				std::to_string(r_.generation) + "; t_s: seconds " +
				(o_.triggered_mono_ns ? "from the trigger" : "from the oldest record") +
				"; counts are per tick (scaled when multiplexed)\n";
		}
		for (const auto &c : r_.cpus)
			if (!o_.cpu || *o_.cpu == c.cpu)
				cpu(c);
		return std::move(out_);
	}

private:
	void cpu(const DumpRingCpu &c)
	{
		// The losses between records (seq jumps); the rest of c.lost went
		// before the oldest record.
		std::uint64_t between = 0;
		for (std::size_t i = 1; i < c.records.size(); ++i)
			between += c.records[i].seq - c.records[i - 1].seq - 1;
		const std::uint64_t before = c.lost > between ? c.lost - between : 0;
		const std::uint64_t first_seq = c.records.empty() ? c.head + 1 : c.records.front().seq;
		if (o_.json) {
			out_ += "{\"cpu\":" + std::to_string(c.cpu) + ",\"online\":" + (c.online ? "true" : "false") +
				",\"head\":" + std::to_string(c.head) + ",\"records\":" + std::to_string(c.records.size()) +
				",\"lost\":" + std::to_string(c.lost) + ",\"earlier_configuration\":" +
				std::to_string(c.other_generation) + ",\"events\":[";
			for (std::size_t i = 0; i < r_.events.size(); ++i)
				out_ += (i ? "," : "") + json_string(r_.events[i].name);
			out_ += "]}\n";
		} else {
			out_ += "\ncpu " + std::to_string(c.cpu) + (c.online ? "" : " (offline)") + ": " +
				std::to_string(c.records.size()) + " records";
			if (!c.records.empty())
				out_ += " (seq " + std::to_string(first_seq) + ".." + std::to_string(c.records.back().seq) + ")";
			out_ += ", " + std::to_string(c.lost) + " lost of " + std::to_string(c.head) + " written\n";
			char h[64];
			std::snprintf(h, sizeof(h), "  %10s %10s %8s", "seq", "t_s", "dt_ms");
			out_ += h;
			for (const auto &e : r_.events) {
				std::snprintf(h, sizeof(h), " %16.16s", e.name.c_str());
				out_ += h;
			}
			if (ipc())
				out_ += "      ipc";
			out_ += "\n";
		}
		if (first_seq > 1 && (before || c.other_generation))
			gap(c, before, 1, first_seq - 1, c.other_generation);
		for (std::size_t i = 0; i < c.records.size(); ++i) {
			const DumpRingRecord &t = c.records[i];
			const DumpRingRecord *prev = i ? &c.records[i - 1] : nullptr;
			if (prev && t.seq != prev->seq + 1)
				gap(c, t.seq - prev->seq - 1, prev->seq + 1, t.seq - 1, 0);
			else if (prev && !(t.flags & HWSIG_RECORD_F_FIRST) && r_.interval_ns &&
				 t.time_ns - prev->time_ns > r_.interval_ns * 3 / 2)
				time_gap(c, t.time_ns - prev->time_ns);
			// A record after a restart (START, CPU online) counts from
			// zero: no tick to compute against the one before.
			row(c, t, prev && !(t.flags & HWSIG_RECORD_F_FIRST) ? prev : nullptr);
		}
	}

	bool ipc() const { return cycles_ >= 0 && instructions_ >= 0; }

	double t_s(std::uint64_t ns) const
	{
		return ns >= ref_ ? static_cast<double>(ns - ref_) / 1e9 : -static_cast<double>(ref_ - ns) / 1e9;
	}

	void gap(const DumpRingCpu &c, std::uint64_t lost, std::uint64_t from, std::uint64_t to, std::uint64_t earlier)
	{
		if (o_.json) {
			out_ += "{\"cpu\":" + std::to_string(c.cpu) + ",\"gap\":{\"lost\":" + std::to_string(lost) +
				",\"from_seq\":" + std::to_string(from) + ",\"to_seq\":" + std::to_string(to);
			if (earlier)
				out_ += ",\"earlier_configuration\":" + std::to_string(earlier);
			out_ += "}}\n";
			return;
		}
		out_ += "  -- gap: seq " + std::to_string(from) + ".." + std::to_string(to) + ": " + std::to_string(lost) +
			" records lost (overwritten before the dump read them)";
		if (earlier)
			out_ += ", " + std::to_string(earlier) + " of an earlier configuration left out";
		out_ += "\n";
	}

	void time_gap(const DumpRingCpu &c, std::uint64_t ns)
	{
		const double ticks = static_cast<double>(ns) / static_cast<double>(r_.interval_ns);
		if (o_.json) {
			out_ += "{\"cpu\":" + std::to_string(c.cpu) + ",\"time_gap\":{\"ns\":" + std::to_string(ns) +
				",\"ticks\":" + fixed(ticks, 1) + "}}\n";
			return;
		}
		out_ += "  -- gap: " + fixed(static_cast<double>(ns) / 1e6, 1) + " ms (" + fixed(ticks, 1) +
			" ticks) since the record before, none lost (ticks skipped or overrun by the module)\n";
	}

	void row(const DumpRingCpu &c, const DumpRingRecord &t, const DumpRingRecord *prev)
	{
		std::vector<std::optional<double>> counts(r_.events.size());
		if (prev)
			for (std::size_t i = 0; i < counts.size(); ++i)
				counts[i] = tick_count(*prev, t, i);
		std::optional<double> ipc_v;
		if (ipc() && counts[cycles_] && counts[instructions_] && *counts[cycles_] > 0)
			ipc_v = *counts[instructions_] / *counts[cycles_];
		if (o_.json) {
			out_ += "{\"cpu\":" + std::to_string(c.cpu) + ",\"seq\":" + std::to_string(t.seq) +
				",\"time_ns\":" + std::to_string(t.time_ns) + ",\"t_s\":" + fixed(t_s(t.time_ns), 9) +
				",\"dt_ns\":" + (prev ? std::to_string(t.time_ns - prev->time_ns) : "null") +
				",\"first\":" + ((t.flags & HWSIG_RECORD_F_FIRST) ? "true" : "false") + ",\"counts\":{";
			for (std::size_t i = 0; i < counts.size(); ++i)
				out_ += (i ? "," : "") + json_string(r_.events[i].name) + ":" +
					(counts[i] ? general(*counts[i], 17) : "null");
			out_ += "}";
			if (ipc())
				out_ += ",\"ipc\":" + (ipc_v ? general(*ipc_v, 6) : std::string("null"));
			out_ += "}\n";
			return;
		}
		char b[96];
		std::snprintf(b, sizeof(b), "  %10" PRIu64 " %10.3f %8s", t.seq, t_s(t.time_ns),
			      prev ? fixed(static_cast<double>(t.time_ns - prev->time_ns) / 1e6, 3).c_str()
				   : (t.flags & HWSIG_RECORD_F_FIRST) ? "first" : "-");
		out_ += b;
		for (const auto &v : counts) {
			std::snprintf(b, sizeof(b), " %16s", v ? fixed(*v, 0).c_str() : "-");
			out_ += b;
		}
		if (ipc()) {
			std::snprintf(b, sizeof(b), " %8s", ipc_v ? fixed(*ipc_v, 3).c_str() : "-");
			out_ += b;
		}
		out_ += "\n";
	}

	const DumpRings &r_;
	const TickOptions &o_;
	int cycles_ = -1, instructions_ = -1;
	std::uint64_t ref_ = 0;
	std::string out_;
};

} // namespace

std::string render_ticks(const DumpRings &rings, const TickOptions &opt)
{
	return Renderer(rings, opt).run();
}

} // namespace hwsig
