// The Prometheus text (0.0.4) and OpenMetrics 1.0 exposition of a snapshot.
// Documentation/prometheus.rst is the contract: names, units, labels, the
// aggregate-vs-breakdown rule, the histogram bucket and _sum rules.
#include "hwsig/render_prometheus.h"

#include "hwsig/family_listing.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "hwsig/scope.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

enum class Type { Counter, Gauge, Histogram, Info };

using Labels = std::vector<std::pair<std::string, std::string>>;

// --- formatting ------------------------------------------------------------

std::string number(double v)
{
	if (std::isnan(v))
		return "NaN";
	if (std::isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	char buf[64];
	// Whole numbers (counters, bucket counts) in full, not as 1e+06.
	if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
		auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(v));
		return std::string(buf, r.ptr);
	}
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return std::string(buf, r.ptr);
}

// Length of the valid UTF-8 sequence at s[i], 0 if invalid (overlong,
// surrogate, above U+10FFFF or truncated).
std::size_t utf8_length(std::string_view s, std::size_t i)
{
	const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
	const unsigned char c = b(i);
	if (c < 0x80)
		return 1;
	std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
	if (n == 0 || c > 0xF4 || i + n > s.size())
		return 0;
	for (std::size_t k = 1; k < n; ++k)
		if ((b(i + k) & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0) || (c == 0xF0 && b(i + 1) < 0x90) ||
	    (c == 0xF4 && b(i + 1) >= 0x90))
		return 0;
	return n;
}

// Label values and HELP text: the escapes of the format, and every byte
// that is not valid UTF-8 (a VM name from a command line, a sensor label)
// as U+FFFD, because both formats require UTF-8 and Prometheus rejects the
// whole scrape otherwise.
void escape_into(std::string &out, std::string_view s, bool quote)
{
	for (std::size_t i = 0; i < s.size(); ++i) {
		const char c = s[i];
		if (static_cast<unsigned char>(c) >= 0x80) {
			std::size_t n = utf8_length(s, i);
			if (n == 0) {
				out += "\xEF\xBF\xBD";
			} else {
				out.append(s, i, n);
				i += n - 1;
			}
			continue;
		}
		switch (c) {
		case '\\': out += "\\\\"; break;
		case '\n': out += "\\n"; break;
		case '"':
			if (quote) {
				out += "\\\"";
				break;
			}
			[[fallthrough]];
		default: out.push_back(c);
		}
	}
}

bool valid_name(std::string_view n, bool metric)
{
	if (n.empty())
		return false;
	for (std::size_t i = 0; i < n.size(); ++i) {
		char c = n[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':') ||
			  (i > 0 && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

std::string label_text(const Labels &labels)
{
	std::string out;
	for (const auto &[k, v] : labels) {
		if (!out.empty())
			out += ',';
		out += k;
		out += "=\"";
		escape_into(out, v, true);
		out += '"';
	}
	return out;
}

// Sort key of a series: its label text with every run of digits left-padded,
// so cpu="2" sorts before cpu="10".
std::string sort_key(const std::string &text)
{
	// The padded text, then the text itself: cpu="07" and cpu="7" stay apart.
	std::string key;
	for (std::size_t i = 0; i < text.size();) {
		if (text[i] >= '0' && text[i] <= '9') {
			std::size_t j = i;
			while (j < text.size() && text[j] >= '0' && text[j] <= '9')
				++j;
			if (j - i < 12)
				key.append(12 - (j - i), '0');
			key.append(text, i, j - i);
			i = j;
		} else {
			key.push_back(text[i++]);
		}
	}
	key.push_back('\0');
	key += text;
	return key;
}

bool ends_with(std::string_view s, std::string_view suffix)
{
	return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// --- families ----------------------------------------------------------------

struct Family {
	Type type = Type::Gauge;
	std::string help;
	std::map<std::string, std::string> series; // sort key -> sample lines
};

class Exposition {
public:
	// name: the 0.0.4 name (a counter's ends in _total, an info's in _info).
	Family *family(const std::string &name, Type type, std::string_view help)
	{
		auto [it, inserted] = families_.try_emplace(name);
		if (inserted) {
			it->second.type = type;
			it->second.help = help;
		} else if (it->second.type != type) {
			return nullptr; // one name, two types: the first one wins
		}
		return &it->second;
	}

	void sample(const std::string &name, Type type, std::string_view help, const Labels &labels, double value)
	{
		Family *f = family(name, type, help);
		if (!f)
			return;
		std::string lt = label_text(labels);
		auto [it, inserted] = f->series.try_emplace(sort_key(lt));
		if (!inserted)
			return; // no duplicate series
		std::string &s = it->second;
		s = name;
		if (!lt.empty())
			s += "{" + lt + "}";
		s += ' ';
		s += number(value);
		s += '\n';
	}

	// The buckets of one family: every series has the same ones.
	struct Buckets {
		std::vector<std::string> le; // finite bounds, as printed
		std::vector<double> mid;     // per slot: its value in the _sum estimate
	};

	static Buckets buckets(Histogram::Layout layout, std::size_t slots, const series::Buckets &spec)
	{
		Buckets b;
		Histogram h;
		h.layout = layout;
		for (std::size_t i = 0; i < slots; ++i) {
			auto [low, high] = h.slot_range(i);
			const double lo = low * spec.scale / spec.div;
			if (spec.open_last && i + 1 == slots) {
				// Clamped slot: no upper bound, only in +Inf; its
				// values count at the slot's lower bound in _sum.
				b.mid.push_back(lo);
				break;
			}
			const double le = high * spec.scale / spec.div - spec.step;
			b.le.push_back(number(le));
			b.mid.push_back((lo + le) / 2);
		}
		return b;
	}

	void histogram(const std::string &name, std::string_view help, const Labels &labels, const Histogram &h,
		       const Buckets &b)
	{
		Family *f = family(name, Type::Histogram, help);
		if (!f)
			return;
		std::string lt = label_text(labels);
		auto [it, inserted] = f->series.try_emplace(sort_key(lt));
		if (!inserted)
			return;
		std::string &s = it->second;
		const std::string prefix = name + "_bucket{" + lt + (lt.empty() ? "" : ",") + "le=\"";
		s.reserve((prefix.size() + 16) * (b.le.size() + 1) + 2 * (name.size() + lt.size() + 32));
		std::uint64_t cum = 0;
		double sum = 0;
		for (std::size_t i = 0; i < b.mid.size(); ++i) {
			const std::uint64_t c = i < h.counts.size() ? h.counts[i] : 0;
			cum += c;
			sum += static_cast<double>(c) * b.mid[i];
			if (i < b.le.size()) {
				s += prefix;
				s += b.le[i];
				s += "\"} ";
				s += std::to_string(cum);
				s += '\n';
			}
		}
		std::string braces = lt.empty() ? "" : "{" + lt + "}";
		s += prefix + "+Inf\"} " + std::to_string(cum) + "\n";
		s += name + "_sum" + braces + " " + number(sum) + "\n";
		s += name + "_count" + braces + " " + std::to_string(cum) + "\n";
	}

	std::string text(ExpositionFormat fmt) const
	{
		const bool om = fmt == ExpositionFormat::OpenMetrics100;
		std::string out;
		std::size_t size = 0;
		for (const auto &[name, f] : families_)
			for (const auto &[k, s] : f.series)
				size += s.size();
		out.reserve(size + families_.size() * 160 + 16);
		for (const auto &[name, f] : families_) {
			if (f.series.empty())
				continue;
			std::string fam = name;
			if (om && f.type == Type::Counter && ends_with(fam, "_total"))
				fam.resize(fam.size() - 6);
			if (om && f.type == Type::Info && ends_with(fam, "_info"))
				fam.resize(fam.size() - 5);
			const char *type = "gauge";
			switch (f.type) {
			case Type::Counter: type = "counter"; break;
			case Type::Histogram: type = "histogram"; break;
			case Type::Info: type = om ? "info" : "gauge"; break;
			case Type::Gauge: break;
			}
			out += "# HELP " + fam + " ";
			escape_into(out, f.help, om);
			out += "\n# TYPE " + fam + " " + type + "\n";
			if (om) {
				for (const char *unit : {"seconds", "bytes", "celsius", "ratio"})
					if (ends_with(fam, std::string("_") + unit)) {
						out += "# UNIT " + fam + " " + unit + "\n";
						break;
					}
			}
			for (const auto &[k, s] : f.series)
				out += s;
		}
		if (om)
			out += "# EOF\n";
		return out;
	}

private:
	std::map<std::string, Family> families_;
};

// --- scopes -> labels --------------------------------------------------------

enum class ScopeKind { System, Cpu, Breakdown, NodeHugepages, Vm, VmVcpu, VmCulprit, Vq, Skip };

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
	case K::Dev: return {ScopeKind::Breakdown, {{"device", text(s.dev())}}};
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
		return in.per_cpu ? scope : Scope::all(K::Cpu).str();
	if (s.kind() == K::Pid || s.all_of() == K::Pid)
		return std::nullopt;
	if (s.kind() == K::Vq)
		return "vq:" + vm_name_of(s.pid(), in.vms) + ":" + std::to_string(s.queue()) +
		       (s.direction() == Scope::Direction::Tx ? ":tx" : ":rx");
	return scope;
}

// The scopes of one raw series that are exported, by the rule of
// Documentation/prometheus.rst: a breakdown (cpu:N with per_cpu, socket,
// node, zone, hugepages size, device, virtqueue) replaces its aggregate
// (system); vm:NAME, vm:NAME/vcpu:N and vm:NAME/culprit:WHO go to the
// hwsig_vm_* family (a per-vCPU series only with its vCPUs: vm_scope
// false); pid:N never.
template <typename P> struct Selected {
	std::vector<std::pair<Labels, const P *>> host, vm, node_hugepages;
};

template <typename P>
Selected<P> select(const Series<P> &s, const ExportInput &in, bool vm_family, bool vm_scope = true)
{
	Selected<P> out;
	std::vector<std::pair<Labels, const P *>> system, breakdown;
	for (const auto &[scope, point] : s.by_scope) {
		if (!in.per_cpu && Scope::kind_of(scope) == Scope::Kind::Cpu)
			continue; // the common case on a big host: skip before any allocation
		ScopeLabels sl = scope_labels(Scope::parse(scope), in.vms);
		switch (sl.kind) {
		case ScopeKind::System: system.push_back({{}, &point}); break;
		case ScopeKind::Cpu:
			if (in.per_cpu)
				breakdown.push_back({std::move(sl.labels), &point});
			break;
		case ScopeKind::Breakdown:
		case ScopeKind::Vq: breakdown.push_back({std::move(sl.labels), &point}); break;
		case ScopeKind::NodeHugepages: out.node_hugepages.push_back({std::move(sl.labels), &point}); break;
		case ScopeKind::Vm:
			// A per-vCPU series' vm:NAME point is a mean, not a count:
			// the vCPUs' own counters are exported instead.
			if (vm_family && vm_scope)
				out.vm.push_back({std::move(sl.labels), &point});
			break;
		case ScopeKind::VmVcpu:
		case ScopeKind::VmCulprit:
			if (vm_family)
				out.vm.push_back({std::move(sl.labels), &point});
			break;
		case ScopeKind::Skip: break;
		}
	}
	out.host = breakdown.empty() ? std::move(system) : std::move(breakdown);
	return out;
}

// select() of a registry series: which of its vm scopes go to hwsig_vm_* is its row's vm field.
template <typename P> Selected<P> select(const Series<P> &s, const ExportInput &in, const series::Def &def)
{
	return select(s, in, def.vm != series::VmExport::None, def.vm == series::VmExport::All);
}

// A multiplexed counter is exported as counted, with its enabled and
// running times: PromQL scales any window by that window's own times, which
// a scaled cumulative count (pulled toward the lifetime's running fraction)
// could not give.
void add_counter(Exposition &ex, const series::Def &def, const Series<CounterPoint> &s, const ExportInput &in)
{
	const std::string host = std::string("hwsig_") + def.family;
	const std::string vm = std::string("hwsig_vm_") + def.family;
	auto sel = select(s, in, def);
	for (const auto *group : {&sel.host, &sel.vm}) {
		const std::string &name = group == &sel.host ? host : vm;
		for (const auto &[labels, p] : *group) {
			const double count = def.pmu ? p->mux.raw : p->value;
			ex.sample(name, Type::Counter, def.help, labels, count * def.scale / def.div);
			if (def.pmu) {
				Labels l{{"counter", name}};
				l.insert(l.end(), labels.begin(), labels.end());
				ex.sample(own_family::kPmuEnabled, Type::Counter, own_family::kPmuEnabledHelp, l,
					  p->mux.enabled_ns / 1e9);
				ex.sample(own_family::kPmuRunning, Type::Counter, own_family::kPmuRunningHelp, l,
					  p->mux.running_ns / 1e9);
			}
		}
	}
}

void add_gauge(Exposition &ex, const series::Def &def, const Series<double> &s, const ExportInput &in)
{
	auto sel = select(s, in, def);
	const auto add = [&](const std::string &name, const std::string &help, const auto &group) {
		for (const auto &[labels, p] : group)
			ex.sample(name, Type::Gauge, help, labels, *p * def.scale / def.div);
	};
	add(std::string("hwsig_") + def.family, def.help, sel.host);
	add(std::string("hwsig_vm_") + def.family, def.help, sel.vm);
	add(std::string("hwsig_node_") + def.family, std::string(def.help) + " Per NUMA node.", sel.node_hugepages);
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
	const auto b = Exposition::buckets(s.by_scope.begin()->second.layout, slots, def.buckets);
	for (const auto &[labels, h] : sel.host)
		ex.histogram(std::string("hwsig_") + def.family, def.help, labels, *h, b);
	for (const auto &[labels, h] : sel.vm)
		ex.histogram(std::string("hwsig_vm_") + def.family, def.help, labels, *h, b);
}

} // namespace

std::string render_prometheus(const ExportInput &in, ExpositionFormat fmt)
{
	Exposition ex;
	if (const Snapshot *snap = in.snapshot) {
		for (const series::Def &def : series::kRegistry) {
			if (!def.family)
				continue;
			switch (def.kind) {
			case series::Kind::Counter:
				if (auto it = snap->counters().find(def.name); it != snap->counters().end())
					add_counter(ex, def, it->second, in);
				break;
			case series::Kind::Gauge:
				if (auto it = snap->gauges().find(def.name); it != snap->gauges().end())
					add_gauge(ex, def, it->second, in);
				break;
			case series::Kind::Histogram:
				if (auto it = snap->histograms().find(def.name); it != snap->histograms().end())
					add_histogram(ex, def, it->second, in);
				break;
			}
		}
	}
	if (in.unavailable) {
		for (const auto &note : *in.unavailable) {
			auto scope = note_scope(note.scope, in);
			if (!scope)
				continue;
			ex.sample(own_family::kUnavailable, Type::Gauge, own_family::kUnavailableHelp,
				  {{"metric", note.id}, {"scope", *scope}, {"reason", note.reason}}, 1);
		}
	}
	ex.sample(own_family::kBuildInfo, Type::Info, own_family::kBuildInfoHelp,
		  {{"version", in.version}}, 1);
	if (in.vms)
		for (const Vm &vm : *in.vms)
			ex.sample(own_family::kVmInfo, Type::Info, own_family::kVmInfoHelp,
				  {{"vm", vm.name}, {"pid", std::to_string(vm.pid)}}, 1);
	for (const SelfMetric &m : in.self) {
		if (!valid_name(m.name, true) || m.counter != ends_with(m.name, "_total"))
			continue;
		bool labels_ok = std::all_of(m.labels.begin(), m.labels.end(), [](const auto &l) {
			return valid_name(l.first, false) && l.first.rfind("__", 0) != 0;
		});
		if (!labels_ok)
			continue;
		ex.sample(m.name, m.counter ? Type::Counter : Type::Gauge, m.help, m.labels, m.value);
	}
	return ex.text(fmt);
}

std::string_view content_type(ExpositionFormat fmt)
{
	return fmt == ExpositionFormat::OpenMetrics100 ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
						       : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat negotiate_format(std::string_view accept)
{
	// Accept: a comma-separated list of media ranges with parameters.
	std::size_t pos = 0;
	while (pos <= accept.size()) {
		std::size_t end = accept.find(',', pos);
		if (end == std::string_view::npos)
			end = accept.size();
		std::string_view range = accept.substr(pos, end - pos);
		pos = end + 1;
		auto trim = [](std::string_view s) {
			while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
				s.remove_prefix(1);
			while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
				s.remove_suffix(1);
			return s;
		};
		auto lower = [](std::string_view s) {
			std::string o(s);
			for (char &c : o)
				if (c >= 'A' && c <= 'Z')
					c = static_cast<char>(c - 'A' + 'a');
			return o;
		};
		std::size_t semi = range.find(';');
		std::string type = lower(trim(range.substr(0, semi)));
		if (type != "application/openmetrics-text")
			continue;
		bool version_ok = true, q_zero = false;
		while (semi != std::string_view::npos) {
			std::size_t next = range.find(';', semi + 1);
			std::string_view param = trim(range.substr(semi + 1, next == std::string_view::npos
										      ? std::string_view::npos
										      : next - semi - 1));
			semi = next;
			auto eq = param.find('=');
			if (eq == std::string_view::npos)
				continue;
			std::string key = lower(trim(param.substr(0, eq)));
			std::string_view val = trim(param.substr(eq + 1));
			if (val.size() >= 2 && val.front() == '"' && val.back() == '"')
				val = val.substr(1, val.size() - 2);
			if (key == "version")
				version_ok = val == "1.0.0";
			else if (key == "q")
				q_zero = std::strtod(std::string(val).c_str(), nullptr) <= 0;
		}
		if (version_ok && !q_zero)
			return ExpositionFormat::OpenMetrics100;
	}
	return ExpositionFormat::Prometheus004;
}

} // namespace hwsig
