// Per-interval scaling of multiplexed counters (multiplex.h).

#include "hwsig/multiplex.h"

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
	c.scaled.read(r);
	add_point(scoped_[{std::string(series), scope}], c.scaled.totals());
}

void ScaledCounters::add_to(Snapshot &snap, std::string_view via)
{
	for (const auto &[key, point] : scoped_)
		snap.add_counter(key.first, key.second, point, via);
	std::map<std::string_view, CounterPoint> system;
	for (const auto &[key, c] : counters_)
		add_point(system[c.series], c.scaled.totals());
	for (const auto &[series, point] : system)
		snap.add_counter(series, "system", point, via);
	scoped_.clear();
}

void ScaledCounters::clear()
{
	counters_.clear();
	scoped_.clear();
}

} // namespace hwsig
