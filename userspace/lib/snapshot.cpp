#include "hwsig/snapshot.h"

namespace hwsig {

template <typename Map, typename Point>
static void put(Map &map, std::string_view name, std::string_view scope, Point &&point,
		std::string_view source)
{
	auto it = map.find(name);
	if (it == map.end()) {
		it = map.emplace(std::string(name), typename Map::mapped_type{}).first;
		it->second.source = std::string(source);
	}
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
	put(counters_, name, scope, CounterPoint{value, {}}, source);
}

void Snapshot::add_counter(std::string_view name, std::string_view scope, const CounterPoint &point,
			   std::string_view source)
{
	put(counters_, name, scope, point, source);
}

void Snapshot::add_gauge(std::string_view name, std::string_view scope, double value,
			 std::string_view source)
{
	put(gauges_, name, scope, value, source);
}

void Snapshot::add_histogram(std::string_view name, std::string_view scope, Histogram h,
			     std::string_view source)
{
	put(histograms_, name, scope, std::move(h), source);
}

void Snapshot::add_unavailable(std::string_view id, std::string_view scope, std::string_view reason)
{
	// A host without a PMU or vhost has dozens of notes every snapshot:
	// one allocation for them, not a growth by doubling.
	if (unavailable_.empty())
		unavailable_.reserve(64);
	unavailable_.push_back({std::string(id), std::string(scope), std::string(reason)});
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
