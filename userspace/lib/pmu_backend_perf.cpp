// The PMU source's perf_event_open backend (pmu_backend.h): core counters
// from one set of event groups per online CPU, when hwsig.ko is not used.

#include <cerrno>

#include "hwsig/error.h"
#include "hwsig/series.h"
#include "hwsig/source_pmu.h"
#include "pmu_backend.h"

namespace hwsig {

namespace pmu {

namespace {

// Events that are compared with each other share a group, so that their
// ratio is exact even when the PMU multiplexes.
const std::vector<std::vector<const char *>> kGroups = {
	{series::kPmuCycles, series::kPmuInstructions, series::kPmuStallCycles},
	{series::kPmuL1dMisses, series::kPmuL2Misses},
	{series::kPmuLlcReferences, series::kPmuLlcMisses},
	{series::kPmuBranches, series::kPmuBranchMisses},
	{series::kPmuDtlbMisses, series::kPmuItlbMisses},
};

// On probe_cpu, the plan's events the kernel accepts; a series whose event
// it refuses is noted, and *cycles_err says why cycles failed (0: it did
// not).
std::map<std::string, PerfEventSpec> choose(unsigned probe_cpu, const CorePlan &plan, int *cycles_err, PmuNotes &notes)
{
	std::map<std::string, PerfEventSpec> chosen;
	*cycles_err = 0;
	for (const auto &s : plan.series) {
		try {
			PerfGroup::open({s.event}, static_cast<int>(probe_cpu));
			chosen.emplace(s.series, s.event);
		} catch (const Error &e) {
			if (s.series == series::kPmuCycles)
				*cycles_err = e.err();
			notes.series_missing({s.series}, "perf " + s.event.name + ": " + errno_name(e.err()));
		}
	}
	return chosen;
}

} // namespace

void PerfBackend::init(const std::vector<unsigned> &cpus, const CpuIdentity &cpu, const CorePlan &plan,
		       const std::string &kmod_problem, PmuNotes &notes)
{
	reset();
	int cycles_err = 0;
	const auto chosen = choose(cpus.front(), plan, &cycles_err, notes);
	if (cycles_err) {
		// Without cycles there is no core PMU to speak of: one reason
		// for every metric, replacing the per-event ones.
		std::string why = cycles_err == EACCES || cycles_err == EPERM
					  ? "perf_event_open not permitted (perf cycles: " + errno_name(cycles_err) +
						    "; needs CAP_PERFMON or kernel.perf_event_paranoid <= 0)"
					  : no_pmu_reason(cpu, cycles_err);
		if (!kmod_problem.empty() && kmod_problem != "hwsig.ko is idle")
			why += "; " + kmod_problem;
		notes.replace_core(why);
		return;
	}
	for (unsigned c : cpus) {
		for (const auto &members : kGroups) {
			std::vector<PerfEventSpec> events;
			std::vector<const char *> names;
			for (const char *s : members) {
				auto it = chosen.find(s);
				if (it == chosen.end())
					continue;
				events.push_back(it->second);
				names.push_back(s);
			}
			if (events.empty())
				continue;
			try {
				groups_.push_back(PerCpuGroup{c, names, PerfGroup::open(events, static_cast<int>(c))});
			} catch (const Error &e) {
				notes.series_missing({names.begin(), names.end()}, std::string("perf: ") + e.what(),
						     cpu_scope(c));
			}
		}
	}
}

void PerfBackend::collect(Snapshot &snap)
{
	for (std::size_t i = 0; i < groups_.size(); i++) {
		const PerCpuGroup &g = groups_[i];
		std::vector<CounterReading> members;
		try {
			members = g.group.read();
		} catch (const Error &) {
			continue; // e.g. the CPU went offline: no point this time
		}
		add_perf_group(counters_, g.cpu, static_cast<unsigned>(i), g.series, members);
	}
	counters_.add_to(snap, "perf");
}

} // namespace pmu

void add_perf_group(ScaledCounters &counters, unsigned cpu, unsigned group, const std::vector<const char *> &series,
		    const std::vector<CounterReading> &members)
{
	// Members share the group's times: a ratio of two of them scales both
	// by the same factor, which cancels, leaving the ratio of raw counts.
	for (std::size_t i = 0; i < members.size() && i < series.size(); i++)
		counters.read({group, static_cast<unsigned>(i)}, series[i], pmu::cpu_scope(cpu), members[i]);
}

} // namespace hwsig
