// What the PMU backends report through: unavailable notes derived from the
// catalog's rules (pmu_backend.h).

#include <algorithm>

#include "hwsig/catalog.h"
#include "hwsig/pmu_backend.h"
#include "hwsig/scope.h"

namespace hwsig::pmu {

void PmuNotes::note(const std::string &id, const std::string &reason, const std::string &scope)
{
	for (const auto &n : notes_)
		if (n.id == id && n.scope == scope)
			return;
	notes_.push_back({id, scope, reason});
}

void PmuNotes::series_missing(const std::vector<std::string_view> &series, const std::string &reason,
			      const std::string &scope)
{
	for (const auto &id : metrics_reading(series))
		note(id, reason, scope);
}

void PmuNotes::replace_core(const std::string &reason)
{
	const auto core = metrics_reading(pmu_core_series());
	notes_.erase(std::remove_if(notes_.begin(), notes_.end(),
				    [&](const Note &n) {
					    return std::find(core.begin(), core.end(), n.id) != core.end();
				    }),
		     notes_.end());
	core_missing(reason);
}

void PmuNotes::forget(const std::string &scope)
{
	notes_.erase(std::remove_if(notes_.begin(), notes_.end(), [&](const Note &n) { return n.scope == scope; }),
		     notes_.end());
}

void PmuNotes::add_to(Snapshot &snap) const
{
	for (const auto &[id, scope, reason] : notes_)
		snap.add_unavailable(id, scope, reason);
}

std::string cpu_scope(unsigned cpu)
{
	return Scope::cpu(cpu).str();
}

} // namespace hwsig::pmu
