#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "hwsig/render.h"

namespace hwsig {

static std::string format_value(double v)
{
	char buf[48];
	if (std::fabs(v) >= 1e5 && std::fabs(v) < 1e15)
		std::snprintf(buf, sizeof(buf), "%.0f", v);
	else
		std::snprintf(buf, sizeof(buf), "%.4g", v);
	return buf;
}

static std::string format_time(std::uint64_t realtime_ns)
{
	std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
	struct tm tm;
	char buf[32];
	if (!localtime_r(&t, &tm) || !std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm))
		return "?";
	return buf;
}

// scope_width: pad the scope to it (-v: the source column after it lines up).
static void metric_line(std::string &out, const Metric &m, int scope_width)
{
	char buf[512];
	std::snprintf(buf, sizeof(buf), "  %-28s %14s  %-11s %-*s", m.id.c_str(), format_value(m.value).c_str(),
		      m.unit.c_str(), scope_width, m.scope.c_str());
	out += buf;
}

// The reason starts at the same column on every line: after the widest
// scope shown (at least 14), one space.
static void unavailable_line(std::string &out, const std::string &id, const std::string &scope,
			     const std::string &reason, int scope_width)
{
	char buf[768];
	std::snprintf(buf, sizeof(buf), "  %-28s %-*s %s\n", id.c_str(), scope_width, scope.c_str(),
		      reason.c_str());
	out += buf;
}

std::string render_table(const Interval &iv, const RenderOptions &opt)
{
	std::string out;
	char head[160];
	std::snprintf(head, sizeof(head), "hwsig stat  %s  %s (%.2f s)\n", format_time(iv.realtime_ns).c_str(),
		      opt.title.empty() ? "interval" : opt.title.c_str(), iv.interval_s);
	out += head;
	if (!opt.vm.empty() && !opt.vm_gone.empty())
		out += "vm:" + opt.vm + " is gone: " + opt.vm_gone + "\n";

	std::set<std::string> ids_with_values;
	int metric_scope_width = 0;
	for (const auto &m : iv.metrics)
		if (scope_visible(m.scope, opt)) {
			ids_with_values.insert(m.id);
			metric_scope_width = std::max(metric_scope_width, static_cast<int>(m.scope.size()));
		}

	for (Layer layer : {Layer::Cpu, Layer::Memory, Layer::Io, Layer::Vhost, Layer::Sched,
			    Layer::Thermal, Layer::Pressure}) {
		bool header = false;
		for (const auto &m : iv.metrics) {
			if (m.layer != layer || !scope_visible(m.scope, opt))
				continue;
			if (!header) {
				out += std::string(layer_name(layer)) + "\n";
				header = true;
			}
			metric_line(out, m, opt.verbose ? metric_scope_width : 0);
			if (opt.verbose) {
				out += "  [" + m.source + "]";
				if (!m.note.empty())
					out += " " + m.note;
			} else if (!m.note.empty()) {
				out += "  (" + m.note + ")";
			}
			out += "\n";
		}
	}

	// Unavailable: one line per metric and reason; scopes of a metric that
	// has values elsewhere only with -v (idle devices would drown the rest).
	struct Group {
		std::string first_scope;
		std::size_t scopes = 0;
	};
	std::vector<std::pair<std::pair<std::string, std::string>, Group>> groups;
	std::map<std::pair<std::string, std::string>, std::size_t> index;
	for (const auto &u : iv.unavailable) {
		if (!scope_visible(u.scope, opt) && u.scope != "system")
			continue;
		if (!opt.verbose && ids_with_values.count(u.id))
			continue;
		auto key = std::make_pair(u.id, u.reason);
		auto it = index.find(key);
		if (it == index.end() || opt.verbose) { // -v: every scope on a line of its own
			index.emplace(key, groups.size());
			groups.push_back({key, {u.scope, 1}});
		} else {
			groups[it->second].second.scopes++;
		}
	}
	if (!groups.empty()) {
		out += "Unavailable\n";
		std::vector<std::string> scopes;
		int width = 14;
		for (const auto &[key, g] : groups) {
			scopes.push_back(g.scopes == 1 ? g.first_scope
						       : g.first_scope + " +" + std::to_string(g.scopes - 1));
			width = std::max(width, static_cast<int>(scopes.back().size()));
		}
		for (std::size_t i = 0; i < groups.size(); ++i)
			unavailable_line(out, groups[i].first.first, scopes[i], groups[i].first.second, width);
	}
	return out;
}

} // namespace hwsig
