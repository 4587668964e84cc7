// The event lists hwsig.ko is configured with: the default set (the core
// plan's events, or software events without a core PMU) and
// `hwsigctl kmod start --events LIST` resolved (pmu_plan.h).

#include "hwsig/pmu_plan.h"

namespace hwsig {

KmodEvent to_kmod_event(const PerfEventSpec &spec, std::string name)
{
	KmodEvent e;
	e.name = std::move(name);
	e.pmu_type = spec.type;
	e.config = spec.config;
	e.config1 = spec.config1;
	e.config2 = spec.config2;
	return e;
}

std::vector<KmodEvent> default_kmod_events(const PmuDevices &pmus, const CpuIdentity &cpu, bool *software_only)
{
	std::vector<KmodEvent> out;
	const bool software = pmus.core_pmu() == nullptr;
	if (software_only)
		*software_only = software;
	if (software) {
		for (const auto &n : default_software_event_names()) {
			PerfEventSpec spec = pmus.resolve(n);
			out.push_back(to_kmod_event(spec, spec.name));
		}
		return out;
	}
	for (const auto &s : plan_core_events(pmus, cpu).series)
		if (out.size() < HWSIG_MAX_EVENTS)
			out.push_back(to_kmod_event(s.event, s.event.name));
	return out;
}

std::vector<std::string> split_event_list(std::string_view list)
{
	// Commas separate events, but "pmu/event=1,umask=2/" has its own commas.
	std::vector<std::string> out;
	std::string cur;
	bool in_pmu = false;
	for (char c : list) {
		if (c == '/')
			in_pmu = !in_pmu;
		if (c == ',' && !in_pmu) {
			out.push_back(cur);
			cur.clear();
			continue;
		}
		cur.push_back(c);
	}
	out.push_back(cur);
	return out;
}

namespace {

// Names the default set uses ("stall-cycles", "l2-misses") are plan names,
// not perf names: look them up in this CPU's plan first.
KmodEvent resolve_kmod_event(const PmuDevices &pmus, const CorePlan &plan, const std::string &name)
{
	const PerfEventSpec *planned = nullptr;
	for (const auto &s : plan.series)
		if (s.event.name == name)
			planned = &s.event;
	return to_kmod_event(planned ? *planned : pmus.resolve(name), name);
}

} // namespace

std::vector<KmodEvent> kmod_events_for(const PmuDevices &pmus, const CpuIdentity &cpu,
				       const std::vector<std::string> &names)
{
	const auto plan = plan_core_events(pmus, cpu);
	std::vector<KmodEvent> events;
	for (const auto &name : names) {
		KmodEvent e = resolve_kmod_event(pmus, plan, name);
		// An uncore PMU counts per socket/die on the CPUs of its
		// cpumask: one event per such CPU, named "<event>@<cpu>".
		const auto slash = name.find('/');
		const PmuDevice *pmu = slash == std::string::npos ? nullptr : pmus.find(std::string_view(name).substr(0, slash));
		if (!pmu || pmu->cpumask.empty()) {
			events.push_back(std::move(e));
			continue;
		}
		for (unsigned c : pmu->cpumask) {
			KmodEvent per_cpu = e;
			per_cpu.name = name + "@" + std::to_string(c);
			per_cpu.cpu = static_cast<std::int32_t>(c);
			events.push_back(std::move(per_cpu));
		}
	}
	return events;
}

} // namespace hwsig
