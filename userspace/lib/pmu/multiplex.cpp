// Per-interval scaling of multiplexed counters (multiplex.h).

#include "hwsig/multiplex.h"

#include <iterator>

namespace hwsig {

std::optional<double> scale_interval(std::uint64_t count, std::uint64_t enabled_ns, std::uint64_t running_ns)
{
	// Running as long as enabled (or longer, by clock skew between the
	// two times): counted all along, nothing to scale.
	if (running_ns >= enabled_ns)
		return static_cast<double>(count);
	if (running_ns == 0)
		return std::nullopt;
	return static_cast<double>(count) * (static_cast<double>(enabled_ns) / static_cast<double>(running_ns));
}

void IntervalScaledCounter::read(const CounterReading &now)
{
	if (now.count < last_.count || now.enabled_ns < last_.enabled_ns || now.running_ns < last_.running_ns)
		last_ = CounterReading{};
	const std::uint64_t count = now.count - last_.count;
	const std::uint64_t enabled = now.enabled_ns - last_.enabled_ns;
	const std::uint64_t running = now.running_ns - last_.running_ns;
	if (auto scaled = scale_interval(count, enabled, running))
		totals_.value += *scaled;
	else
		totals_.mux.uncounted_ns += static_cast<double>(enabled);
	totals_.mux.raw += static_cast<double>(count);
	totals_.mux.enabled_ns += static_cast<double>(enabled);
	totals_.mux.running_ns += static_cast<double>(running);
	last_ = now;
}

namespace {

void add_point(CounterPoint &sum, const CounterPoint &p)
{
	sum.value += p.value;
	sum.mux += p.mux;
}

} // namespace

void ScaledCounters::read(Key key, std::string_view series, const std::string &scope, const CounterReading &r)
{
	Counter &c = counters_[key];
	if (c.series != series)
		c.series = series;
	if (c.scope != scope)
		c.scope = scope;
	c.scaled.read(r);
	c.read = true;
	if (c.failed_last) {
		c.unread += 1; // this count holds the failed interval's too
		c.failed_last = false;
	}
}

void ScaledCounters::read_failed(Key key)
{
	auto it = counters_.find(key);
	if (it == counters_.end())
		return; // never read: in no sum yet
	Counter &c = it->second;
	c.unread += 1;
	c.failed_now = c.failed_last = true;
}

void ScaledCounters::restart(Key key)
{
	if (auto it = counters_.find(key); it != counters_.end()) {
		it->second.scaled.restart();
		it->second.failed_last = false; // counts from its reopening: spans nothing
	}
}

void ScaledCounters::add_to(Snapshot &snap, std::string_view via, bool with_system)
{
	struct Sum {
		CounterPoint point;
		bool read = false; // a counter of the scope was read this time
	};
	std::map<std::pair<std::string_view, std::string_view>, Sum> scoped; // (series, scope)
	std::map<std::string_view, CounterPoint> system;
	for (auto &[key, c] : counters_) {
		Sum &s = scoped[{c.series, c.scope}];
		CounterPoint point = c.scaled.totals();
		point.mux.unread = c.unread;
		add_point(s.point, point);
		s.read |= c.read || c.failed_now;
		add_point(system[c.series], point);
		c.read = c.failed_now = false;
	}
	for (const auto &[key, s] : scoped)
		if (s.read)
			snap.add_counter(key.first, key.second, s.point, via);
	if (with_system)
		for (const auto &[series, point] : system)
			snap.add_counter(series, "system", point, via);
}

void ScaledCounters::erase_scope(const std::string &scope)
{
	for (auto it = counters_.begin(); it != counters_.end();)
		it = it->second.scope == scope ? counters_.erase(it) : std::next(it);
}

void ScaledCounters::clear()
{
	counters_.clear();
}

} // namespace hwsig
