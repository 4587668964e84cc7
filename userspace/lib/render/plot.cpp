// hwsigctl plot's model (plot.h): which metrics, which scopes, where the
// lines break. The values are derive()'s, untouched.
#include "hwsig/docs.h"
#include "hwsig/plot.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "hwsig/catalog.h"
#include "hwsig/series.h"
#include "hwsig/scope.h"

namespace hwsig {

namespace {

// The threshold key (thresholds.h) that judge() compares each metric with
// (verdicts.cpp): the plot draws the same bar the verdicts use. DRAM
// bandwidth is left out: its bar is a product of two keys and off unless
// the platform's peak is set.
const std::map<std::string, std::string> &threshold_keys()
{
	static const std::map<std::string, std::string> keys = {
		{metric_id::kCpuIpc, "cpu.ipc_low"},
		{metric_id::kCpuLlcMpki, "cpu.llc_mpki_high"},
		{metric_id::kSchedStealRatio, "cpu.steal_pct"},
		{metric_id::kSchedRunqWaitP99Us, "cpu.runq_p99_ms"},
		{metric_id::kPsiCpuSomePct, "cpu.psi_some_pct"},
		{metric_id::kPsiMemorySomePct, "mem.psi_some_pct"},
		{metric_id::kPsiMemoryFullPct, "mem.psi_full_pct"},
		{metric_id::kMemHugepageUtilization, "mem.hugepage_used_pct"},
		{metric_id::kMemThpFallbackRatio, "mem.thp_fallback_pct"},
		{metric_id::kMemNumaRemoteRatio, "mem.numa_remote_pct"},
		{metric_id::kIoLatencyP99Us, "disk.latency_p99_ms"},
		{metric_id::kIoQueueP99Us, "disk.queue_p99_ms"},
		{metric_id::kIoPatternEntropy, "disk.random_entropy"},
		{metric_id::kPsiIoSomePct, "disk.psi_some_pct"},
		{metric_id::kVhostQueueDepthP99, "vhost.depth_p99"},
		{metric_id::kVhostRingStallsPs, "vhost.ring_stalls_ps"},
		{metric_id::kThermalHeadroomC, "thermal.headroom_c"},
	};
	return keys;
}

// Per-CPU, per-virtqueue and per-process scopes are left out: a panel of
// 64 cpu:N lines reads as noise, and the VM and system scopes already sum
// them.
bool plotted_scope(const std::string &scope, const std::string &vm)
{
	const Scope s = Scope::parse(scope);
	if (s.kind() == Scope::Kind::Cpu || s.kind() == Scope::Kind::Vq || s.kind() == Scope::Kind::Pid)
		return false;
	if (!vm.empty() && s.of_vm())
		return s.kind() == Scope::Kind::Vm && s.vm() == vm;
	return true;
}

// The legend's order: the host, then the VMs by name, then the rest.
bool scope_before(const std::string &a, const std::string &b)
{
	auto rank = [](const std::string &s) {
		const Scope scope = Scope::parse(s);
		return scope.kind() == Scope::Kind::System ? 0 : scope.of_vm() ? 1 : 2;
	};
	if (rank(a) != rank(b))
		return rank(a) < rank(b);
	return a < b;
}

const MetricDef *find_metric(const std::string &id)
{
	for (const auto &m : catalog())
		if (m.id == id)
			return &m;
	return nullptr;
}

std::size_t edit_distance(const std::string &a, const std::string &b)
{
	std::vector<std::size_t> row(b.size() + 1);
	for (std::size_t j = 0; j <= b.size(); ++j)
		row[j] = j;
	for (std::size_t i = 1; i <= a.size(); ++i) {
		std::size_t diag = row[0];
		row[0] = i;
		for (std::size_t j = 1; j <= b.size(); ++j) {
			const std::size_t up = row[j];
			row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
			diag = up;
		}
	}
	return row[b.size()];
}

// Why a metric has no value: the newest reason a source gave for it.
std::string absent_reason(const std::vector<PlotInterval> &intervals, const std::string &id)
{
	for (auto it = intervals.rbegin(); it != intervals.rend(); ++it)
		for (const auto &u : it->iv.unavailable)
			if (u.id == id)
				return "not in this dump: " + u.reason;
	return "not in this dump";
}

double median_duration_ns(const std::vector<PlotInterval> &intervals)
{
	std::vector<std::uint64_t> d;
	for (const auto &p : intervals)
		d.push_back(p.end_mono_ns - p.start_mono_ns);
	if (d.empty())
		return 0;
	std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
	return static_cast<double>(d[d.size() / 2]);
}

// The wall clock at the trigger: the stamp of the interval that ends
// closest to it, moved by the monotonic distance between the two (the wall
// clock may have been stepped elsewhere in the dump; not near the trigger).
std::uint64_t trigger_realtime_ns(const std::vector<PlotInterval> &intervals, std::uint64_t trigger)
{
	const PlotInterval *nearest = nullptr;
	std::uint64_t best = 0;
	for (const auto &in : intervals) {
		if (!in.iv.realtime_ns)
			continue;
		const std::uint64_t d = in.end_mono_ns > trigger ? in.end_mono_ns - trigger : trigger - in.end_mono_ns;
		if (!nearest || d < best) {
			nearest = &in;
			best = d;
		}
	}
	if (!nearest)
		return 0;
	const auto wall = static_cast<std::int64_t>(nearest->iv.realtime_ns) -
			  (static_cast<std::int64_t>(nearest->end_mono_ns) - static_cast<std::int64_t>(trigger));
	return wall > 0 ? static_cast<std::uint64_t>(wall) : 0;
}

double seconds_from(std::uint64_t t, std::uint64_t trigger)
{
	return t >= trigger ? static_cast<double>(t - trigger) / 1e9 : -static_cast<double>(trigger - t) / 1e9;
}

} // namespace

std::vector<PlotInterval> plot_intervals(const DumpContents &dump)
{
	std::vector<PlotInterval> out;
	for (std::size_t i = 1; i < dump.snapshots.size(); ++i) {
		const auto &prev = dump.snapshots[i - 1];
		const auto &cur = dump.snapshots[i];
		Interval iv = derive(prev.snapshot, cur.snapshot, cur.claimed_ids);
		// Only what a plot can show is kept: 15 minutes of a 256-CPU
		// host's cpu:N values would be gigabytes.
		std::erase_if(iv.metrics, [](const Metric &m) { return !plotted_scope(m.scope, ""); });
		out.push_back({prev.snapshot.mono_ns, cur.snapshot.mono_ns, std::move(iv)});
	}
	return out;
}

std::uint64_t trigger_time_ns(const DumpContents &dump)
{
	// Version 2 dumps say when the trigger fired; a version 1 dump (or one
	// from the rings alone) does not, and its last snapshot is the closest.
	if (dump.triggered_mono_ns)
		return *dump.triggered_mono_ns;
	return dump.snapshots.empty() ? 0 : dump.snapshots.back().snapshot.mono_ns;
}

const std::vector<std::string> &default_plot_metrics()
{
	// One per layer an incident usually shows in: CPU efficiency, CPU
	// saturation, pressure, DRAM bandwidth (Intel counts reads apart, AMD
	// both together), disk latency, virtqueue depth.
	static const std::vector<std::string> ids = {metric_id::kCpuIpc,        metric_id::kSchedRunqWaitP99Us,
						     metric_id::kPsiCpuSomePct, metric_id::kMemImcReadBps,
						     metric_id::kMemImcBps,     metric_id::kIoLatencyP99Us,
						     metric_id::kVhostQueueDepthP99};
	return ids;
}

std::vector<std::string> close_metric_ids(const std::string &id)
{
	std::vector<std::pair<std::size_t, std::string>> near;
	const std::string layer = id.substr(0, id.find('.'));
	for (const auto &m : catalog()) {
		const std::size_t d = edit_distance(id, m.id);
		const bool same_layer = id.find('.') != std::string::npos && m.id.rfind(layer + ".", 0) == 0;
		const bool contains = id.size() >= 3 && m.id.find(id) != std::string::npos;
		if (d <= 3 || contains)
			near.emplace_back(d, m.id);
		else if (same_layer)
			near.emplace_back(d + 100, m.id); // after the near misses
	}
	std::stable_sort(near.begin(), near.end(),
			 [](const auto &a, const auto &b) { return a.first < b.first; });
	// Near misses alone when there are any; else the ids of the same layer.
	const bool have_near = !near.empty() && near.front().first < 100;
	std::vector<std::string> out;
	for (const auto &n : near) {
		if (out.size() == 5 || (have_near && n.first >= 100))
			break;
		out.push_back(n.second);
	}
	return out;
}

Plot build_plot(const std::vector<PlotInterval> &intervals, const PlotRequest &req)
{
	for (const auto &id : req.metrics) {
		if (find_metric(id))
			continue;
		std::string msg = "unknown metric '" + id + "'";
		const auto near = close_metric_ids(id);
		for (std::size_t i = 0; i < near.size(); ++i)
			msg += (i ? ", " : " (did you mean: ") + near[i];
		throw PlotError(msg + (near.empty() ? "; the ids are in " HWSIG_DOC("metrics.rst") : ")"));
	}

	// (id, scope) -> value per interval: one pass over the derived values.
	std::map<std::string, std::map<std::string, std::map<std::size_t, double>>> values;
	bool vm_seen = false;
	const std::string vm_scope = Scope::vm(req.vm).str();
	for (std::size_t i = 0; i < intervals.size(); ++i)
		for (const auto &m : intervals[i].iv.metrics) {
			vm_seen = vm_seen || (!req.vm.empty() && m.scope == vm_scope);
			if (plotted_scope(m.scope, req.vm) && std::isfinite(m.value))
				values[m.id][m.scope][i] = m.value;
		}
	if (!req.vm.empty() && !vm_seen)
		throw PlotError("no values for a VM named '" + req.vm + "'");

	std::vector<std::string> ids = req.metrics;
	if (ids.empty()) {
		for (const auto &id : default_plot_metrics())
			if (values.count(id))
				ids.push_back(id);
		if (ids.empty())
			throw PlotError("none of the default metrics (" + [] {
				std::string s;
				for (const auto &id : default_plot_metrics())
					s += (s.empty() ? "" : ", ") + id;
				return s;
			}() + ") has a value: choose some with --metrics");
	}

	Plot plot;
	plot.title = req.title;
	plot.trigger = req.trigger;
	plot.trigger_realtime_ns = trigger_realtime_ns(intervals, req.trigger_mono_ns);
	if (!intervals.empty()) {
		plot.t_min_s = std::min(seconds_from(intervals.front().start_mono_ns, req.trigger_mono_ns), 0.0);
		plot.t_max_s = std::max(seconds_from(intervals.back().end_mono_ns, req.trigger_mono_ns), 0.0);
	}
	// An interval much longer than the usual one is a hole in the
	// recording (the daemon stopped, history was lost): its value is an
	// average over the hole, so its line does not join the one before.
	const double hole_ns = 1.5 * median_duration_ns(intervals);

	std::set<std::string> scopes;
	for (const auto &id : ids) {
		const MetricDef *def = find_metric(id);
		PlotPanel panel{id, def->unit, def->description, {}, {}, {}};
		if (req.thresholds && threshold_keys().count(id))
			panel.threshold = req.thresholds->base(threshold_keys().at(id));
		auto v = values.find(id);
		if (v == values.end()) {
			panel.absent = absent_reason(intervals, id);
			plot.panels.push_back(std::move(panel));
			continue;
		}
		for (const auto &[scope, points] : v->second) {
			PlotSeries s{scope, {}};
			std::size_t last = 0;
			for (const auto &[i, value] : points) {
				const auto &in = intervals[i];
				const bool joins = !s.runs.empty() && last + 1 == i &&
						   static_cast<double>(in.end_mono_ns - in.start_mono_ns) <= hole_ns;
				if (!joins)
					s.runs.emplace_back();
				s.runs.back().push_back({seconds_from(in.end_mono_ns, req.trigger_mono_ns), value});
				last = i;
			}
			scopes.insert(scope);
			panel.series.push_back(std::move(s));
		}
		std::stable_sort(panel.series.begin(), panel.series.end(),
				 [](const PlotSeries &a, const PlotSeries &b) { return scope_before(a.scope, b.scope); });
		plot.panels.push_back(std::move(panel));
	}
	plot.scopes.assign(scopes.begin(), scopes.end());
	std::stable_sort(plot.scopes.begin(), plot.scopes.end(), scope_before);
	return plot;
}

} // namespace hwsig
