#include "hwsig/snapshot.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <iterator>
#include <string_view>

namespace hwsig {

std::uint64_t monotonic_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t new_series_shape()
{
	static std::atomic<std::uint64_t> next{1};
	return next.fetch_add(1, std::memory_order_relaxed);
}

// A series' node: the old snapshot's of that name when there is one (its
// key and source string kept), else a new one.
template <typename Map, typename Spares>
static typename Map::iterator series_node(Map &map, Spares &spares, std::string_view name, std::string_view source)
{
	auto old = spares.series.find(name);
	if (old == spares.series.end()) {
		auto it = map.emplace(std::string(name), typename Map::mapped_type{}).first;
		it->second.source = std::string(source);
		return it;
	}
	auto node = spares.series.extract(old);
	auto &series = node.mapped();
	if (series.source != source)
		series.source.assign(source);
	series.read_ns = 0;
	// Its scopes stay, and are given again in the same order most of the
	// time (CPUs, VMs, vCPUs as listed): each put() then overwrites the
	// next one in place (see put()). The first scope out of that order
	// makes the rest spares.
	series.refill.active = true;
	series.refill.at = series.by_scope.begin();
	return map.insert(std::move(node)).position;
}

// The scopes of series a refill did not give again go to the spares.
template <typename Series, typename Spares> static void spare_rest(Series &series, Spares &spares)
{
	auto &at = series.refill.at;
	if (at != series.by_scope.end())
		series.shape = new_series_shape(); // scopes dropped
	while (at != series.by_scope.end()) {
		auto next = std::next(at);
		spares.points.push_back(series.by_scope.extract(at));
		at = next;
	}
	series.refill.active = false;
}

// The series `name` of map, made when missing: from the cache when a
// recent put() was to it (a compare or two instead of a search of the
// tree by name).
template <typename Map, typename Spares, typename Cache>
static typename Map::iterator series_of(Map &map, Spares &spares, Cache &cache, std::string_view name,
					std::string_view source)
{
	for (const auto &slot : cache.slots)
		if (!slot.name.empty() && slot.name == name)
			return slot.it;
	auto it = map.find(name);
	if (it == map.end())
		it = series_node(map, spares, name, source);
	cache.slots[cache.next] = {it->first, it};
	cache.next = (cache.next + 1) % Cache::kSlots;
	return it;
}

template <typename Map, typename Spares, typename Cache, typename Point>
static void put(Map &map, Spares &spares, Cache &cache, std::string_view name, std::string_view scope,
		Point &&point, std::string_view source, std::uint64_t stamp_ns)
{
	auto it = series_of(map, spares, cache, name, source);
	if (stamp_ns)
		it->second.read_ns = stamp_ns;
	// One search at most: sources mostly add a series' scopes in order
	// (CPUs, then VMs and their vCPUs as listed), so a scope after the
	// last one goes at the end without a search; else where lower_bound
	// finds it.
	auto &by_scope = it->second.by_scope;
	if (it->second.refill.active) {
		// Refilling: the same scope as last time at this place is one
		// assignment, no search and no node moved.
		auto &next = it->second.refill.at;
		if (next != by_scope.end() && next->first == scope) {
			next->second = std::forward<Point>(point);
			++next;
			return;
		}
		spare_rest(it->second, spares);
	}
	auto at = by_scope.end();
	if (!by_scope.empty()) {
		auto last = std::prev(by_scope.end());
		const int order = std::string_view(last->first).compare(scope);
		if (order == 0) {
			last->second = std::forward<Point>(point);
			return;
		}
		if (order > 0) {
			at = by_scope.lower_bound(scope);
			if (at->first == scope) {
				at->second = std::forward<Point>(point);
				return;
			}
		}
	}
	it->second.shape = new_series_shape(); // a scope added
	if (!spares.points.empty()) {
		auto node = std::move(spares.points.back());
		spares.points.pop_back();
		node.key().assign(scope);
		node.mapped() = std::forward<Point>(point);
		by_scope.insert(at, std::move(node));
	} else {
		by_scope.emplace_hint(at, std::string(scope), std::forward<Point>(point));
	}
}

void Snapshot::reuse_storage(Snapshot &&old)
{
	spares_ = Spares{};
	// Both caches name nodes of the maps handed on here.
	for (Snapshot *s : {this, &old}) {
		s->counter_names_.clear();
		s->gauge_names_.clear();
		s->histogram_names_.clear();
		s->cpu_count_names_.clear();
	}
	spares_.counters.series = std::move(old.counters_);
	spares_.gauges.series = std::move(old.gauges_);
	spares_.histograms.series = std::move(old.histograms_);
	spares_.cpu_counts.series = std::move(old.cpu_counts_);
	spares_.from_zero = std::move(old.from_zero_);
	// In the same order: each string lands in one that held the same
	// text last time.
	unavailable_ = std::move(old.unavailable_);
	unavailable_.refilling = true;
	unavailable_.live = 0;
}

void Snapshot::release_spares()
{
	// Scopes a refilled series had last time and was not given again.
	auto finish = [](auto &map, auto &spares) {
		for (auto &[name, series] : map)
			if (series.refill.active)
				spare_rest(series, spares);
	};
	finish(counters_, spares_.counters);
	finish(gauges_, spares_.gauges);
	finish(histograms_, spares_.histograms);
	finish(cpu_counts_, spares_.cpu_counts);
	if (unavailable_.refilling) {
		auto &all = unavailable_.all;
		all.erase(all.begin() + static_cast<std::ptrdiff_t>(unavailable_.live), all.end());
		unavailable_.refilling = false;
	}
	spares_ = Spares{};
}

void Snapshot::set_counts_from_zero(std::string_view name)
{
	if (from_zero_.find(name) != from_zero_.end())
		return;
	if (auto old = spares_.from_zero.find(name); old != spares_.from_zero.end())
		from_zero_.insert(spares_.from_zero.extract(old));
	else
		from_zero_.emplace(name);
}

template <typename Map>
static const typename Map::mapped_type::Point *get(const Map &map, std::string_view name,
						  std::string_view scope)
{
	auto it = map.find(name);
	if (it == map.end())
		return nullptr;
	auto slot = it->second.by_scope.find(scope);
	return slot == it->second.by_scope.end() ? nullptr : &slot->second;
}

void Snapshot::add_counter(std::string_view name, std::string_view scope, double value,
			   std::string_view source)
{
	put(counters_, spares_.counters, counter_names_, name, scope, CounterPoint{value, {}}, source, stamp_ns_);
}

void Snapshot::add_counter(std::string_view name, std::string_view scope, const CounterPoint &point,
			   std::string_view source)
{
	put(counters_, spares_.counters, counter_names_, name, scope, point, source, stamp_ns_);
}

void Snapshot::add_gauge(std::string_view name, std::string_view scope, double value,
			 std::string_view source)
{
	put(gauges_, spares_.gauges, gauge_names_, name, scope, value, source, stamp_ns_);
}

void Snapshot::add_histogram(std::string_view name, std::string_view scope, Histogram h,
			     std::string_view source)
{
	put(histograms_, spares_.histograms, histogram_names_, name, scope, std::move(h), source, stamp_ns_);
}

void Snapshot::add_cpu_counts(std::string_view name, std::string_view scope, CpuCounts counts,
			      std::string_view source)
{
	put(cpu_counts_, spares_.cpu_counts, cpu_count_names_, name, scope, std::move(counts), source, stamp_ns_);
}

void Snapshot::add_unavailable(std::string_view id, std::string_view scope, UnavailableCode code,
			       std::string_view reason)
{
	auto &all = unavailable_.all;
	if (unavailable_.refilling) {
		// The same notes come back every snapshot: into their old strings.
		if (unavailable_.live < all.size()) {
			UnavailableNote &note = all[unavailable_.live++];
			note.id.assign(id);
			note.scope.assign(scope);
			note.code = code;
			note.reason.assign(reason);
			return;
		}
		++unavailable_.live;
	} else if (all.capacity() == 0) {
		// A host without a PMU or vhost has dozens of notes every
		// snapshot: one allocation for them, not a growth by doubling.
		all.reserve(64);
	}
	all.push_back({std::string(id), std::string(scope), code, std::string(reason)});
}

std::uint64_t Snapshot::read_ns(std::string_view name) const
{
	if (auto it = counters_.find(name); it != counters_.end() && it->second.read_ns)
		return it->second.read_ns;
	if (auto it = histograms_.find(name); it != histograms_.end() && it->second.read_ns)
		return it->second.read_ns;
	if (auto it = gauges_.find(name); it != gauges_.end() && it->second.read_ns)
		return it->second.read_ns;
	if (auto it = cpu_counts_.find(name); it != cpu_counts_.end() && it->second.read_ns)
		return it->second.read_ns;
	return mono_ns;
}

void Snapshot::set_read_ns(std::string_view name, std::uint64_t ns)
{
	if (auto it = counters_.find(name); it != counters_.end())
		it->second.read_ns = ns;
	if (auto it = histograms_.find(name); it != histograms_.end())
		it->second.read_ns = ns;
	if (auto it = gauges_.find(name); it != gauges_.end())
		it->second.read_ns = ns;
	if (auto it = cpu_counts_.find(name); it != cpu_counts_.end())
		it->second.read_ns = ns;
}

const CounterPoint *Snapshot::counter(std::string_view name, std::string_view scope) const
{
	return get(counters_, name, scope);
}

const double *Snapshot::gauge(std::string_view name, std::string_view scope) const
{
	return get(gauges_, name, scope);
}

const Histogram *Snapshot::histogram(std::string_view name, std::string_view scope) const
{
	return get(histograms_, name, scope);
}

const CpuCounts *Snapshot::cpu_count(std::string_view name, std::string_view scope) const
{
	return get(cpu_counts_, name, scope);
}

} // namespace hwsig
