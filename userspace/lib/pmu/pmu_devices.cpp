// The sysfs PMU list (PmuDevices): every PMU's type, format terms, event
// aliases and cpumask, and events encoded against a PMU's format. Name
// resolution (generic, cache, software, raw names) is in pmu_alias.cpp.

#include "hwsig/pmu_devices.h"

#include <cerrno>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"

namespace hwsig {

PmuDevices::PmuDevices(std::string root) : root_(std::move(root))
{
	const std::string base = join_path(root_, "/sys/bus/event_source/devices");
	for (const std::string &name : list_dir(base)) {
		const std::string dir = base + "/" + name;
		PmuDevice d;
		d.name = name;
		auto type = read_trimmed(dir + "/type");
		auto tv = type ? parse_u64(*type) : std::nullopt;
		if (!tv || *tv > 0xffffffffu) {
			problems_.push_back(name + ": unreadable or malformed type");
			continue;
		}
		d.type = static_cast<std::uint32_t>(*tv);
		for (const std::string &f : list_dir(dir + "/format")) {
			auto spec = read_trimmed(dir + "/format/" + f);
			std::string why;
			auto parsed = spec ? parse_format_spec(*spec, &why) : std::nullopt;
			if (!parsed) {
				problems_.push_back(name + ": format/" + f + ": " + (spec ? why : "unreadable"));
				continue;
			}
			d.format.emplace(f, std::move(*parsed));
		}
		for (const std::string &e : list_dir(dir + "/events")) {
			if (e.find('.') != std::string::npos)
				continue; // .scale, .unit, .per-pkg, .snapshot: metadata
			if (auto terms = read_trimmed(dir + "/events/" + e))
				d.events.emplace(e, std::move(*terms));
		}
		if (auto mask = read_trimmed(dir + "/cpumask")) {
			if (auto cpus = parse_cpu_list(*mask))
				d.cpumask = std::move(*cpus);
			else
				problems_.push_back(name + ": malformed cpumask \"" + *mask + "\"");
		}
		devices_.push_back(std::move(d));
	}
}

const PmuDevice *PmuDevices::find(std::string_view name) const
{
	for (const auto &d : devices_)
		if (d.name == name)
			return &d;
	return nullptr;
}

const PmuDevice *PmuDevices::core_pmu() const
{
	if (const PmuDevice *p = find("cpu"))
		return p;
	return find("cpu_core");
}

PerfEventSpec PmuDevices::encode(const PmuDevice &pmu, std::string_view terms, std::string name) const
{
	std::string why;
	auto parsed = parse_event_terms(terms, &why);
	if (!parsed)
		throw Error("encoding event \"" + std::string(terms) + "\" for PMU " + pmu.name + ": " + why, EINVAL);
	PerfEventSpec spec;
	spec.name = name.empty() ? pmu.name + "/" + std::string(terms) + "/" : std::move(name);
	spec.type = pmu.type;
	for (const EventTerm &t : *parsed) {
		if (t.name == "config" || t.name == "config1" || t.name == "config2") {
			(t.name == "config" ? spec.config : t.name == "config1" ? spec.config1 : spec.config2) |= t.value;
			continue;
		}
		auto f = pmu.format.find(t.name);
		if (f == pmu.format.end())
			throw Error("encoding event \"" + std::string(terms) + "\": PMU " + pmu.name +
					    " has no format term \"" + t.name + "\"",
				    EINVAL);
		if (!apply_format(f->second, t.value, spec))
			throw Error("encoding event \"" + std::string(terms) + "\": value " + std::to_string(t.value) +
					    " does not fit the " + std::to_string(f->second.width()) +
					    "-bit term \"" + t.name + "\" of PMU " + pmu.name,
				    EINVAL);
	}
	return spec;
}

} // namespace hwsig
