// Mirrors the export rule of render_prometheus.cpp (Documentation/
// prometheus.rst, "Aggregate or breakdown, never both"): a series' host
// family carries its breakdown labels, its vm scopes go to hwsig_vm_*.
// tests/unit/test_family_listing.cpp holds the two to each other on the
// exposition of fixture hosts.
#include "hwsig/family_listing.h"

#include <sstream>
#include <utility>

#include "hwsig/catalog.h"
#include "hwsig/render_prometheus.h"
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
	if (d.at & s::kAtVmVcpu)
		return {"vm", "vcpu"};
	if (d.at & s::kAtVmCulprit)
		return {"vm", "culprit"};
	if (d.vm != s::VmExport::PartsOnly && (d.at & s::kAtVm))
		return {"vm"};
	return {};
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

// Series per labelled sample: 1, or a histogram's bucket lines, +Inf,
// _sum and _count (only the coarse buckets where the text keeps those).
unsigned each_of(const s::Def &d, bool coarse)
{
	if (d.kind != s::Kind::Histogram)
		return 1;
	const s::Buckets &b = d.buckets;
	unsigned finite = b.slots - (b.open_last ? 1 : 0);
	if (coarse) {
		finite = 0;
		for (double c : b.coarse)
			finite += c > 0;
	}
	return finite + 3;
}

CountPer host_per(const s::Def &d)
{
	if (d.at & s::kAtSocket)
		return CountPer::Socket;
	if (d.at & s::kAtNode)
		return CountPer::Node;
	if (d.at & s::kAtHugepages)
		return CountPer::HugepageSize;
	if (d.at & s::kAtZone)
		return CountPer::Zone;
	if (d.at & s::kAtDev)
		return CountPer::Device;
	return CountPer::Host; // system (cpu="N" with per-cpu, a queue with per-queue)
}

constexpr unsigned kHostScopes =
	s::kAtSystem | s::kAtCpu | s::kAtSocket | s::kAtNode | s::kAtHugepages | s::kAtZone | s::kAtDev | s::kAtVq;

// The switch a row's hwsig_vm_* family needs, "" if none.
std::string vm_needs(const s::Def &d)
{
	if (d.vm == s::VmExport::PartsOnly)
		return "per-vcpu";
	return d.vm == s::VmExport::Detail ? "vm-detail" : "";
}

} // namespace

// A row with the defaults of its counting fields (brace-initialising the
// struct would leave them out, which -Wextra reports).
static FamilyRow family_row(std::string family, std::string type, std::vector<std::string> labels, std::string source,
		     std::string scale, std::vector<std::string> ids, std::string help)
{
	FamilyRow row;
	row.family = std::move(family);
	row.type = std::move(type);
	row.labels = std::move(labels);
	row.source = std::move(source);
	row.scale = std::move(scale);
	row.ids = std::move(ids);
	row.help = std::move(help);
	return row;
}

std::vector<FamilyRow> prometheus_families()
{
	std::vector<FamilyRow> out;
	bool pmu = false;
	for (const s::Def &d : s::kRegistry) {
		if (!d.family)
			continue;
		const auto ids = metrics_reading({d.name});
		FamilyRow host = family_row("hwsig_" + std::string(d.family), type_name(d.kind), host_labels(d), d.name,
					    scale_of(d), ids, d.help);
		host.per = host_per(d);
		host.each = each_of(d, host.per == CountPer::Device);
		host.pmu = d.pmu;
		// resctrl's series exist only with hwsigd's resctrl = true.
		if (std::string_view(d.name).starts_with("resctrl."))
			host.needs = "resctrl";
		if (d.at & kHostScopes)
			out.push_back(host);
		if (d.at & s::kAtNodeHugepages) {
			FamilyRow node = host;
			node.family = "hwsig_node_" + std::string(d.family);
			node.labels = {"node", "size"};
			node.help += " Per NUMA node.";
			node.per = CountPer::NodeHugepageSize;
			out.push_back(node);
		}
		if (auto labels = vm_labels(d); !labels.empty()) {
			FamilyRow vm = host;
			vm.family = "hwsig_vm_" + std::string(d.family);
			vm.labels = std::move(labels);
			vm.needs = host.needs.empty() ? vm_needs(d) : host.needs;
			vm.per = d.vm == s::VmExport::PartsOnly ? CountPer::VmVcpu : CountPer::Vm;
			vm.each = each_of(d, true);
			vm.pmu = false; // per VM: hwsigd's scaled estimate, no times
			if (d.at & s::kAtVmCulprit) {
				// Every culprit class: preemptions never have an idle CPU next.
				vm.each = d.name == std::string_view(s::kVmPreemptedBy) ? 5 : 6;
				out.push_back(vm);
				FamilyRow named = vm;
				named.family = "hwsig_vm_" + std::string(d.by_vm);
				named.labels = {"vm", "culprit_vm"};
				named.needs = d.vm == s::VmExport::All ? "" : "culprit-matrix";
				named.per = d.vm == s::VmExport::All ? CountPer::Vm : CountPer::VmPair;
				named.each = d.vm == s::VmExport::All ? ExportSwitches{}.culprit_top : 1;
				out.push_back(named);
				continue;
			}
			out.push_back(vm);
		}
		pmu = pmu || d.pmu;
	}
	if (pmu) {
		// Labelled like the counter: the family, then its cpu or socket.
		const std::vector<std::string> labels = {"counter", "cpu", "socket"};
		FamilyRow enabled =
			family_row(own_family::kPmuEnabled, "counter", labels, "", "", {}, own_family::kPmuEnabledHelp);
		enabled.per = CountPer::PmuSample;
		out.push_back(enabled);
		FamilyRow running = enabled;
		running.family = own_family::kPmuRunning;
		running.help = own_family::kPmuRunningHelp;
		out.push_back(running);
	}
	FamilyRow unavailable = family_row(own_family::kUnavailable, "gauge", {"metric", "scope", "reason"}, "", "",
					   {}, own_family::kUnavailableHelp);
	unavailable.each = 0; // none on a host that measures everything
	out.push_back(unavailable);
	out.push_back(family_row(own_family::kBuildInfo, "info", {"version"}, "", "", {}, own_family::kBuildInfoHelp));
	FamilyRow vm_info = family_row(own_family::kVmInfo, "info", {"vm", "pid"}, "", "", {}, own_family::kVmInfoHelp);
	vm_info.per = CountPer::Vm;
	out.push_back(vm_info);
	return out;
}

std::string count_text(const FamilyRow &row)
{
	const char *per = "";
	switch (row.per) {
	case CountPer::Host: return std::to_string(row.each);
	case CountPer::Socket: per = "sockets"; break;
	case CountPer::Node: per = "nodes"; break;
	case CountPer::HugepageSize: per = "page sizes"; break;
	case CountPer::NodeHugepageSize: per = "nodes \xC3\x97 page sizes"; break;
	case CountPer::Zone: per = "zones"; break;
	case CountPer::Device: per = "devices"; break;
	case CountPer::Vm: per = "VMs"; break;
	case CountPer::VmVcpu: per = "vCPUs"; break;
	case CountPer::VmPair: per = "VMs\xC2\xB2"; break;
	case CountPer::Queue: per = "virtqueues"; break;
	case CountPer::PmuSample: return "PMU samples";
	}
	return row.each == 1 ? per : std::string(per) + " \xC3\x97 " + std::to_string(row.each);
}

std::size_t series_count(const FamilyRow &row, const HostShape &h, const std::vector<FamilyRow> &rows)
{
	if (!row.needs.empty())
		return 0;
	std::size_t n = 1;
	switch (row.per) {
	case CountPer::Host: break;
	case CountPer::Socket: n = h.sockets; break;
	case CountPer::Node: n = h.nodes; break;
	case CountPer::HugepageSize: n = h.hugepage_sizes; break;
	case CountPer::NodeHugepageSize: n = std::size_t{h.nodes} * h.hugepage_sizes; break;
	case CountPer::Zone: n = h.zones; break;
	case CountPer::Device: n = h.devices; break;
	case CountPer::Vm: n = h.vms; break;
	case CountPer::VmVcpu: n = std::size_t{h.vms} * h.vcpus_per_vm; break;
	case CountPer::VmPair: n = std::size_t{h.vms} * (h.vms ? h.vms - 1 : 0); break;
	case CountPer::Queue: n = std::size_t{h.vms} * h.queues_per_vm; break;
	case CountPer::PmuSample:
		n = 0;
		for (const FamilyRow &r : rows)
			if (r.pmu)
				n += series_count(r, h, rows);
		break;
	}
	return n * row.each;
}

} // namespace hwsig
