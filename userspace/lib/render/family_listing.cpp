// Mirrors the export rule of render_prometheus.cpp (Documentation/
// prometheus.rst, "Aggregate or breakdown, never both"): a series' host
// family carries its breakdown labels, its vm scopes go to hwsig_vm_*.
// tests/unit/test_family_listing.cpp holds the two to each other on the
// exposition of fixture hosts.
#include "hwsig/family_listing.h"

#include <sstream>
#include <utility>

#include "hwsig/catalog.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

namespace s = series;

std::vector<std::string> host_labels(const s::Def &d)
{
	std::vector<std::string> out;
	if (d.at & s::kAtVq)
		return {"vm", "queue"};
	for (const auto &[bit, label] : std::initializer_list<std::pair<unsigned, const char *>>{
		     {s::kAtCpu, "cpu"}, {s::kAtSocket, "socket"}, {s::kAtNode, "node"},
		     {s::kAtHugepages, "size"}, {s::kAtZone, "zone"}, {s::kAtDev, "device"}})
		if (d.at & bit)
			out.push_back(label);
	return out;
}

// The labels of hwsig_vm_<family>; empty when the series has none there.
std::vector<std::string> vm_labels(const s::Def &d)
{
	if (d.vm == s::VmExport::None)
		return {};
	std::vector<std::string> out;
	if (d.vm == s::VmExport::All && (d.at & s::kAtVm))
		out = {"vm"};
	if (d.at & s::kAtVmVcpu)
		out = {"vm", "vcpu"};
	if (d.at & s::kAtVmCulprit)
		out = {"vm", "culprit"};
	return out;
}

const char *type_name(s::Kind k)
{
	return k == s::Kind::Counter ? "counter" : k == s::Kind::Gauge ? "gauge" : "histogram";
}

std::string number(double v)
{
	std::ostringstream o;
	o << v;
	return o.str();
}

// "× 64", "÷ 100", "÷ 1e+06": raw unit to exported unit (a histogram's
// bucket bounds for a histogram).
std::string scale_of(const s::Def &d)
{
	const bool hist = d.kind == s::Kind::Histogram;
	const double scale = hist ? d.buckets.scale : d.scale, div = hist ? d.buckets.div : d.div;
	std::string out;
	if (scale != 1)
		out = "\xC3\x97 " + number(scale);
	if (div != 1)
		out += (out.empty() ? "" : " ") + std::string("\xC3\xB7 ") + number(div);
	return out;
}

} // namespace

std::vector<FamilyRow> prometheus_families()
{
	std::vector<FamilyRow> out;
	bool pmu = false;
	for (const s::Def &d : s::kRegistry) {
		if (!d.family)
			continue;
		const auto ids = metrics_reading({d.name});
		FamilyRow host{"hwsig_" + std::string(d.family), type_name(d.kind), host_labels(d), d.name,
			       scale_of(d), ids, d.help};
		out.push_back(host);
		if (d.at & s::kAtNodeHugepages) {
			FamilyRow node = host;
			node.family = "hwsig_node_" + std::string(d.family);
			node.labels = {"node", "size"};
			node.help += " Per NUMA node.";
			out.push_back(node);
		}
		if (auto labels = vm_labels(d); !labels.empty()) {
			FamilyRow vm = host;
			vm.family = "hwsig_vm_" + std::string(d.family);
			vm.labels = std::move(labels);
			out.push_back(vm);
		}
		pmu = pmu || d.pmu;
	}
	if (pmu) {
		// Labelled like the counter: the family, then its cpu, socket or vm.
		const std::vector<std::string> labels = {"counter", "cpu", "socket", "vm"};
		out.push_back({own_family::kPmuEnabled, "counter", labels, "", "", {}, own_family::kPmuEnabledHelp});
		out.push_back({own_family::kPmuRunning, "counter", labels, "", "", {}, own_family::kPmuRunningHelp});
	}
	out.push_back({own_family::kUnavailable, "gauge", {"metric", "scope", "reason"}, "", "", {},
		       own_family::kUnavailableHelp});
	out.push_back({own_family::kBuildInfo, "info", {"version"}, "", "", {}, own_family::kBuildInfoHelp});
	out.push_back({own_family::kVmInfo, "info", {"vm", "pid"}, "", "", {}, own_family::kVmInfoHelp});
	return out;
}

} // namespace hwsig
