#include "hwsig/verdicts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/units.h"

namespace hwsig {

namespace {

using Values = std::map<std::pair<std::string, std::string>, double>; // (id, scope) -> value

std::optional<double> get(const Values &v, const std::string &id, const std::string &scope)
{
	auto it = v.find({id, scope});
	if (it == v.end())
		return std::nullopt;
	return it->second;
}

// What a line calls the thing judged: "disk vda", "vm web01 CPU", "CPU".
std::string subject(const std::string &resource, const std::string &scope_text)
{
	using K = Scope::Kind;
	static const std::map<std::string, std::string> hosts = {
		{"cpu", "CPU"}, {"memory", "memory"}, {"disk", "I/O"}, {"vhost", "vhost"}, {"thermal", "thermal"}};
	const std::string &host = hosts.at(resource);
	const Scope s = Scope::parse(scope_text);
	// What follows "kind:", as the scope writes it ("4242:0:tx" of a vq).
	const auto colon = scope_text.find(':');
	const std::string rest = colon == std::string::npos ? "" : scope_text.substr(colon + 1);
	if (s.of_vm())
		return "vm " + rest + " " + host;
	switch (s.kind()) {
	case K::System: return host;
	case K::Dev: return "disk " + std::string(s.dev());
	case K::Cpu: return "cpu " + std::to_string(s.cpu());
	case K::Hugepages: return "huge pages " + std::string(s.hugepage_size());
	case K::Vq: return "vhost queue " + rest;
	case K::Zone: return "thermal zone " + std::string(s.zone());
	default: return host + " " + scope_text.substr(0, colon) + " " + rest; // socket N, node N
	}
}

const char *state(const std::string &kind)
{
	if (kind == "saturation")
		return "saturated";
	if (kind == "error")
		return "errors";
	return "fully used";
}

class Judge {
public:
	Judge(const Interval &iv, const Thresholds &t, const std::function<bool(const std::string &)> &visible)
		: t_(t)
	{
		for (const auto &m : iv.metrics)
			if (visible(m.scope)) {
				values_[{m.id, m.scope}] = m.value;
				units_[m.id] = m.unit;
			}
	}

	// value > threshold (above = true) or value < threshold.
	void rule(const std::string &id, const std::string &key, bool above, const char *resource,
		  const char *kind, const char *words)
	{
		const double thr = t_.base(key);
		for (const auto &[k, v] : values_) {
			if (k.first != id || !past(v, thr, above))
				continue;
			add(resource, kind, id, k.second, v, thr, words, severity(v, thr, above));
		}
	}

	// Run-queue p99 past its bar with the median at a tenth of it or more:
	// on an idle host a p99 over a few wakeups is one slow wakeup (seen at
	// 1-1.6 ms on a quiet 2-vCPU guest), not a saturated CPU, whose median
	// wait grows with its tail.
	void runq()
	{
		const double thr = t_.base("cpu.runq_p99_ms");
		for (const auto &[k, v] : values_) {
			if (k.first != metric_id::kSchedRunqWaitP99Us || !past(v, thr, true))
				continue;
			auto median = get(values_, metric_id::kSchedRunqWaitP50Us, k.second);
			if (!median || *median < thr / 10)
				continue;
			add("cpu", "saturation", k.first, k.second, v, thr, "run-queue p99", severity(v, thr, true));
		}
	}

	// value >= threshold: "exhausted" rules where equality is the point.
	void rule_at_least(const std::string &id, const std::string &key, const char *resource, const char *kind,
			   const char *words)
	{
		const double thr = t_.base(key);
		for (const auto &[k, v] : values_)
			if (k.first == id && v >= thr)
				add(resource, kind, id, k.second, v, thr, words, 1.0 + v);
	}

	// IPC below the bar with LLC misses above theirs at the same scope.
	void memory_bound()
	{
		const double ipc_thr = t_.base("cpu.ipc_low"), mpki_thr = t_.base("cpu.llc_mpki_high");
		for (const auto &[k, ipc] : values_) {
			if (k.first != metric_id::kCpuIpc)
				continue;
			auto mpki = get(values_, metric_id::kCpuLlcMpki, k.second);
			if (!mpki || !(ipc < ipc_thr) || !(*mpki > mpki_thr))
				continue;
			// The CPU is where it shows; memory is the resource saturated.
			const std::string title = subject("cpu", k.second) + " memory-bound";
			add("memory", "saturation", metric_id::kCpuIpc, k.second, ipc, ipc_thr, "IPC", severity(ipc, ipc_thr, false),
			    title);
			add("memory", "saturation", metric_id::kCpuLlcMpki, k.second, *mpki, mpki_thr, "LLC misses",
			    severity(*mpki, mpki_thr, true), title);
		}
	}

	// DRAM bytes/s (reads + writes, or the combined count) near the peak.
	void dram()
	{
		const double peak = t_.base("mem.dram_peak_gibps");
		if (peak <= 0)
			return;
		const double thr = peak * t_.base("mem.dram_busy_pct");
		std::map<std::string, double> total;
		for (const auto &[k, v] : values_)
			if (k.first == metric_id::kMemImcReadBps || k.first == metric_id::kMemImcWriteBps ||
			    k.first == metric_id::kMemImcBps)
				total[k.second] += v;
		for (const auto &[scope, v] : total) {
			if (!(v > thr))
				continue;
			const std::string id =
				get(values_, metric_id::kMemImcBps, scope) ? metric_id::kMemImcBps : metric_id::kMemImcReadBps;
			add("memory", "utilisation", id, scope, v, thr, "DRAM read+write", severity(v, thr, true));
		}
	}

	// Seek entropy is evidence for a disk already judged, not a verdict.
	void random_io_evidence()
	{
		const double thr = t_.base("disk.random_entropy");
		for (const auto &[k, v] : values_) {
			if (k.first != metric_id::kIoPatternEntropy || v < thr)
				continue;
			auto line = lines_.find({"disk", k.second, "saturation"});
			if (line != lines_.end())
				line->second.extra = "random (entropy " + sig3(v) + ")";
		}
	}

	Verdicts finish()
	{
		struct Ranked {
			double severity;
			std::string text;
			std::tuple<std::string, std::string, std::string> key;
		};
		std::vector<Ranked> ranked;
		for (const auto &[key, l] : lines_) {
			std::string text = l.title + ": ";
			for (std::size_t i = 0; i < l.evidence.size(); ++i)
				text += (i ? ", " : "") + l.evidence[i];
			if (!l.extra.empty())
				text += ", " + l.extra;
			ranked.push_back({l.severity, text, key});
		}
		std::stable_sort(ranked.begin(), ranked.end(),
				 [](const Ranked &a, const Ranked &b) { return a.severity > b.severity; });
		Verdicts out;
		std::map<std::tuple<std::string, std::string, std::string>, std::size_t> index;
		for (const auto &r : ranked) {
			index[r.key] = out.lines.size();
			out.lines.push_back(r.text);
		}
		for (auto f : findings_) {
			f.line = index.at({f.resource, f.scope, f.kind});
			out.findings.push_back(std::move(f));
		}
		std::stable_sort(out.findings.begin(), out.findings.end(),
				 [](const Finding &a, const Finding &b) { return a.line < b.line; });
		return out;
	}

private:
	struct Line {
		std::string title;
		std::vector<std::string> evidence;
		std::string extra;
		double severity = 0;
	};

	static bool past(double v, double thr, bool above) { return above ? v > thr : v < thr; }

	// How far past: a ratio, for ranking only; 'below' rules count the
	// distance under the bar (headroom 1 degC under a 5 degC bar is worse
	// than 4 degC).
	static double severity(double v, double thr, bool above)
	{
		if (above)
			return thr > 0 ? v / thr : 1.0 + v;
		return (thr + 1.0) / (std::max(v, 0.0) + 1.0);
	}

	void add(const std::string &resource, const std::string &kind, const std::string &id,
		 const std::string &scope, double v, double thr, const std::string &words, double sev,
		 const std::string &title = "")
	{
		const std::string unit = units_.count(id) ? units_[id] : "";
		Finding f{resource, kind, id, scope, v, thr, words + " " + human_text(v, unit), sev, 0};
		Line &l = lines_[{resource, scope, kind}];
		if (l.title.empty())
			l.title = title.empty() ? subject(resource, scope) + " " + state(kind) : title;
		l.evidence.push_back(f.evidence);
		l.severity = std::max(l.severity, sev);
		findings_.push_back(std::move(f));
	}

	const Thresholds &t_;
	Values values_;
	std::map<std::string, std::string> units_;
	std::map<std::tuple<std::string, std::string, std::string>, Line> lines_;
	std::vector<Finding> findings_;
};

} // namespace

bool Verdicts::marked(const std::string &id, const std::string &scope) const
{
	for (const auto &f : findings)
		if (f.metric == id && f.scope == scope)
			return true;
	return false;
}

Verdicts judge(const Interval &iv, const Thresholds &t, const std::function<bool(const std::string &)> &visible)
{
	Judge j(iv, t, visible);
	// CPU
	j.rule(metric_id::kSchedStealRatio, "cpu.steal_pct", true, "cpu", "saturation", "steal");
	j.runq();
	j.rule(metric_id::kPsiCpuSomePct, "cpu.psi_some_pct", true, "cpu", "saturation", "PSI cpu some");
	// Memory / NUMA
	j.memory_bound();
	j.rule(metric_id::kPsiMemorySomePct, "mem.psi_some_pct", true, "memory", "saturation", "PSI memory some");
	j.rule(metric_id::kPsiMemoryFullPct, "mem.psi_full_pct", true, "memory", "saturation", "PSI memory full");
	j.dram();
	j.rule_at_least(metric_id::kMemHugepageUtilization, "mem.hugepage_used_pct", "memory", "utilisation", "in use");
	j.rule(metric_id::kMemThpFallbackRatio, "mem.thp_fallback_pct", true, "memory", "error", "THP fallback");
	j.rule(metric_id::kMemNumaRemoteRatio, "mem.numa_remote_pct", true, "memory", "utilisation", "remote allocations");
	// Disk
	j.rule(metric_id::kIoLatencyP99Us, "disk.latency_p99_ms", true, "disk", "saturation", "p99 latency");
	j.rule(metric_id::kIoQueueP99Us, "disk.queue_p99_ms", true, "disk", "saturation", "queue time p99");
	j.rule(metric_id::kPsiIoSomePct, "disk.psi_some_pct", true, "disk", "saturation", "PSI io some");
	j.random_io_evidence();
	// vhost / network
	j.rule(metric_id::kVhostQueueDepthP99, "vhost.depth_p99", true, "vhost", "saturation", "queue depth p99");
	j.rule_at_least(metric_id::kVhostRingStallsPs, "vhost.ring_stalls_ps", "vhost", "error", "RX ring stalls");
	// Thermal
	j.rule(metric_id::kThermalHeadroomC, "thermal.headroom_c", false, "thermal", "saturation", "headroom");
	return j.finish();
}

} // namespace hwsig
