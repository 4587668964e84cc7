#include "hwsig/sampler.h"

#include <ctime>
#include <exception>

namespace hwsig {

static std::uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

Sampler::Sampler(std::vector<SourcePtr> sources, std::string root, std::uint64_t rediscover_ns)
	: sources_(std::move(sources)), root_(std::move(root)), scanner_(root_), rediscover_ns_(rediscover_ns)
{
}

Snapshot Sampler::take()
{
	return take(Snapshot{});
}

Snapshot Sampler::take(Snapshot &&reuse)
{
	Snapshot snap;
	snap.reuse_storage(std::move(reuse));
	snap.mono_ns = monotonic_ns();
	snap.realtime_ns = now_ns(CLOCK_REALTIME);
	// VMs come and go, but not every second: rescan /proc periodically.
	SourceContext ctx;
	ctx.rediscovered = !discovered_ || snap.mono_ns - discovered_at_ns_ >= rediscover_ns_;
	if (ctx.rediscovered) {
		try {
			vms_ = scanner_.scan();
		} catch (const std::exception &) {
			vms_.clear();
		}
		discovered_ = true;
		discovered_at_ns_ = snap.mono_ns;
	}
	ctx.root = root_;
	ctx.vms = &vms_;
	timings_.resize(sources_.size());
	for (std::size_t i = 0; i < sources_.size(); i++) {
		auto &source = sources_[i];
		const std::uint64_t started = monotonic_ns();
		// Each source's reading has its own time: the discovery above and
		// the sources before it take long enough to bend a rate taken over
		// one common stamp (Documentation/metrics.rst, "Rates").
		snap.stamp_readings(started);
		try {
			source->collect(ctx, snap);
		} catch (const std::exception &e) {
			// A source bug must not take the others down: say so instead.
			for (const auto &id : source->provides())
				snap.add_unavailable(id, "system", UnavailableCode::read_error,
						     std::string(source->name()) + " failed: " + e.what());
		}
		timings_[i] = {source->name(), static_cast<double>(monotonic_ns() - started) * 1e-9};
	}
	snap.stamp_readings(0);
	snap.release_spares();
	return snap;
}

std::vector<std::string> Sampler::claimed_ids() const
{
	std::vector<std::string> ids;
	for (const auto &source : sources_)
		for (auto &id : source->provides())
			ids.push_back(std::move(id));
	return ids;
}

} // namespace hwsig
