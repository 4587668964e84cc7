// What the PMU backends report through: unavailable notes derived from the
// catalog's rules (pmu_backend.h).

#include <algorithm>

#include "hwsig/catalog.h"
#include "hwsig/pmu_backend.h"
#include "hwsig/scope.h"

namespace hwsig::pmu {

void PmuNotes::note(const std::string &id, UnavailableCode code, const std::string &reason,
		    const std::string &scope)
{
	for (const auto &n : notes_)
		if (n.id == id && n.scope == scope)
			return;
	notes_.push_back({id, scope, code, reason});
}

void PmuNotes::series_missing(const std::vector<std::string_view> &series, UnavailableCode code,
			      const std::string &reason, const std::string &scope)
{
	for (const auto &id : metrics_reading(series))
		note(id, code, reason, scope);
}

void PmuNotes::replace_core(UnavailableCode code, const std::string &reason)
{
	const auto core = metrics_reading(pmu_core_series());
	notes_.erase(std::remove_if(notes_.begin(), notes_.end(),
				    [&](const Note &n) {
					    return std::find(core.begin(), core.end(), n.id) != core.end();
				    }),
		     notes_.end());
	core_missing(code, reason);
}

void PmuNotes::forget(const std::string &scope)
{
	notes_.erase(std::remove_if(notes_.begin(), notes_.end(), [&](const Note &n) { return n.scope == scope; }),
		     notes_.end());
}

void PmuNotes::add_to(Snapshot &snap) const
{
	for (const auto &[id, scope, code, reason] : notes_)
		snap.add_unavailable(id, scope, code, reason);
}

std::string cpu_scope(unsigned cpu)
{
	return Scope::cpu(cpu).str();
}

} // namespace hwsig::pmu
