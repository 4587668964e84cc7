// Which series of a snapshot /metrics exports, under which names and labels:
// Documentation/prometheus.rst is the contract (names, units, labels, the
// aggregate-vs-breakdown rule, the series budget and its switches, the
// histogram bucket and _sum rules). exposition.cpp spells the result in a
// wire format.
#include "hwsig/render_prometheus.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "exposition.h"
#include "hwsig/family_listing.h"
#include "hwsig/http_header_list.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

using expo::Exposition;
using expo::Labels;
using expo::Type;

// --- scopes -> labels --------------------------------------------------------

enum class ScopeKind { System, Cpu, Breakdown, Device, NodeHugepages, Vm, VmVcpu, VmCulprit, Vq, Skip };

struct ScopeLabels {
	ScopeKind kind = ScopeKind::Skip;
	Labels labels;
};

std::string vm_name_of(unsigned pid, const std::vector<Vm> *vms)
{
	if (vms)
		for (const Vm &vm : *vms)
			if (vm.pid >= 0 && static_cast<unsigned>(vm.pid) == pid)
				return vm.name;
	return "pid-" + std::to_string(pid);
}

// A virtqueue's queue label: "<index>-<rx|tx>".
std::string queue_label(const Scope &vq)
{
	return std::to_string(vq.queue()) + (vq.direction() == Scope::Direction::Tx ? "-tx" : "-rx");
}

// Labels named by the scope's kind, valued by its parts; "*" for all the
// scopes of a kind (cpu:*, dev:*...).
ScopeLabels scope_labels(const Scope &s, const std::vector<Vm> *vms)
{
	using K = Scope::Kind;
	const bool all = s.kind() == K::All;
	auto text = [all](std::string_view part) { return std::string(all ? "*" : part); };
	auto num = [all](unsigned n) { return all ? std::string("*") : std::to_string(n); };
	switch (all ? s.all_of() : s.kind()) {
	case K::System: return {ScopeKind::System, {}};
	case K::Cpu: return {ScopeKind::Cpu, {{"cpu", num(s.cpu())}}};
	case K::Socket: return {ScopeKind::Breakdown, {{"socket", num(s.socket())}}};
	case K::Node: return {ScopeKind::Breakdown, {{"node", num(s.node())}}};
	case K::NodeHugepages:
		return {ScopeKind::NodeHugepages, {{"node", num(s.node())}, {"size", text(s.hugepage_size())}}};
	case K::Hugepages: return {ScopeKind::Breakdown, {{"size", text(s.hugepage_size())}}};
	case K::Zone: return {ScopeKind::Breakdown, {{"zone", text(s.zone())}}};
	case K::Dev: return {ScopeKind::Device, {{"device", text(s.dev())}}};
	case K::Vm: return {ScopeKind::Vm, {{"vm", text(s.vm())}}};
	case K::VmVcpu: return {ScopeKind::VmVcpu, {{"vm", text(s.vm())}, {"vcpu", num(s.vcpu())}}};
	case K::VmCulprit: return {ScopeKind::VmCulprit, {{"vm", text(s.vm())}, {"culprit", text(s.culprit())}}};
	case K::Vq:
		if (all)
			return {};
		return {ScopeKind::Vq, {{"vm", vm_name_of(s.pid(), vms)}, {"queue", queue_label(s)}}};
	default:
		// pid:N, vm:NAME/dev:DISK (a VM's requests per disk: stat and
		// JSON only, prometheus.rst) and anything unknown: Skip.
		return {};
	}
}

// The scope label of an unavailable note: cpu:N folds into cpu:* without
// per_cpu, pid:N is left out (never a pid), vq:PID:I:D names the VM instead.
std::optional<std::string> note_scope(const std::string &scope, const ExportInput &in)
{
	using K = Scope::Kind;
	const Scope s = Scope::parse(scope);
	if (s.kind() == K::Cpu)
		return in.switches.per_cpu ? scope : Scope::all(K::Cpu).str();
	if (s.kind() == K::Pid || s.all_of() == K::Pid)
		return std::nullopt;
	if (s.kind() == K::Vq)
		return "vq:" + vm_name_of(s.pid(), in.vms) + ":" + std::to_string(s.queue()) +
		       (s.direction() == Scope::Direction::Tx ? ":tx" : ":rx");
	return scope;
}

// --- which scopes --------------------------------------------------------------

template <typename P> struct Pick {
	Labels labels;
	const P *point;
	bool coarse; // a histogram's text keeps only its coarse buckets
};

template <typename P> struct Selected {
	std::vector<Pick<P>> host, vm, node_hugepages;
};

// Whether a row's vm:NAME scope goes to hwsig_vm_<family>.
bool vm_exported(const series::Def &def, const ExportSwitches &sw)
{
	if ((def.at & series::kAtVq) && sw.per_queue)
		return false; // the queues carry the vm label: sum by (vm)
	switch (def.vm) {
	case series::VmExport::All: return true;
	case series::VmExport::Detail: return sw.vm_detail;
	case series::VmExport::PartsOnly: return false;
	}
	return false;
}

// The scopes of one raw series that are exported, by the rule of
// Documentation/prometheus.rst: a breakdown (cpu:N with per-cpu, socket,
// node, zone, hugepages size, device, virtqueue with per-queue) replaces
// its aggregate (system); vm:NAME and vm:NAME/vcpu:N go to the hwsig_vm_*
// family as the row and the switches say; pid:N never; the victim x
// culprit scopes go through add_culprits().
template <typename P> Selected<P> select(const Series<P> &s, const ExportInput &in, const series::Def &def)
{
	const ExportSwitches &sw = in.switches;
	const bool coarse = !sw.full_text_buckets;
	const bool vm = vm_exported(def, sw);
	const bool vcpus = def.vm == series::VmExport::PartsOnly && sw.per_vcpu;
	Selected<P> out;
	std::vector<Pick<P>> system, breakdown;
	for (const auto &[scope, point] : s.by_scope) {
		if (!sw.per_cpu && Scope::kind_of(scope) == Scope::Kind::Cpu)
			continue; // the common case on a big host: skip before any allocation
		ScopeLabels sl = scope_labels(Scope::parse(scope), in.vms);
		switch (sl.kind) {
		case ScopeKind::System: system.push_back({{}, &point, false}); break;
		case ScopeKind::Cpu:
		case ScopeKind::Breakdown: breakdown.push_back({std::move(sl.labels), &point, false}); break;
		case ScopeKind::Device: breakdown.push_back({std::move(sl.labels), &point, coarse}); break;
		case ScopeKind::Vq:
			if (sw.per_queue)
				breakdown.push_back({std::move(sl.labels), &point, coarse});
			break;
		case ScopeKind::NodeHugepages: out.node_hugepages.push_back({std::move(sl.labels), &point, false}); break;
		case ScopeKind::Vm:
			if (vm)
				out.vm.push_back({std::move(sl.labels), &point, coarse});
			break;
		case ScopeKind::VmVcpu:
			if (vcpus)
				out.vm.push_back({std::move(sl.labels), &point, coarse});
			break;
		case ScopeKind::VmCulprit:
		case ScopeKind::Skip: break;
		}
	}
	out.host = breakdown.empty() ? std::move(system) : std::move(breakdown);
	return out;
}

// --- families ------------------------------------------------------------------

// A multiplexed counter is exported as counted, with its enabled and
// running times: PromQL scales any window by that window's own times, which
// a scaled cumulative count (pulled toward the lifetime's running fraction)
// could not give. Per VM it is hwsigd's estimate instead, the sum of each
// interval's count scaled by that interval's times (multiplex.h), so that a
// VM costs one series per counter, not three.
void add_counter(Exposition &ex, const series::Def &def, const Series<CounterPoint> &s, const ExportInput &in)
{
	const std::string host = std::string("hwsig_") + def.family;
	const std::string vm = std::string("hwsig_vm_") + def.family;
	auto sel = select(s, in, def);
	for (const auto &[labels, p, coarse] : sel.host) {
		ex.sample(host, Type::Counter, def.help, labels, (def.pmu ? p->mux.raw : p->value) * def.scale / def.div);
		if (def.pmu) {
			Labels l{{"counter", host}};
			l.insert(l.end(), labels.begin(), labels.end());
			ex.sample(own_family::kPmuEnabled, Type::Counter, own_family::kPmuEnabledHelp, l,
				  p->mux.enabled_ns / 1e9);
			ex.sample(own_family::kPmuRunning, Type::Counter, own_family::kPmuRunningHelp, std::move(l),
				  p->mux.running_ns / 1e9);
		}
	}
	for (const auto &[labels, p, coarse] : sel.vm)
		ex.sample(vm, Type::Counter, def.help, labels, p->value * def.scale / def.div);
}

void add_gauge(Exposition &ex, const series::Def &def, const Series<double> &s, const ExportInput &in)
{
	auto sel = select(s, in, def);
	const auto add = [&](const std::string &name, const std::string &help, const auto &group) {
		for (const auto &[labels, p, coarse] : group)
			ex.sample(name, Type::Gauge, help, labels, *p * def.scale / def.div);
	};
	add(std::string("hwsig_") + def.family, def.help, sel.host);
	add(std::string("hwsig_vm_") + def.family, def.help, sel.vm);
	add(std::string("hwsig_node_") + def.family, std::string(def.help) + " Per NUMA node.", sel.node_hugepages);
}

// The slots of a family's histograms in the exported unit.
std::shared_ptr<const expo::HistogramBounds> bounds_of(Histogram::Layout layout, std::size_t slots,
							const series::Buckets &spec)
{
	auto b = std::make_shared<expo::HistogramBounds>();
	Histogram h;
	h.layout = layout;
	for (std::size_t i = 0; i < slots; ++i) {
		auto [low, high] = h.slot_range(i);
		const double lo = low * spec.scale / spec.div;
		b->lower.push_back(lo);
		if (spec.open_last && i + 1 == slots) {
			// Clamped slot: no upper bound, only in +Inf; its
			// values count at the slot's lower bound in _sum.
			b->le.push_back(HUGE_VAL);
			b->mid.push_back(lo);
			b->coarse.push_back(false);
			break;
		}
		const double le = high * spec.scale / spec.div - spec.step;
		b->le.push_back(le);
		b->le_text.push_back(expo::number_text(le));
		b->mid.push_back((lo + le) / 2);
		b->coarse.push_back(std::find(std::begin(spec.coarse), std::end(spec.coarse), high) !=
				    std::end(spec.coarse));
	}
	return b;
}

void add_histogram(Exposition &ex, const series::Def &def, const Series<Histogram> &s, const ExportInput &in)
{
	std::size_t slots = 0;
	for (const auto &[scope, h] : s.by_scope)
		slots = std::max(slots, h.counts.size());
	if (slots == 0)
		return;
	auto sel = select(s, in, def);
	if (sel.host.empty() && sel.vm.empty())
		return;
	const auto b = bounds_of(s.by_scope.begin()->second.layout, slots, def.buckets);
	for (const auto &[labels, h, coarse] : sel.host)
		ex.histogram(std::string("hwsig_") + def.family, def.help, labels, b, h->counts, coarse);
	for (const auto &[labels, h, coarse] : sel.vm)
		ex.histogram(std::string("hwsig_vm_") + def.family, def.help, labels, b, h->counts, coarse);
}

// --- culprits ------------------------------------------------------------------

// What a culprit is to its victim: its own VM, another VM, a kind of host
// thread, or an idle CPU.
std::string culprit_class(const Scope &victim_culprit)
{
	const Scope who = victim_culprit.culprit_scope();
	switch (who.kind()) {
	case Scope::Kind::Vm: return who.vm() == victim_culprit.vm() ? "self" : "other_vm";
	case Scope::Kind::Idle: return "idle";
	default: return std::string(victim_culprit.culprit());
	}
}

// The top n of totals, by total (then name): the picks of a render that
// keeps no state.
std::vector<std::string> top(std::vector<std::pair<std::string, double>> totals, unsigned n)
{
	std::sort(totals.begin(), totals.end(),
		  [](const auto &a, const auto &b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
	std::vector<std::string> out;
	for (const auto &[name, total] : totals)
		if (out.size() < n && total > 0)
			out.push_back(name);
	return out;
}

// A victim x culprit counter, linear in the VM count: per victim, its total
// by culprit class (every class, 0 included, so that the series hold still),
// and the named culprit VMs: a stable top few, or all with culprit-matrix.
void add_culprits(Exposition &ex, const series::Def &def, const Series<CounterPoint> &s, const ExportInput &in)
{
	const ExportSwitches &sw = in.switches;
	if (!(def.vm == series::VmExport::All || sw.vm_detail || sw.culprit_matrix))
		return;
	// Preemptions are counted with WHO the next task: never an idle CPU.
	const bool preemptions = def.by_vm && std::string_view(def.name) == series::kVmPreemptedBy;
	std::vector<std::string> classes = {"self", "other_vm", "host:kernel", "host:vhost", "host:other"};
	if (!preemptions)
		classes.push_back("idle");
	// Victims with a cell only: a VM the BPF program does not track (its
	// table is full) has no wait to blame, which is not a wait of 0.
	std::map<std::string, std::map<std::string, double>> by_class;
	std::map<std::string, std::vector<std::pair<std::string, double>>> by_vm;
	for (const auto &[scope, point] : s.by_scope) {
		const Scope sc = Scope::parse(scope);
		if (sc.kind() != Scope::Kind::VmCulprit)
			continue;
		const std::string victim(sc.vm());
		const std::string cls = culprit_class(sc);
		by_class[victim][cls] += point.value;
		if (cls == "other_vm")
			by_vm[victim].push_back({std::string(sc.culprit_scope().vm()), point.value});
	}
	const std::string family = std::string("hwsig_vm_") + def.family;
	for (const auto &[victim, totals] : by_class)
		for (const auto &cls : classes) {
			auto it = totals.find(cls);
			const double v = it == totals.end() ? 0 : it->second;
			ex.sample(family, Type::Counter, def.help, {{"vm", victim}, {"culprit", cls}}, v * def.scale / def.div);
		}
	const bool named = sw.culprit_matrix || (def.vm == series::VmExport::All && sw.culprit_top > 0);
	if (!named || !def.by_vm)
		return;
	const std::string named_family = std::string("hwsig_vm_") + def.by_vm;
	const std::string help = std::string(def.help) + " Per culprit VM (culprit_vm), a breakdown of culprit=\"other_vm\".";
	for (const auto &[victim, totals] : by_vm) {
		std::vector<std::string> names;
		if (sw.culprit_matrix)
			for (const auto &[name, total] : totals)
				names.push_back(name);
		else if (in.culprit_picks)
			names = in.culprit_picks->pick(victim, totals, sw.culprit_top);
		else
			names = top(totals, sw.culprit_top);
		for (const auto &[name, total] : totals)
			if (std::find(names.begin(), names.end(), name) != names.end())
				ex.sample(named_family, Type::Counter, help, {{"vm", victim}, {"culprit_vm", name}},
					  total * def.scale / def.div);
	}
}

} // namespace

const std::vector<std::string> &CulpritPicks::pick(const std::string &victim,
						   const std::vector<std::pair<std::string, double>> &totals, unsigned n)
{
	Picked &p = picks_[victim];
	p.seen = true;
	const auto total_of = [&](const std::string &name) -> std::optional<double> {
		for (const auto &[k, v] : totals)
			if (k == name)
				return v;
		return std::nullopt;
	};
	// A culprit VM that went away leaves the set.
	std::erase_if(p.names, [&](const std::string &name) { return !total_of(name); });
	const auto by_total = [&](const std::string &a, const std::string &b) { return *total_of(a) > *total_of(b); };
	std::sort(p.names.begin(), p.names.end(), by_total);
	if (p.names.size() > n)
		p.names.resize(n);
	std::vector<std::pair<std::string, double>> rest;
	for (const auto &[name, total] : totals)
		if (total > 0 && std::find(p.names.begin(), p.names.end(), name) == p.names.end())
			rest.push_back({name, total});
	const std::vector<std::string> ranked = top(std::move(rest), n);
	std::size_t k = 0;
	while (p.names.size() < n && k < ranked.size())
		p.names.push_back(ranked[k++]);
	// One trade per render: the strongest outsider for the weakest member,
	// once it has more than twice the member's total.
	if (k < ranked.size() && !p.names.empty() && *total_of(ranked[k]) > 2 * *total_of(p.names.back()))
		p.names.back() = ranked[k];
	return p.names;
}

void CulpritPicks::end_render()
{
	std::erase_if(picks_, [](const auto &kv) { return !kv.second.seen; });
	for (auto &[victim, p] : picks_)
		p.seen = false;
}

std::string render_prometheus(const ExportInput &in, ExpositionFormat fmt)
{
	Exposition ex;
	if (const Snapshot *snap = in.snapshot) {
		for (const series::Def &def : series::kRegistry) {
			if (!def.family)
				continue;
			switch (def.kind) {
			case series::Kind::Counter:
				if (auto it = snap->counters().find(def.name); it != snap->counters().end()) {
					if (def.at & series::kAtVmCulprit)
						add_culprits(ex, def, it->second, in);
					else
						add_counter(ex, def, it->second, in);
				}
				break;
			case series::Kind::Gauge:
				if (auto it = snap->gauges().find(def.name); it != snap->gauges().end())
					add_gauge(ex, def, it->second, in);
				break;
			case series::Kind::Histogram:
				if (auto it = snap->histograms().find(def.name); it != snap->histograms().end())
					add_histogram(ex, def, it->second, in);
				break;
			case series::Kind::CpuCounts: break; // no family: where, not how much
			}
		}
		if (in.culprit_picks)
			in.culprit_picks->end_render();
	}
	if (in.unavailable) {
		// The code, not the words: they carry live counts, and a label
		// that changed with them would make a new series every interval.
		for (const auto &note : *in.unavailable) {
			auto scope = alertable(note.code) ? note_scope(note.scope, in) : std::nullopt;
			if (!scope)
				continue;
			ex.sample(own_family::kUnavailable, Type::Gauge, own_family::kUnavailableHelp,
				  {{"metric", note.id}, {"scope", *scope}, {"reason", std::string(code_name(note.code))}},
				  1);
		}
	}
	ex.sample(own_family::kBuildInfo, Type::Info, own_family::kBuildInfoHelp,
		  {{"version", in.version}}, 1);
	if (in.vms)
		for (const Vm &vm : *in.vms)
			ex.sample(own_family::kVmInfo, Type::Info, own_family::kVmInfoHelp,
				  {{"vm", vm.name}, {"pid", std::to_string(vm.pid)}}, 1);
	for (const SelfMetric &m : in.self) {
		if (!expo::valid_name(m.name, true) || m.counter != expo::ends_with(m.name, "_total"))
			continue;
		bool labels_ok = std::all_of(m.labels.begin(), m.labels.end(), [](const auto &l) {
			return expo::valid_name(l.first, false) && l.first.rfind("__", 0) != 0;
		});
		if (!labels_ok)
			continue;
		ex.sample(m.name, m.counter ? Type::Counter : Type::Gauge, m.help, m.labels, m.value);
	}
	return fmt == ExpositionFormat::PrometheusProtobuf ? expo::encode_protobuf(ex) : expo::encode_text(ex, fmt);
}

std::string_view content_type(ExpositionFormat fmt)
{
	switch (fmt) {
	case ExpositionFormat::OpenMetrics100: return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	case ExpositionFormat::PrometheusProtobuf:
		return "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";
	case ExpositionFormat::Prometheus004: break;
	}
	return "text/plain; version=0.0.4; charset=utf-8";
}

namespace {

// The format a media range of Accept asks for, if hwsig serves it.
std::optional<ExpositionFormat> format_asked(const HeaderListItem &range)
{
	const auto param = [&](const char *name) -> std::optional<std::string_view> {
		auto it = range.params.find(name);
		return it == range.params.end() ? std::nullopt : std::optional<std::string_view>(it->second);
	};
	const auto version = param("version");
	if (range.token == "application/vnd.google.protobuf") {
		if (param("proto") == "io.prometheus.client.MetricFamily" && param("encoding") == "delimited")
			return ExpositionFormat::PrometheusProtobuf;
	} else if (range.token == "application/openmetrics-text") {
		if (!version || version == "1.0.0")
			return ExpositionFormat::OpenMetrics100;
	} else if (range.token == "text/plain") {
		if (!version || version == "0.0.4")
			return ExpositionFormat::Prometheus004;
	} else if (range.token == "*/*" || range.token == "text/*") {
		return ExpositionFormat::Prometheus004;
	}
	return std::nullopt;
}

} // namespace

ExpositionFormat negotiate_format(std::string_view accept)
{
	ExpositionFormat best = ExpositionFormat::Prometheus004;
	double best_q = 0;
	for (const HeaderListItem &range : parse_header_list(accept))
		if (auto fmt = format_asked(range); fmt && range.q > best_q) {
			best = *fmt;
			best_q = range.q;
		}
	return best;
}

} // namespace hwsig
