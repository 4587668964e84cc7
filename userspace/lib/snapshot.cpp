#include "hwsig/snapshot.h"

#include <ctime>

namespace hwsig {

std::uint64_t monotonic_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

template <typename Map, typename Point>
static void put(Map &map, std::string_view name, std::string_view scope, Point &&point,
		std::string_view source, std::uint64_t stamp_ns)
{
	auto it = map.find(name);
	if (it == map.end()) {
		it = map.emplace(std::string(name), typename Map::mapped_type{}).first;
		it->second.source = std::string(source);
	}
	if (stamp_ns)
		it->second.read_ns = stamp_ns;
	auto &by_scope = it->second.by_scope;
	auto slot = by_scope.find(scope);
	if (slot == by_scope.end())
		by_scope.emplace(std::string(scope), std::forward<Point>(point));
	else
		slot->second = std::forward<Point>(point);
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
	put(counters_, name, scope, CounterPoint{value, {}}, source, stamp_ns_);
}

void Snapshot::add_counter(std::string_view name, std::string_view scope, const CounterPoint &point,
			   std::string_view source)
{
	put(counters_, name, scope, point, source, stamp_ns_);
}

void Snapshot::add_gauge(std::string_view name, std::string_view scope, double value,
			 std::string_view source)
{
	put(gauges_, name, scope, value, source, stamp_ns_);
}

void Snapshot::add_histogram(std::string_view name, std::string_view scope, Histogram h,
			     std::string_view source)
{
	put(histograms_, name, scope, std::move(h), source, stamp_ns_);
}

void Snapshot::add_unavailable(std::string_view id, std::string_view scope, std::string_view reason)
{
	// A host without a PMU or vhost has dozens of notes every snapshot:
	// one allocation for them, not a growth by doubling.
	if (unavailable_.empty())
		unavailable_.reserve(64);
	unavailable_.push_back({std::string(id), std::string(scope), std::string(reason)});
}

std::uint64_t Snapshot::read_ns(std::string_view name) const
{
	if (auto it = counters_.find(name); it != counters_.end() && it->second.read_ns)
		return it->second.read_ns;
	if (auto it = histograms_.find(name); it != histograms_.end() && it->second.read_ns)
		return it->second.read_ns;
	if (auto it = gauges_.find(name); it != gauges_.end() && it->second.read_ns)
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

} // namespace hwsig
