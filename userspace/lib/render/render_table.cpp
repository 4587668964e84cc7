// The table: one block per interval, metrics by layer in human units (values
// past a verdict threshold marked '!' in the first column), the unavailable
// metrics (render_unavailable.cpp) and at most three verdict lines. Fits 80
// columns without -v: 2 + 26 (id) + 1 + 11 (value) + 1 + 10 (unit) + 1 leaves
// 28 for the scope; notes go on a line of their own.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

#include "hwsig/render.h"
#include "hwsig/scope.h"
#include "hwsig/units.h"

namespace hwsig {

namespace {

constexpr std::size_t kIdWidth = 26, kValueWidth = 11, kUnitWidth = 10;

std::string format_time(std::uint64_t realtime_ns)
{
	std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
	struct tm tm;
	char buf[32];
	if (!localtime_r(&t, &tm) || !std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm))
		return "?";
	return buf;
}

std::string bold(const std::string &s, const RenderOptions &opt)
{
	return opt.color ? "\033[1m" + s + "\033[0m" : s;
}

// scope_width: pad the scope to it (-v: the source column after it lines up).
std::string metric_line(const Metric &m, const RenderOptions &opt, std::size_t scope_width)
{
	const bool marked = opt.verdicts && opt.verdicts->marked(m.id, m.scope);
	const HumanValue h = humanize(m.value, m.unit);
	std::string value = pad((m.upper_bound ? "< " : "") + h.number, kValueWidth, false);
	if (marked && opt.color)
		value = "\033[1;31m" + value + "\033[0m";
	std::string line = marked ? "! " : "  ";
	line += pad(m.id, kIdWidth) + " " + value + " " + pad(h.unit, kUnitWidth) + " " +
		(scope_width ? pad(m.scope, scope_width) : m.scope);
	return line;
}

// Under table_vms, the VMs whose scopes are shown: the first by name; the
// others are counted in `more`. Empty: every VM's.
std::set<std::string, std::less<>> vms_shown(const Interval &iv, const RenderOptions &opt, std::size_t &more)
{
	more = 0;
	if (!opt.table_vms)
		return {};
	std::set<std::string, std::less<>> all;
	for (const auto &m : iv.metrics) {
		const Scope s = Scope::parse(m.scope);
		if (!s.vm().empty() && scope_visible(m.scope, opt))
			all.emplace(s.vm());
	}
	if (all.size() <= opt.table_vms)
		return {};
	more = all.size() - opt.table_vms;
	all.erase(std::next(all.begin(), static_cast<std::ptrdiff_t>(opt.table_vms)), all.end());
	return all;
}

} // namespace

std::string render_table(const Interval &iv, const RenderOptions &opt)
{
	std::string out;
	char head[160];
	std::snprintf(head, sizeof(head), "hwsig stat  %s  %s (%.2f s)", format_time(iv.realtime_ns).c_str(),
		      opt.title.empty() ? "interval" : opt.title.c_str(), iv.interval_s);
	out += bold(head, opt) + "\n";
	if (!opt.vm.empty() && !opt.vm_gone.empty())
		out += Scope::vm(opt.vm).str() + " is gone: " + opt.vm_gone + "\n";

	std::size_t more_vms = 0;
	const auto vms = vms_shown(iv, opt, more_vms);
	auto shown = [&](const std::string &scope) {
		if (!scope_visible(scope, opt))
			return false;
		if (vms.empty())
			return true;
		const Scope s = Scope::parse(scope);
		return s.vm().empty() || vms.count(s.vm()) != 0;
	};
	std::size_t scope_width = 0;
	for (const auto &m : iv.metrics)
		if (shown(m.scope))
			scope_width = std::max(scope_width, display_width(m.scope));

	for (Layer layer : {Layer::Cpu, Layer::Memory, Layer::Io, Layer::Vhost, Layer::Sched,
			    Layer::Thermal, Layer::Pressure}) {
		bool header = false;
		for (const auto &m : iv.metrics) {
			if (m.layer != layer || !shown(m.scope))
				continue;
			if (!header) {
				out += bold(std::string(layer_name(layer)), opt) + "\n";
				header = true;
			}
			out += metric_line(m, opt, opt.verbose ? scope_width : 0);
			if (opt.verbose) {
				out += "  [" + m.source + "]";
				if (!m.note.empty())
					out += " " + m.note;
			} else if (!m.note.empty()) {
				out += "\n      " + wrap("(" + m.note + ")", 6, 7);
			}
			out += "\n";
		}
	}
	if (more_vms)
		out += wrap("(" + std::to_string(more_vms) + " more VMs' scopes not shown: --vm NAME, or --vm 'GLOB,...', "
			    "shows them; hwsigctl top shows one line per VM)", 0, 1) + "\n";
	out += render_unavailable(iv, opt);
	out += render_verdict_lines(opt);
	return out;
}

} // namespace hwsig
