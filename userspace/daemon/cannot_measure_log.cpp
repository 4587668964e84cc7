#include "cannot_measure_log.h"

#include <functional>

#include "log.h"

namespace hwsigd {

namespace {

bool lasting(hwsig::UnavailableCode code)
{
	return !hwsig::transient(code) && code != hwsig::UnavailableCode::unknown;
}

// Configuration and an empty host are choices or states, not faults.
bool fault(hwsig::UnavailableCode code)
{
	return code != hwsig::UnavailableCode::disabled && code != hwsig::UnavailableCode::no_target;
}

// "a, b, c and 4 more": a line stays readable beside 500 VMs.
std::string listed(const std::set<std::string> &items, std::size_t shown)
{
	std::string out;
	std::size_t n = 0;
	for (const auto &item : items) {
		if (n == shown)
			return out + " and " + std::to_string(items.size() - shown) + " more";
		out += (n++ ? ", " : "") + item;
	}
	return out;
}

} // namespace

std::map<CannotMeasureLog::Reason, CannotMeasureLog::Kept>
CannotMeasureLog::group(const std::vector<hwsig::UnavailableNote> &notes)
{
	std::map<Reason, Kept> out;
	for (const auto &n : notes) {
		if (!lasting(n.code))
			continue;
		Kept &k = out[{n.code, n.reason}];
		k.ids.insert(n.id);
		k.scopes.insert(n.scope);
	}
	return out;
}

CannotMeasureLog::Line CannotMeasureLog::line(const Reason &reason, const Kept &kept)
{
	Line l;
	l.warning = fault(reason.first);
	const std::string_view code = hwsig::code_name(reason.first);
	l.text = "cannot measure " + listed(kept.ids, 8) + " at " +
		 (kept.scopes.size() == 1 ? *kept.scopes.begin()
					  : std::to_string(kept.scopes.size()) + " scopes (" + listed(kept.scopes, 3) + ")") +
		 ": " + reason.second + " [" + std::string(code) + "]";
	return l;
}

void CannotMeasureLog::seen(const std::vector<hwsig::UnavailableNote> &notes)
{
	// Most snapshots repeat the last one's notes word for word: beside
	// 200 VMs a thousand of them, compared faster than hashed.
	if (started_ && notes == last_)
		return;
	last_ = notes;
	std::size_t h = 0;
	const std::hash<std::string> hs;
	for (const auto &n : notes)
		if (lasting(n.code))
			h = h * 1000003u ^ (hs(n.id) + 31 * hs(n.scope) + 131 * hs(n.reason) +
					    static_cast<std::size_t>(n.code));
	if (started_ && h == hash_)
		return;
	started_ = true;
	hash_ = h;
	auto now = group(notes);
	for (const auto &[reason, kept] : now) {
		auto before = said_.find(reason);
		if (before != said_.end() && before->second.ids == kept.ids && before->second.scopes == kept.scopes)
			continue;
		const Line l = line(reason, kept);
		log(l.warning ? Level::Warning : Level::Info, "%s", l.text.c_str());
	}
	for (const auto &[reason, kept] : said_)
		if (!now.count(reason))
			log(Level::Info, "measured again: %s (no longer: %s)", listed(kept.ids, 8).c_str(),
			    reason.second.c_str());
	said_ = std::move(now);
}

} // namespace hwsigd
