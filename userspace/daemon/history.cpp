#include "history.h"

#include <cstdio>

namespace hwsigd {

namespace {
// VMs and devices come and go; their keys stay in the table until a
// compaction drops the ones no kept interval uses. This bounds the table by
// the keys of the intervals held, whatever the churn.
constexpr std::size_t kCompactAbove = 1u << 16;
} // namespace

std::uint32_t History::intern(const std::string &id, const std::string &scope)
{
	std::string k = id;
	k += '\0';
	k += scope;
	auto [it, added] = index_.try_emplace(std::move(k), static_cast<std::uint32_t>(keys_.size()));
	if (added)
		keys_.push_back({id, scope});
	return it->second;
}

void History::add(const hwsig::Interval &iv, bool keep_cpu)
{
	Entry e;
	e.realtime_ns = iv.realtime_ns;
	e.interval_s = iv.interval_s;
	e.values.reserve(iv.metrics.size());
	for (const auto &m : iv.metrics) {
		if (!keep_cpu && m.scope.rfind("cpu:", 0) == 0)
			continue;
		e.values.emplace_back(intern(m.id, m.scope), m.value);
	}
	entries_.push_back(std::move(e));
	while (entries_.size() > capacity_)
		entries_.pop_front();
	if (keys_.size() > kCompactAbove)
		compact_keys();
}

void History::set_capacity(std::size_t capacity)
{
	capacity_ = capacity;
	while (entries_.size() > capacity_)
		entries_.pop_front();
}

void History::compact_keys()
{
	std::vector<std::int64_t> remap(keys_.size(), -1);
	std::vector<Key> kept;
	index_.clear();
	for (auto &e : entries_)
		for (auto &[k, v] : e.values) {
			if (remap[k] < 0) {
				remap[k] = static_cast<std::int64_t>(kept.size());
				std::string name = keys_[k].id;
				name += '\0';
				name += keys_[k].scope;
				index_.emplace(std::move(name), static_cast<std::uint32_t>(kept.size()));
				kept.push_back(keys_[k]);
			}
			k = static_cast<std::uint32_t>(remap[k]);
		}
	keys_ = std::move(kept);
}

std::string encode_history(const History &h)
{
	std::string out = "hwsig-history\t1\n";
	char num[64];
	for (const auto &e : h.entries()) {
		std::snprintf(num, sizeof(num), "%.17g", e.interval_s);
		out += "I\t" + std::to_string(e.realtime_ns) + "\t" + num + "\n";
		for (const auto &[k, v] : e.values) {
			const auto &key = h.key(k);
			std::snprintf(num, sizeof(num), "%.17g", v);
			// Ids and scopes hold no tabs or newlines (catalog ids; VM
			// names are escaped by the snapshot wire, not here): replace
			// them rather than let a VM name break the line structure.
			std::string scope = key.scope;
			for (char &c : scope)
				if (c == '\t' || c == '\n')
					c = ' ';
			out += "V\t" + key.id + "\t" + scope + "\t" + num + "\n";
		}
	}
	out += "end\n";
	return out;
}

} // namespace hwsigd
