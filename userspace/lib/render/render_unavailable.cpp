// The table's "Unavailable" section. Without -v: grouped by reason ("9 core
// PMU metrics: no hardware PMU: ..."), the whole list at the start of a run
// and in its summary, in between only what changed. With -v: every metric
// and scope, every interval (the reason starts at one column).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "hwsig/catalog.h"
#include "hwsig/render.h"

namespace hwsig {

namespace {

std::string source_of(const std::string &id)
{
	for (const auto &d : catalog())
		if (d.id == id)
			return d.source == "PMU" ? "core PMU" : d.source;
	return "";
}

// "cpu.ipc: reason" or "9 core PMU metrics: reason" (ids in catalog order).
std::string group_line(const std::vector<std::string> &ids, const std::string &reason)
{
	std::string head;
	if (ids.size() == 1) {
		head = ids[0];
	} else {
		std::string src = source_of(ids[0]);
		for (const auto &id : ids)
			if (source_of(id) != src)
				src.clear();
		head = std::to_string(ids.size()) + (src.empty() ? "" : " " + src) + " metrics";
	}
	return "  " + wrap(head + ": " + reason, 2, 6) + "\n";
}

// reason -> ids, in the order reasons first appear (catalog order).
using Groups = std::vector<std::pair<std::string, std::vector<std::string>>>;

void add(Groups &g, const std::string &reason, const std::string &id)
{
	for (auto &[r, ids] : g)
		if (r == reason) {
			if (std::find(ids.begin(), ids.end(), id) == ids.end())
				ids.push_back(id);
			return;
		}
	g.push_back({reason, {id}});
}

void unavailable_line(std::string &out, const std::string &id, const std::string &scope,
		      const std::string &reason, int scope_width)
{
	char buf[768];
	std::snprintf(buf, sizeof(buf), "  %-28s %-*s %s\n", id.c_str(), scope_width, scope.c_str(),
		      reason.c_str());
	out += buf;
}

std::string verbose_list(const Interval &iv, const RenderOptions &opt)
{
	std::string out;
	int width = 14;
	for (const auto &u : iv.unavailable)
		if (scope_visible(u.scope, opt) || u.scope == "system")
			width = std::max(width, static_cast<int>(u.scope.size()));
	for (const auto &u : iv.unavailable)
		if (scope_visible(u.scope, opt) || u.scope == "system")
			unavailable_line(out, u.id, u.scope, u.reason, width);
	return out.empty() ? out : "Unavailable\n" + out;
}

} // namespace

std::string render_unavailable(const Interval &iv, const RenderOptions &opt)
{
	if (opt.verbose)
		return verbose_list(iv, opt);
	// A metric with values in some scopes: its other scopes are -v detail
	// (idle devices would drown the rest).
	std::set<std::string> with_values;
	for (const auto &m : iv.metrics)
		if (scope_visible(m.scope, opt))
			with_values.insert(m.id);
	Groups all;
	std::map<std::string, std::string> now; // id -> lasting reason
	for (const auto &u : iv.unavailable) {
		if ((!scope_visible(u.scope, opt) && u.scope != "system") || with_values.count(u.id))
			continue;
		add(all, u.reason, u.id);
		// One that holds for this interval only is no change worth announcing.
		if (!transient(u.code) && !now.count(u.id))
			now[u.id] = u.reason;
	}
	std::string out;
	UnavailableSaid *said = opt.summary ? nullptr : opt.said;
	if (!said || !said->started) {
		for (const auto &[reason, ids] : all)
			out += group_line(ids, reason);
		if (said) {
			said->started = true;
			said->reason = now;
		}
		return out.empty() ? out : "Unavailable\n" + out;
	}
	Groups changed;
	std::vector<std::string> measured;
	for (const auto &[id, reason] : now) {
		auto it = said->reason.find(id);
		if (it == said->reason.end() || it->second != reason)
			add(changed, reason, id);
	}
	for (const auto &[id, reason] : said->reason)
		if (!now.count(id) && with_values.count(id))
			measured.push_back(id);
	said->reason = now;
	// Catalog order within each group, as at the start.
	std::map<std::string, std::size_t> rank;
	for (const auto &d : catalog())
		rank[d.id] = rank.size();
	for (auto &[reason, ids] : changed) {
		std::sort(ids.begin(), ids.end(), [&](const auto &a, const auto &b) { return rank[a] < rank[b]; });
		out += group_line(ids, reason);
	}
	if (!measured.empty()) {
		std::sort(measured.begin(), measured.end(),
			  [&](const auto &a, const auto &b) { return rank[a] < rank[b]; });
		std::string ids;
		for (const auto &id : measured)
			ids += (ids.empty() ? "" : ", ") + id;
		out += "  " + wrap("measured again: " + ids, 2, 6) + "\n";
	}
	return out.empty() ? out : "Unavailable now\n" + out;
}

} // namespace hwsig
