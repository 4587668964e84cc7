#include "history.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

#include "hwsig/scope.h"

namespace hwsigd {

namespace {

// VMs and devices come and go; their keys stay in the table until a
// compaction drops the ones no kept snapshot uses. This bounds the table
// by the keys of the snapshots held, whatever the churn.
constexpr std::size_t kCompactAbove = 1u << 16;

bool per_cpu_scope(std::string_view scope)
{
	// Asked of every series every interval: the parse only for "cpu:...".
	return scope.starts_with("cpu:") && hwsig::Scope::kind_of(scope) == hwsig::Scope::Kind::Cpu;
}

// The three parts of a joined key.
struct Parts {
	std::string_view a, b, c;
};

Parts split3(const std::string &k)
{
	std::string_view v(k);
	std::size_t i = v.find('\0');
	std::size_t j = v.find('\0', i + 1);
	return {v.substr(0, i), v.substr(i + 1, j - i - 1), v.substr(j + 1)};
}

} // namespace

std::uint32_t History::intern(std::string_view name)
{
	scratch_.assign(name);
	return intern_scratch();
}

std::uint32_t History::intern3(std::string_view a, std::string_view b, std::string_view c)
{
	scratch_.assign(a);
	scratch_ += '\0';
	scratch_ += b;
	scratch_ += '\0';
	scratch_ += c;
	return intern_scratch();
}

std::uint32_t History::intern_scratch()
{
	auto it = index_.find(std::string_view(scratch_));
	if (it != index_.end())
		return it->second;
	const auto index = static_cast<std::uint32_t>(keys_.size());
	index_.emplace(scratch_, index);
	keys_.push_back(scratch_);
	return index;
}

void History::begin_series(Kind kind, const std::string &name, const std::string &source, std::uint64_t shape,
			   bool keep_cpu)
{
	series_ = &series_keys_[kind][name];
	series_name_ = &name;
	if (series_->source != source || series_->keep_cpu != keep_cpu) {
		series_->source = source;
		series_->keep_cpu = keep_cpu;
		series_->scopes.clear();
		std::fill(std::begin(series_->shapes), std::end(series_->shapes), 0);
	}
	series_shape_ = shape;
	shape_known_ = shape != 0 && std::find(std::begin(series_->shapes), std::end(series_->shapes), shape) !=
						     std::end(series_->shapes);
	scopes_changed_ = false;
	keep_cpu_ = keep_cpu;
	dropped_cpu_ = false;
}

bool History::drop_scope(const std::string &scope)
{
	// A known shape without per-CPU scopes has none to drop: its scopes'
	// text is not even looked at.
	if (keep_cpu_ || (shape_known_ && !series_->any_cpu))
		return false;
	const bool cpu = per_cpu_scope(scope);
	dropped_cpu_ |= cpu;
	return cpu;
}

std::uint32_t History::series_key(std::size_t at, const std::string &scope)
{
	auto &scopes = series_->scopes;
	if (shape_known_)
		return scopes[at].second; // the same scopes, in the same order
	if (at < scopes.size() && scopes[at].first == scope)
		return scopes[at].second;
	scopes_changed_ = true;
	const std::uint32_t key = intern3(*series_name_, scope, series_->source);
	if (at >= scopes.size())
		scopes.resize(at + 1);
	scopes[at].first = scope;
	scopes[at].second = key;
	return key;
}

void History::end_series(std::size_t count)
{
	if (shape_known_)
		return;
	auto &keys = *series_;
	if (count != keys.scopes.size()) {
		keys.scopes.resize(count);
		scopes_changed_ = true;
	}
	// Another shape with these very scopes joins the ones known; scopes
	// that changed leave only this one.
	if (scopes_changed_)
		std::fill(std::begin(keys.shapes), std::end(keys.shapes), 0);
	else
		std::copy_backward(std::begin(keys.shapes), std::end(keys.shapes) - 1, std::end(keys.shapes));
	keys.shapes[0] = series_shape_;
	keys.any_cpu = dropped_cpu_;
}

std::uint32_t History::note_key(std::size_t at, const hwsig::UnavailableNote &n)
{
	if (at < note_keys_.size()) {
		const NoteKey &k = note_keys_[at];
		if (k.id == n.id && k.scope == n.scope && k.reason == n.reason)
			return k.key;
	} else {
		note_keys_.resize(at + 1);
	}
	NoteKey &k = note_keys_[at];
	k.key = intern3(n.id, n.scope, n.reason);
	k.id = n.id;
	k.scope = n.scope;
	k.reason = n.reason;
	return k.key;
}

static bool same_vms(const std::vector<hwsig::Vm> &a, const std::vector<hwsig::Vm> &b)
{
	if (a.size() != b.size())
		return false;
	for (std::size_t i = 0; i < a.size(); ++i)
		if (a[i].pid != b[i].pid || a[i].name != b[i].name || a[i].vcpu_tids != b[i].vcpu_tids ||
		    a[i].vhost_tids != b[i].vhost_tids || a[i].taps != b[i].taps)
			return false;
	return true;
}

void History::add(const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms, bool keep_cpu)
{
	Entry e;
	if (entries_.size() > capacity_) {
		// Full: the oldest entry goes, and the new one is built in its
		// vectors. Snapshots have the same shape from one interval to the
		// next, so this allocates nothing once the history is full.
		e = std::move(entries_.front());
		entries_.pop_front();
		e.keys.reset();
		e.values.clear();
		e.muxes.clear();
		e.hists.clear();
		e.used.clear();
		e.notes.reset();
		e.from_zero.clear();
		e.read_ns.clear();
	} else if (!entries_.empty()) {
		// One allocation each instead of a vector growing by doubling.
		const Entry &last = entries_.back();
		e.values.reserve(last.values.size());
		e.hists.reserve(last.hists.size());
		e.used.reserve(last.used.size());
		e.from_zero.reserve(last.from_zero.size());
		e.read_ns.reserve(last.read_ns.size());
	}
	if (!entries_.empty() && same_vms(*entries_.back().vms, vms))
		e.vms = entries_.back().vms;
	else
		e.vms = std::make_shared<const std::vector<hwsig::Vm>>(vms);
	e.mono_ns = s.mono_ns;
	e.realtime_ns = s.realtime_ns;
	keys_scratch_.clear();
	for (const auto &[name, series] : s.counters()) {
		std::size_t at = 0;
		begin_series(kCounter, name, series.source, series.shape, keep_cpu);
		for (const auto &[scope, point] : series.by_scope) {
			if (drop_scope(scope))
				continue;
			if (!point.mux.empty())
				e.muxes.emplace_back(static_cast<std::uint32_t>(e.values.size()), point.mux);
			keys_scratch_.push_back(series_key(at++, scope));
			e.values.push_back(point.value);
		}
		end_series(at);
	}
	for (const auto &[name, series] : s.gauges()) {
		std::size_t at = 0;
		begin_series(kGauge, name, series.source, series.shape, keep_cpu);
		for (const auto &[scope, value] : series.by_scope)
			if (!drop_scope(scope)) {
				keys_scratch_.push_back(series_key(at++, scope) | kGaugeBit);
				e.values.push_back(value);
			}
		end_series(at);
	}
	for (const auto &[name, series] : s.histograms()) {
		std::size_t at = 0;
		begin_series(kHistogram, name, series.source, series.shape, keep_cpu);
		for (const auto &[scope, hist] : series.by_scope) {
			if (drop_scope(scope))
				continue;
			Hist h;
			h.key = series_key(at++, scope);
			h.layout = hist.layout;
			h.slots = static_cast<std::uint32_t>(hist.counts.size());
			h.first = static_cast<std::uint32_t>(e.used.size());
			for (std::size_t i = 0; i < hist.counts.size(); ++i)
				if (hist.counts[i])
					e.used.emplace_back(static_cast<std::uint32_t>(i), hist.counts[i]);
			h.used = static_cast<std::uint32_t>(e.used.size()) - h.first;
			e.hists.push_back(h);
		}
		end_series(at);
	}
	std::size_t note_at = 0;
	notes_scratch_.clear();
	for (const auto &n : s.unavailable())
		if (keep_cpu || !per_cpu_scope(n.scope))
			notes_scratch_.emplace_back(note_key(note_at++, n), n.code);
	// The same series and notes as the entry before: its lists.
	const Entry *last = entries_.empty() ? nullptr : &entries_.back();
	if (last && last->keys && *last->keys == keys_scratch_)
		e.keys = last->keys;
	else
		e.keys = std::make_shared<const Keys>(keys_scratch_);
	if (last && last->notes && *last->notes == notes_scratch_)
		e.notes = last->notes;
	else
		e.notes = std::make_shared<const NoteKeys>(notes_scratch_);
	for (const auto &name : s.from_zero())
		e.from_zero.push_back(intern(name));
	auto stamps = [&](const auto &series_map) {
		for (const auto &[name, series] : series_map)
			if (series.read_ns)
				e.read_ns.emplace_back(intern(name), series.read_ns);
	};
	stamps(s.counters());
	stamps(s.gauges());
	stamps(s.histograms());
	entries_.push_back(std::move(e));
	trim();
	if (keys_.size() > kCompactAbove)
		compact_keys();
}

void History::trim()
{
	while (entries_.size() > capacity_ + 1)
		entries_.pop_front();
}

void History::set_capacity(std::size_t capacity)
{
	capacity_ = capacity;
	trim();
}

hwsig::Snapshot History::snapshot(std::size_t i) const
{
	const Entry &e = entries_.at(i);
	hwsig::Snapshot s;
	s.mono_ns = e.mono_ns;
	s.realtime_ns = e.realtime_ns;
	auto mux = e.muxes.begin();
	for (std::size_t v = 0; v < e.values.size(); ++v) {
		const std::uint32_t key = (*e.keys)[v];
		Parts p = split3(text(key & ~kGaugeBit));
		if (key & kGaugeBit) {
			s.add_gauge(p.a, p.b, e.values[v], p.c);
			continue;
		}
		hwsig::CounterPoint point{e.values[v], {}};
		if (mux != e.muxes.end() && mux->first == v)
			point.mux = (mux++)->second;
		s.add_counter(p.a, p.b, point, p.c);
	}
	for (const auto &h : e.hists) {
		Parts p = split3(text(h.key));
		hwsig::Histogram hist;
		hist.layout = h.layout;
		hist.counts.assign(h.slots, 0);
		for (std::uint32_t u = h.first; u < h.first + h.used; ++u) {
			auto [slot, count] = e.used[u];
			hist.counts[slot] = count;
		}
		s.add_histogram(p.a, p.b, std::move(hist), p.c);
	}
	for (auto [k, code] : *e.notes) {
		Parts p = split3(text(k));
		s.add_unavailable(p.a, p.b, code, p.c);
	}
	for (auto k : e.from_zero)
		s.set_counts_from_zero(text(k));
	for (const auto &[k, ns] : e.read_ns)
		s.set_read_ns(text(k), ns);
	return s;
}

void History::compact_keys()
{
	std::vector<std::int64_t> remap(keys_.size(), -1);
	std::vector<std::string> kept;
	index_.clear();
	for (auto &by_name : series_keys_)
		by_name.clear();
	note_keys_.clear();
	auto move_key = [&](std::uint32_t &k) {
		if (remap[k] < 0) {
			remap[k] = static_cast<std::int64_t>(kept.size());
			index_.emplace(keys_[k], static_cast<std::uint32_t>(kept.size()));
			kept.push_back(keys_[k]);
		}
		k = static_cast<std::uint32_t>(remap[k]);
	};
	// Lists shared by entries are renumbered once: into a new list that
	// every entry sharing the old one takes.
	std::map<const Keys *, std::shared_ptr<const Keys>> new_keys;
	std::map<const NoteKeys *, std::shared_ptr<const NoteKeys>> new_notes;
	for (auto &e : entries_) {
		if (e.keys) {
			auto &renamed = new_keys[e.keys.get()];
			if (!renamed) {
				Keys keys = *e.keys;
				for (auto &k : keys) {
					std::uint32_t bare = k & ~kGaugeBit;
					move_key(bare);
					k = bare | (k & kGaugeBit);
				}
				renamed = std::make_shared<const Keys>(std::move(keys));
			}
		}
		if (e.notes) {
			auto &renamed = new_notes[e.notes.get()];
			if (!renamed) {
				NoteKeys notes = *e.notes;
				for (auto &note : notes)
					move_key(note.first);
				renamed = std::make_shared<const NoteKeys>(std::move(notes));
			}
		}
		for (auto &h : e.hists)
			move_key(h.key);
		for (auto &k : e.from_zero)
			move_key(k);
		for (auto &stamp : e.read_ns)
			move_key(stamp.first);
	}
	// Taken only now: a list of the map must live until every entry
	// sharing it was looked up (its address is the map's key).
	for (auto &e : entries_) {
		if (e.keys)
			e.keys = new_keys.at(e.keys.get());
		if (e.notes)
			e.notes = new_notes.at(e.notes.get());
	}
	keys_ = std::move(kept);
}

std::string encode_history(const History &h, const std::vector<std::string> &claimed, bool keep_cpu)
{
	std::string out = "hwsig-history\t1\n";
	char num[64];
	if (h.snapshots() >= 2) {
		hwsig::Snapshot prev = h.snapshot(0);
		for (std::size_t i = 1; i < h.snapshots(); ++i) {
			hwsig::Snapshot cur = h.snapshot(i);
			hwsig::Interval iv = hwsig::derive(prev, cur, claimed);
			std::snprintf(num, sizeof(num), "%.17g", iv.interval_s);
			out += "I\t" + std::to_string(iv.realtime_ns) + "\t" + num + "\n";
			for (const auto &m : iv.metrics) {
				if (!keep_cpu && per_cpu_scope(m.scope))
					continue;
				std::snprintf(num, sizeof(num), "%.17g", m.value);
				// Ids and scopes hold no tabs or newlines (catalog ids;
				// VM names are escaped by the snapshot wire, not here):
				// replace them rather than let a VM name break the lines.
				std::string scope = m.scope;
				for (char &c : scope)
					if (c == '\t' || c == '\n')
						c = ' ';
				out += "V\t" + m.id + "\t" + scope + "\t" + num + "\n";
			}
			prev = std::move(cur);
		}
	}
	out += "end\n";
	return out;
}

} // namespace hwsigd
