// --compact: one line per interval for watching a host over minutes, the
// header repeated every kCompactHeaderEvery lines like vmstat. The columns
// are the resources' headline signals; '!' before a value marks it past its
// verdict threshold, the last column names the most severe verdict (the
// full text is in the table form and in the JSON).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>

#include "hwsig/series.h"
#include "hwsig/render.h"
#include "hwsig/scope.h"
#include "hwsig/units.h"

namespace hwsig {

namespace {

struct Column {
	const char *header;
	std::size_t width;
};

// 8 + 9 columns of these widths + their separators = 70; 9 left for the verdict.
const Column kColumns[] = {{"steal", 5}, {"rq-p99", 6}, {"psi-c", 5}, {"psi-m", 5}, {"psi-i", 5},
			   {"dram", 9},  {"iops", 7},   {"io-p99", 6}, {"headr", 5}};

// Percentages in at most five columns: 0.94%, 9.99%, 45.2%, 100%.
std::string compact_percent(double pct)
{
	char buf[32];
	const double a = std::fabs(pct);
	if (pct == 0 || a < 0.005)
		return "0%";
	std::snprintf(buf, sizeof(buf), a < 9.995 ? "%.2f%%" : a < 99.95 ? "%.1f%%" : "%.0f%%", pct);
	return buf;
}

// upper_bound: "<2µs" (a bound is a slot's end, a round number: its
// digits are dropped to keep the column's width).
std::string compact_text(double v, const std::string &unit, bool upper_bound = false)
{
	if (!std::isfinite(v))
		return "-";
	if (unit == "ratio" || unit == "%")
		return compact_percent(unit == "ratio" ? v * 100 : v);
	HumanValue h = humanize(v, unit);
	if (h.number == "-")
		return "-";
	if (upper_bound && h.number.find('.') != std::string::npos) {
		h.number.erase(h.number.find_last_not_of('0') + 1);
		if (h.number.back() == '.')
			h.number.pop_back();
	}
	if (upper_bound)
		h.number.insert(0, "<");
	if (unit == "degC")
		h.unit = "C"; // five columns: "45.2C"
	// Counts per second: the header names them ("iops"), the width is the number's.
	if (unit != "B/s" && unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0)
		h.unit.clear();
	return h.number + h.unit;
}

struct Cell {
	std::string text = "-";
	bool marked = false;
};

class Cells {
public:
	Cells(const Interval &iv, const RenderOptions &opt) : iv_(iv), opt_(opt) {}

	// The value of id at the preferred scope (the VM's under --vm), else system.
	Cell one(const std::string &id)
	{
		const Metric *best = nullptr;
		for (const auto &m : iv_.metrics) {
			if (m.id != id || !scope_visible(m.scope, opt_))
				continue;
			if (m.scope == "system" && !best)
				best = &m;
			if (!opt_.vm.empty() && m.scope == Scope::vm(opt_.vm).str())
				best = &m;
		}
		if (!best)
			return {};
		return {compact_text(best->value, best->unit, best->upper_bound), marked(best->id, best->scope)};
	}

	// Sum (or max) over the visible scopes of a per-device or per-socket
	// metric family; system rows only where there are no others.
	Cell fold(const std::vector<std::string> &ids, bool max, Scope::Kind kind)
	{
		bool any = false, mark = false;
		double sum = 0;
		LargestValue largest;
		std::string unit;
		for (const auto &m : iv_.metrics) {
			if (std::find(ids.begin(), ids.end(), m.id) == ids.end() || !scope_visible(m.scope, opt_) ||
			    Scope::parse(m.scope).kind() != kind)
				continue;
			sum += m.value;
			largest.add(m.value, m.upper_bound);
			any = true;
			unit = m.unit;
			mark = mark || marked(m.id, m.scope);
		}
		if (!any)
			return {};
		return max ? Cell{compact_text(largest.value, unit, largest.upper_bound), mark}
			   : Cell{compact_text(sum, unit), mark};
	}

private:
	bool marked(const std::string &id, const std::string &scope) const
	{
		return opt_.verdicts && opt_.verdicts->marked(id, scope);
	}
	const Interval &iv_;
	const RenderOptions &opt_;
};

std::string header()
{
	std::string h = "time    ";
	for (const auto &c : kColumns)
		h += " " + pad(c.header, c.width, false);
	return h + " verdict\n";
}

// "disk vda", "CPU": the start of the most severe verdict line, +N more.
std::string verdict_cell(const RenderOptions &opt)
{
	if (!opt.verdicts || opt.verdicts->lines.empty())
		return "-";
	std::string first = opt.verdicts->lines[0];
	for (const char *state : {" saturated:", " fully used:", " errors:", " memory-bound:"})
		if (auto at = first.find(state); at != std::string::npos)
			first = first.substr(0, at);
	if (opt.verdicts->lines.size() > 1)
		first += " +" + std::to_string(opt.verdicts->lines.size() - 1);
	return first;
}

std::string clock_time(std::uint64_t realtime_ns)
{
	std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
	struct tm tm;
	char buf[16];
	if (!localtime_r(&t, &tm) || !std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm))
		return "?";
	return buf;
}

} // namespace

std::string render_compact(const Interval &iv, const RenderOptions &opt)
{
	std::string out = render_unavailable(iv, opt);
	if (opt.compact_notes) {
		*opt.compact_notes += out;
		out.clear();
	}
	// A header after notes in the output, so the columns are named again.
	if (opt.summary || !opt.compact_lines || *opt.compact_lines % kCompactHeaderEvery == 0 || !out.empty())
		out += header();
	if (opt.compact_lines)
		*opt.compact_lines = opt.summary ? 0 : *opt.compact_lines + 1;
	Cells cells(iv, opt);
	const Cell values[] = {
		cells.one(metric_id::kSchedStealRatio),
		cells.one(metric_id::kSchedRunqWaitP99Us),
		cells.one(metric_id::kPsiCpuSomePct),
		cells.one(metric_id::kPsiMemorySomePct),
		cells.one(metric_id::kPsiIoSomePct),
		cells.fold({metric_id::kMemImcReadBps, metric_id::kMemImcWriteBps, metric_id::kMemImcBps}, false,
			   Scope::Kind::System),
		cells.fold({metric_id::kIoIopsRead, metric_id::kIoIopsWrite}, false, Scope::Kind::Dev),
		cells.fold({metric_id::kIoLatencyP99Us}, true, Scope::Kind::Dev),
		cells.one(metric_id::kThermalHeadroomC),
	};
	std::string line = opt.summary ? "summary " : clock_time(iv.realtime_ns);
	for (std::size_t i = 0; i < sizeof(kColumns) / sizeof(kColumns[0]); ++i) {
		std::string cell = pad(values[i].text, kColumns[i].width, false);
		if (values[i].marked && opt.color)
			cell = "\033[1;31m" + cell + "\033[0m";
		line += (values[i].marked ? "!" : " ") + cell;
	}
	// The verdict cell is cut, never the line wrapped: one line per interval.
	const std::size_t room = 80 - std::min<std::size_t>(80, display_width(line) + 1);
	line += " " + verdict_cell(opt).substr(0, room);
	return out + line + "\n";
}

} // namespace hwsig
