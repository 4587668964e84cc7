// The PMU source's perf_event_open backend (pmu_backend.h): core counters
// from one set of event groups per online CPU, when hwsig.ko is not used.

#include <algorithm>
#include <cerrno>

#include "hwsig/error.h"
#include "hwsig/parse.h"
#include "hwsig/series.h"
#include "hwsig/source_pmu.h"
#include "hwsig/pmu_backend.h"

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
			notes.series_missing({s.series}, errno_code(e.err()), "perf " + s.event.name + ": " + errno_name(e.err()));
		}
	}
	return chosen;
}

} // namespace

void PerfBackend::reset()
{
	sets_.clear();
	cpus_.clear();
	counters_.clear();
}

std::optional<std::vector<unsigned>> PerfBackend::online_cpus()
{
	auto r = online_file_.read(online_path_, 64 * 1024);
	if (!r.data)
		return std::nullopt;
	auto cpus = parse_cpu_list(*r.data);
	if (!cpus || cpus->empty())
		return std::nullopt;
	std::sort(cpus->begin(), cpus->end());
	return cpus;
}

void PerfBackend::init(const std::string &root, const CpuIdentity &cpu, const CorePlan &plan,
		       const std::string &kmod_problem, PmuNotes &notes)
{
	reset();
	online_path_ = join_path(root, "/sys/devices/system/cpu/online");
	const auto cpus = online_cpus();
	if (!cpus) {
		notes.core_missing(UnavailableCode::read_error, "cannot read the online CPU list");
		return;
	}
	int cycles_err = 0;
	const auto chosen = choose(cpus->front(), plan, &cycles_err, notes);
	if (cycles_err) {
		// Without cycles there is no core PMU to speak of: one reason
		// for every metric, replacing the per-event ones.
		const bool denied = cycles_err == EACCES || cycles_err == EPERM;
		std::string why = denied ? "perf_event_open not permitted (perf cycles: " + errno_name(cycles_err) +
						   "; needs CAP_PERFMON or kernel.perf_event_paranoid <= 0)"
					 : no_pmu_reason(cpu, cycles_err);
		if (!kmod_problem.empty() && kmod_problem != "hwsig.ko is idle")
			why += "; " + kmod_problem;
		notes.replace_core(denied ? UnavailableCode::permission : UnavailableCode::unsupported, why);
		return;
	}
	for (const auto &members : kGroups) {
		std::vector<const char *> names;
		std::vector<PerfEventSpec> events;
		for (const char *s : members) {
			auto it = chosen.find(s);
			if (it == chosen.end())
				continue;
			names.push_back(s);
			events.push_back(it->second);
		}
		sets_.emplace_back(std::move(names), std::move(events));
	}
	for (unsigned c : *cpus)
		open_cpu(c, notes);
}

void PerfBackend::open_cpu(unsigned cpu, PmuNotes &notes)
{
	std::vector<Group> &groups = cpus_[cpu];
	for (std::size_t i = 0; i < sets_.size(); i++) {
		const auto &[names, events] = sets_[i];
		if (events.empty())
			continue;
		// Stable per (CPU, group): a CPU back online continues its sums.
		const auto id = static_cast<unsigned>(cpu * sets_.size() + i);
		try {
			groups.push_back(Group{id, names, PerfGroup::open(events, static_cast<int>(cpu))});
		} catch (const Error &e) {
			notes.series_missing({names.begin(), names.end()}, errno_code(e.err()), std::string("perf: ") + e.what(),
					     cpu_scope(cpu));
			continue;
		}
		// Its counts start from zero again (a CPU back online).
		for (unsigned m = 0; m < names.size(); m++)
			counters_.restart({id, m});
	}
}

void PerfBackend::collect(Snapshot &snap, PmuNotes &notes)
{
	if (sets_.empty())
		return;
	// The kernel takes a CPU's perf events off it when it goes offline
	// and does not put them back when it returns: follow the online list,
	// not the one init() saw. Unreadable this time: keep what is open.
	if (const auto online = online_cpus()) {
		for (auto it = cpus_.begin(); it != cpus_.end();) {
			if (std::binary_search(online->begin(), online->end(), it->first)) {
				++it;
				continue;
			}
			// Its counters keep their totals in the system sum
			// (ScaledCounters); its own notes go with it.
			notes.forget(cpu_scope(it->first));
			it = cpus_.erase(it);
		}
		for (unsigned c : *online)
			if (!cpus_.count(c))
				open_cpu(c, notes);
	}
	std::vector<unsigned> stopped;
	for (auto &[cpu, groups] : cpus_) {
		for (Group &g : groups) {
			std::vector<CounterReading> members;
			try {
				members = g.group.read();
			} catch (const Error &) {
				// Still counting: the next read holds this
				// interval's counts too (ScaledCounters says so).
				for (unsigned m = 0; m < g.series.size(); m++)
					counters_.read_failed({g.id, m});
				continue;
			}
			// An enabled group's enabled time always advances. It stops
			// when the kernel took the group off its CPU: the CPU went
			// offline and came back between two collects, and the online
			// list looks the same. Open that CPU's groups again (their
			// counts continue the old ones'); what it counted while its
			// groups were off is lost.
			if (!members.empty() && g.last_enabled_ns && members.front().enabled_ns == g.last_enabled_ns) {
				stopped.push_back(cpu);
				break;
			}
			if (!members.empty())
				g.last_enabled_ns = members.front().enabled_ns;
			add_perf_group(counters_, cpu, g.id, g.series, members);
		}
	}
	for (unsigned cpu : stopped) {
		notes.forget(cpu_scope(cpu));
		cpus_.erase(cpu);
		open_cpu(cpu, notes);
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
