#include "hwsig/derive.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace hwsig {

namespace {

// "cpu:2" before "cpu:10"; "system" first.
bool scope_less(const std::string &a, const std::string &b)
{
	if (a == b)
		return false;
	if (a == "system")
		return true;
	if (b == "system")
		return false;
	std::size_t i = 0, j = 0;
	while (i < a.size() && j < b.size()) {
		bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
		if (da && db) {
			std::size_t ei = i, ej = j;
			while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9')
				++ei;
			while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9')
				++ej;
			std::string_view na(a.data() + i, ei - i), nb(b.data() + j, ej - j);
			while (na.size() > 1 && na.front() == '0')
				na.remove_prefix(1);
			while (nb.size() > 1 && nb.front() == '0')
				nb.remove_prefix(1);
			if (na.size() != nb.size())
				return na.size() < nb.size();
			if (na != nb)
				return na < nb;
			i = ei;
			j = ej;
			continue;
		}
		if (a[i] != b[j])
			return a[i] < b[j];
		++i;
		++j;
	}
	return a.size() - i < b.size() - j;
}

double seconds_between(std::uint64_t from, std::uint64_t to)
{
	return to > from ? static_cast<double>(to - from) / 1e9 : 0;
}

// The metrics that exist only per device: a reason for all of them is
// given at "dev:*", never at "system" (which would read as a host-wide value).
bool per_device(const MetricDef &def)
{
	return def.layer == Layer::Io;
}

std::string multiplex_note(double fraction)
{
	char buf[96];
	std::snprintf(buf, sizeof(buf), "multiplexed: counted %.0f%% of the time, scaled",
		      fraction * 100.0);
	return buf;
}

class Deriver {
public:
	// start: for a summary, where each scope that appeared after the
	// first snapshot was first seen (prev is then RunStart::first()).
	Deriver(const Snapshot &prev, const Snapshot &cur, Interval &out, const RunStart *start = nullptr)
		: prev_(prev), cur_(cur), out_(out), start_(start)
	{
	}

	void run(const MetricDef &def)
	{
		switch (def.rule.kind) {
		case Rule::Kind::Ratio:
		case Rule::Kind::Rate:
			counters(def);
			break;
		case Rule::Kind::Gauge:
			gauges(def);
			break;
		case Rule::Kind::Percentile:
		case Rule::Kind::Entropy:
			histograms(def);
			break;
		}
	}

private:
	// false when the value could not be given (said unavailable instead).
	bool emit(const MetricDef &def, const std::string &scope, double value,
		  const std::string &source, std::string note = {})
	{
		if (!std::isfinite(value)) {
			unavailable(def, scope, UnavailableCode::incomplete, "not a finite number " + span());
			return false;
		}
		out_.metrics.push_back({def.id, scope, value, def.unit, source, std::move(note), def.layer});
		return true;
	}

	static std::optional<Quantile> entropy_value(const Histogram &d)
	{
		auto e = seek_pattern_entropy(d);
		return e ? std::optional<Quantile>(Quantile{*e, false}) : std::nullopt;
	}

	void unavailable(const MetricDef &def, const std::string &scope, UnavailableCode code, std::string reason)
	{
		out_.unavailable.push_back({def.id, scope, code, std::move(reason)});
	}

	std::string span() const { return start_ ? "in this run" : "in this interval"; }

	// An empty delta histogram, said in the metric's terms: a device's
	// queue time exists only for requests inserted into its queue (a loop
	// device's are not), its other histograms for every request.
	static std::string no_events(const MetricDef &def)
	{
		if (def.rule.num.front() == series::kIoQueueUs)
			return "no request went through the I/O scheduler queue ";
		return per_device(def) ? "no I/O " : "no events ";
	}

	// Where (name, scope) starts: prev_, or for a summary the snapshot in
	// which the scope first appeared. Returns the seconds from there to
	// cur_ between two readings of the series' own source (each source is
	// stamped at its read: VM discovery and the sources before it are not
	// in its interval), and sets the note saying where a summary's scope
	// starts.
	double scope_seconds(const std::string &name, const std::string &scope, std::string &note) const
	{
		const std::uint64_t from = prev_.read_ns(name), to = cur_.read_ns(name);
		if (!start_)
			return seconds_between(from, to);
		std::uint64_t since = start_->since(name, scope);
		if (since <= from)
			return seconds_between(from, to);
		double s = seconds_between(since, to);
		char buf[128];
		std::snprintf(buf, sizeof(buf), "%s %.2f s into the run: over its last %.2f s",
			      start_->after_its_vm(name, scope) ? "its VM first seen" : "first seen",
			      seconds_between(from, since), s);
		note = buf;
		return s;
	}

	// Sum of deltas of the named counters at scope; nullopt (with a note)
	// when any is missing, went backwards, or (multiplexed) was not
	// counted for part of the interval.
	struct Sum {
		double delta = 0;
		double min_fraction = 1.0; // the least counted input's Δrunning / Δenabled
	};
	std::optional<Sum> sum_deltas(const MetricDef &def, const std::vector<std::string> &names,
				      const std::string &scope)
	{
		Sum s;
		for (const auto &name : names) {
			const CounterPoint *c = cur_.counter(name, scope);
			const CounterPoint *p = prev_.counter(name, scope);
			static const CounterPoint zero{};
			if (c && !p && prev_.counts_from_zero(name))
				p = &zero; // counting since before prev, nothing for this scope yet
			if (!c || !p) {
				if (c && !p)
					return std::nullopt; // appeared in this interval: next time
				unavailable(def, scope, UnavailableCode::incomplete, "incomplete data: no " + name + " for this scope");
				return std::nullopt;
			}
			if (went_backwards(*p, *c)) {
				unavailable(def, scope, UnavailableCode::incomplete, name + " went backwards (counter reset)");
				return std::nullopt;
			}
			// A run's summary spans the failed interval and the one
			// after: the count missed at one read came with the next.
			if (const double unread = c->mux.unread - p->mux.unread; unread > 0 && !start_) {
				unavailable(def, scope, UnavailableCode::incomplete, not_read(name, unread));
				return std::nullopt;
			}
			const double uncounted_ns = c->mux.uncounted_ns - p->mux.uncounted_ns;
			if (uncounted_ns > 0) {
				unavailable(def, scope, UnavailableCode::incomplete, not_counted(name, uncounted_ns));
				return std::nullopt;
			}
			s.delta += c->value - p->value;
			s.min_fraction = std::min(s.min_fraction, running_fraction(*p, *c));
		}
		return s;
	}

	static bool went_backwards(const CounterPoint &p, const CounterPoint &c)
	{
		return c.value < p.value || c.mux.raw < p.mux.raw || c.mux.enabled_ns < p.mux.enabled_ns ||
		       c.mux.running_ns < p.mux.running_ns || c.mux.uncounted_ns < p.mux.uncounted_ns ||
		       c.mux.unread < p.mux.unread;
	}

	// This interval's share of the enabled time its counters were counting;
	// 1 for a counter that is not multiplexed.
	static double running_fraction(const CounterPoint &p, const CounterPoint &c)
	{
		const double enabled = c.mux.enabled_ns - p.mux.enabled_ns;
		const double running = c.mux.running_ns - p.mux.running_ns;
		return enabled > 0 ? std::min(1.0, running / enabled) : 1.0;
	}

	std::string not_read(const std::string &name, double unread) const
	{
		char buf[224];
		std::snprintf(buf, sizeof(buf),
			      "%s: %.0f counter read%s failed in this interval or the one before (the next read "
			      "holds both intervals' counts): unknown %s, not a drop and a spike",
			      name.c_str(), unread, unread == 1 ? "" : "s", span().c_str());
		return buf;
	}

	std::string not_counted(const std::string &name, double uncounted_ns) const
	{
		char buf[192];
		std::snprintf(buf, sizeof(buf),
			      "%s was not counted at all between two reads (%.2f s enabled, never running: the "
			      "PMU was busy with other events): unknown %s",
			      name.c_str(), uncounted_ns / 1e9, span().c_str());
		return buf;
	}

	void counters(const MetricDef &def)
	{
		const auto &rule = def.rule;
		auto series = cur_.counters().find(rule.num.front());
		if (series == cur_.counters().end())
			return;
		for (const auto &[scope, point] : series->second.by_scope) {
			(void)point;
			if (!prev_.counter(rule.num.front(), scope) && !prev_.counts_from_zero(rule.num.front()))
				continue; // first sighting of this scope: from the next snapshot on
			auto num = sum_deltas(def, rule.num, scope);
			if (!num)
				continue;
			std::string note;
			const double dt = scope_seconds(rule.num.front(), scope, note);
			double value = 0;
			if (rule.kind == Rule::Kind::Rate) {
				if (dt <= 0) {
					unavailable(def, scope, UnavailableCode::incomplete,
						    start_ ? "zero-length run" : "zero-length interval");
					continue;
				}
				value = rule.scale * num->delta / dt;
			} else {
				auto den = sum_deltas(def, rule.den, scope);
				if (!den)
					continue;
				if (den->delta <= 0) {
					unavailable(def, scope, UnavailableCode::no_events, "no " + join(rule.den) + " " + span());
					continue;
				}
				value = rule.scale * num->delta / den->delta;
				num->min_fraction = std::min(num->min_fraction, den->min_fraction);
			}
			if (num->min_fraction < 0.999)
				note = note.empty() ? multiplex_note(num->min_fraction)
						    : note + "; " + multiplex_note(num->min_fraction);
			emit(def, scope, value, series->second.source, std::move(note));
		}
	}

	void gauges(const MetricDef &def)
	{
		auto series = cur_.gauges().find(def.rule.num.front());
		if (series == cur_.gauges().end())
			return;
		for (const auto &[scope, value] : series->second.by_scope)
			emit(def, scope, def.rule.scale * value, series->second.source);
	}

	void histograms(const MetricDef &def)
	{
		auto series = cur_.histograms().find(def.rule.num.front());
		if (series == cur_.histograms().end())
			return;
		for (const auto &[scope, hist] : series->second.by_scope) {
			const Histogram *before = prev_.histogram(def.rule.num.front(), scope);
			Histogram empty;
			if (!before) {
				if (!prev_.counts_from_zero(def.rule.num.front()))
					continue; // first sighting of this scope: from the next snapshot on
				empty.layout = hist.layout;
				before = &empty;
			}
			std::string note;
			(void)scope_seconds(def.rule.num.front(), scope, note);
			auto d = Histogram::delta(*before, hist);
			if (!d) {
				unavailable(def, scope, UnavailableCode::incomplete, "histogram went backwards (collector reset)");
				continue;
			}
			if (def.rule.kind != Rule::Kind::Percentile && d->total() > 0 &&
			    d->total() < kMinEntropyRequests) {
				unavailable(def, scope, UnavailableCode::no_events,
					    "too few requests (" + std::to_string(d->total()) + " in the interval, " +
						    std::to_string(kMinEntropyRequests) + " needed)");
				continue;
			}
			auto v = def.rule.kind == Rule::Kind::Percentile ? quantile(*d, def.rule.q)
									 : entropy_value(*d);
			if (!v) {
				unavailable(def, scope, UnavailableCode::no_events, no_events(def) + span());
				continue;
			}
			if (emit(def, scope, def.rule.scale * v->value, series->second.source, std::move(note)))
				out_.metrics.back().upper_bound = v->upper_bound;
		}
	}

	static std::string join(const std::vector<std::string> &names)
	{
		std::string out;
		for (const auto &n : names)
			out += (out.empty() ? "" : "+") + n;
		return out;
	}

	const Snapshot &prev_;
	const Snapshot &cur_;
	Interval &out_;
	const RunStart *start_ = nullptr;
};

} // namespace

std::uint64_t RunStart::VmStart::read(const std::string &name) const
{
	auto it = read_ns.find(name);
	return it == read_ns.end() ? mono_ns : it->second;
}

// Each VM in s (a series or note at vm:NAME or a scope below it) not seen
// before starts here: counted from zero from the last snapshot's readings.
void RunStart::note_vms(const Snapshot &s)
{
	auto note = [&](const std::string &scope) {
		if (scope.compare(0, 3, "vm:") != 0)
			return;
		const Scope parsed = Scope::parse(scope);
		if (!parsed.of_vm())
			return;
		std::string vm = Scope::vm(parsed.vm()).str();
		if (vms_.find(vm) != vms_.end())
			return;
		VmStart &start = vms_[std::move(vm)];
		start.at_first = !have_;
		start.mono_ns = last_mono_ns_;
		start.read_ns = last_read_ns_;
	};
	for (const auto &[name, series] : s.counters())
		for (const auto &[scope, point] : series.by_scope)
			note(scope);
	for (const auto &[name, series] : s.gauges())
		for (const auto &[scope, value] : series.by_scope)
			note(scope);
	for (const auto &[name, series] : s.histograms())
		for (const auto &[scope, hist] : series.by_scope)
			note(scope);
	for (const auto &u : s.unavailable())
		note(u.scope);
}

const RunStart::VmStart *RunStart::vm_start(const std::string &scope) const
{
	if (scope.compare(0, 3, "vm:") != 0)
		return nullptr;
	const Scope parsed = Scope::parse(scope);
	if (!parsed.of_vm())
		return nullptr;
	auto it = vms_.find(Scope::vm(parsed.vm()).str());
	return it == vms_.end() ? nullptr : &it->second;
}

void RunStart::observe(const Snapshot &s)
{
	// For the next call: a scope that appears then is covered from this
	// reading of its series.
	auto keep_stamps = [&] {
		last_mono_ns_ = s.mono_ns;
		last_read_ns_.clear();
		for (const auto &[name, series] : s.counters())
			last_read_ns_[name] = s.read_ns(name);
		for (const auto &[name, series] : s.histograms())
			last_read_ns_[name] = s.read_ns(name);
	};
	note_vms(s);
	if (!have_) {
		first_ = s;
		first_.stamp_readings(0);
		have_ = true;
		keep_stamps();
		return;
	}
	// A scope absent from the first snapshot. When its source counts from
	// zero, it had counted nothing before it appeared: it is covered from
	// the start of what it belongs to (the run, or its VM's start), with
	// 0 until it appeared. Else from its values here, over its own time.
	auto from_zero = [&](const std::string &name, const std::string &scope) {
		auto key = std::make_pair(name, scope);
		if (since_.find(key) != since_.end())
			return;
		const VmStart *vm = vm_start(scope);
		if (!vm || vm->at_first) {
			since_.emplace(std::move(key), first_.read_ns(name)); // the whole run
			return;
		}
		const std::uint64_t from = vm->read(name);
		if (from < last_read(name))
			after_vm_.insert(key); // its VM was there before it
		since_.emplace(std::move(key), from);
	};
	for (const auto &[name, series] : s.counters())
		for (const auto &[scope, point] : series.by_scope) {
			if (first_.counter(name, scope))
				continue;
			if (first_.counts_from_zero(name)) {
				from_zero(name, scope);
				continue;
			}
			first_.add_counter(name, scope, point, series.source);
			since_[{name, scope}] = s.read_ns(name);
		}
	for (const auto &[name, series] : s.histograms())
		for (const auto &[scope, hist] : series.by_scope) {
			if (first_.histogram(name, scope))
				continue;
			if (first_.counts_from_zero(name)) {
				from_zero(name, scope);
				continue;
			}
			first_.add_histogram(name, scope, hist, series.source);
			since_[{name, scope}] = s.read_ns(name);
		}
	keep_stamps();
}

std::uint64_t RunStart::last_read(const std::string &name) const
{
	auto it = last_read_ns_.find(name);
	return it == last_read_ns_.end() ? last_mono_ns_ : it->second;
}

std::uint64_t RunStart::since(const std::string &name, const std::string &scope) const
{
	auto it = since_.find({name, scope});
	return it == since_.end() ? first_.read_ns(name) : it->second;
}

namespace {

Interval derive_with(const Snapshot &prev, const Snapshot &cur, const std::vector<std::string> &claimed_ids,
		     const RunStart *start)
{
	Interval out;
	out.realtime_ns = cur.realtime_ns;
	out.interval_s = seconds_between(prev.mono_ns, cur.mono_ns);
	Deriver deriver(prev, cur, out, start);
	for (const auto &def : catalog())
		deriver.run(def);
	const char *span = start ? "in this run" : "in this interval";

	// A source's own reason for a scope beats derive's generic one (it
	// knows why: "THP disabled" rather than "no THP faults").
	std::vector<UnavailableNote> generic = std::move(out.unavailable);
	out.unavailable.clear();
	std::set<std::pair<std::string, std::string>> noted;
	for (const auto &u : cur.unavailable())
		if (noted.insert({u.id, u.scope}).second)
			out.unavailable.push_back(u);
	for (auto &u : generic)
		if (noted.insert({u.id, u.scope}).second)
			out.unavailable.push_back(std::move(u));
	// A value beats any note for its (id, scope): a source may note a reason
	// (THP mode "never") while the counters still moved in this interval
	// (the mode changed mid-interval); reporting both would contradict.
	std::set<std::pair<std::string, std::string>> valued;
	for (const auto &m : out.metrics)
		valued.insert({m.id, m.scope});
	out.unavailable.erase(std::remove_if(out.unavailable.begin(), out.unavailable.end(),
					     [&](const UnavailableNote &u) {
						     return valued.count({u.id, u.scope}) != 0;
					     }),
			      out.unavailable.end());
	std::set<std::string> with_value, with_note;
	for (const auto &m : out.metrics)
		with_value.insert(m.id);
	for (const auto &u : out.unavailable)
		with_note.insert(u.id);
	std::set<std::string> claimed(claimed_ids.begin(), claimed_ids.end());
	for (const auto &def : catalog()) {
		if (with_value.count(def.id) || with_note.count(def.id))
			continue;
		if (!claimed.count(def.id))
			out.unavailable.push_back({def.id, "system", UnavailableCode::disabled,
						   "no source for it in this build"});
		else if (per_device(def))
			out.unavailable.push_back({def.id, "system", UnavailableCode::no_events,
						   std::string("no block device with I/O ") + span});
		else
			out.unavailable.push_back({def.id, "system", UnavailableCode::incomplete,
						   std::string("no data ") + span});
	}
	// A per-device metric's reason for every device goes at "dev:*".
	// (The catalog never changes: its index is built once.)
	static const std::map<std::string, const MetricDef *, std::less<>> defs = [] {
		std::map<std::string, const MetricDef *, std::less<>> m;
		for (const auto &def : catalog())
			m.emplace(def.id, &def);
		return m;
	}();
	for (auto &u : out.unavailable) {
		auto it = defs.find(u.id);
		if (u.scope == "system" && it != defs.end() && per_device(*it->second))
			u.scope = Scope::all(Scope::Kind::Dev).str();
	}

	// Catalog order, then natural scope order.
	static const std::map<std::string, std::size_t, std::less<>> rank = [] {
		std::map<std::string, std::size_t, std::less<>> m;
		for (std::size_t i = 0; i < catalog().size(); ++i)
			m.emplace(catalog()[i].id, i);
		return m;
	}();
	auto order = [&](const std::string &id) {
		auto it = rank.find(id);
		return it == rank.end() ? rank.size() : it->second;
	};
	// Each element's rank looked up once, not at every comparison.
	auto sort_by_catalog = [&](auto &items) {
		std::vector<std::pair<std::size_t, std::size_t>> keys; // rank, position
		keys.reserve(items.size());
		for (std::size_t i = 0; i < items.size(); ++i)
			keys.emplace_back(order(items[i].id), i);
		std::stable_sort(keys.begin(), keys.end(), [&](const auto &a, const auto &b) {
			return a.first != b.first ? a.first < b.first
						  : scope_less(items[a.second].scope, items[b.second].scope);
		});
		std::remove_reference_t<decltype(items)> sorted;
		sorted.reserve(items.size());
		for (const auto &k : keys)
			sorted.push_back(std::move(items[k.second]));
		items = std::move(sorted);
	};
	sort_by_catalog(out.metrics);
	sort_by_catalog(out.unavailable);

	// Where: a scope absent from prev had counted nothing when its series
	// counts from zero, else it is taken from the next interval on, like
	// a counter.
	for (const auto &[name, series] : cur.cpu_counts())
		for (const auto &[scope, counts] : series.by_scope) {
			const CpuCounts *before = prev.cpu_count(name, scope);
			if (!before && !prev.counts_from_zero(name))
				continue;
			std::vector<unsigned> grown = cpus_grown(before, counts);
			if (!grown.empty())
				out.cpus[name][scope] = std::move(grown);
		}
	return out;
}

} // namespace

std::vector<unsigned> cpus_grown(const CpuCounts *prev, const CpuCounts &cur)
{
	static const CpuCounts none;
	const CpuCounts &was = prev ? *prev : none;
	std::vector<unsigned> out;
	auto p = was.begin();
	const auto end = was.end();
	for (const auto &[cpu, count] : cur) {
		while (p != end && p->first < cpu)
			++p;
		const std::uint64_t before = p != end && p->first == cpu ? p->second : 0;
		if (count > before || (count < before && count != 0))
			out.push_back(cpu);
	}
	return out;
}

Interval derive(const Snapshot &prev, const Snapshot &cur, const std::vector<std::string> &claimed_ids)
{
	return derive_with(prev, cur, claimed_ids, nullptr);
}

Interval derive_summary(const RunStart &start, const Snapshot &last, const std::vector<std::string> &claimed_ids)
{
	return derive_with(start.first(), last, claimed_ids, &start);
}

std::vector<std::string> interval_conflicts(const Interval &iv)
{
	std::vector<std::string> out;
	std::map<std::pair<std::string, std::string>, int> values, notes;
	for (const auto &m : iv.metrics)
		if (++values[{m.id, m.scope}] == 2)
			out.push_back(m.id + " " + m.scope + ": two values");
	for (const auto &u : iv.unavailable)
		if (++notes[{u.id, u.scope}] == 2)
			out.push_back(u.id + " " + u.scope + ": unavailable twice");
	for (const auto &note : notes)
		if (values.count(note.first))
			out.push_back(note.first.first + " " + note.first.second + ": a value and unavailable");
	return out;
}

} // namespace hwsig
