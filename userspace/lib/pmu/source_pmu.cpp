// The PMU Source (see source_pmu.h): a front over three backends
// (pmu_backend.h). The core counters come from one of two, chosen once on
// the first collect: hwsig.ko's rings, or perf_event_open groups per CPU.
// Uncore DRAM counters always come from perf_event_open. What the source
// feeds, and which metrics a missing series leaves unmeasured, come from
// the metric catalog's rules.

#include "hwsig/source_pmu.h"

#include "hwsig/catalog.h"
#include "hwsig/fs.h"
#include "hwsig/pmu_backend.h"

namespace hwsig {

namespace {

class PmuSource final : public Source {
public:
	explicit PmuSource(PmuSourceOptions opt) : opt_(opt) {}

	std::string_view name() const override { return "pmu"; }
	std::vector<std::string> provides() const override { return pmu_metric_ids(); }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (!initialized_ || ctx.root != root_)
			init(ctx.root);
		collect_core(snap);
		uncore_.collect(snap);
		notes_.add_to(snap);
	}

private:
	void init(const std::string &root)
	{
		root_ = root;
		initialized_ = true;
		notes_.clear();
		perf_.reset();
		uncore_.reset();
		kmod_.reset();
		pmus_ = std::make_unique<PmuDevices>(root);
		cpu_ = read_cpu_identity(root);
		plan_ = plan_core_events(*pmus_, cpu_);
		for (const auto &[series, why] : plan_.missing)
			notes_.series_missing({series}, UnavailableCode::unsupported, why);
		const std::string device = join_path(root, "/dev/hwsig");
		if (!(opt_.use_kmod && path_exists(device) && kmod_.init(device, *pmus_, cpu_, plan_, opt_.start_kmod)))
			perf_.init(root, cpu_, plan_, kmod_.problem(), notes_);
		uncore_.init(*pmus_, cpu_, notes_);
	}

	void collect_core(Snapshot &snap)
	{
		if (!kmod_.active())
			return perf_.collect(snap, notes_);
		switch (kmod_.refresh(notes_)) {
		case pmu::KmodBackend::Refresh::Failed:
			return;
		case pmu::KmodBackend::Refresh::Reconfigured:
			// A new configuration: reread which series each slot feeds.
			init(root_);
			if (!kmod_.active())
				return perf_.collect(snap, notes_);
			break;
		case pmu::KmodBackend::Refresh::Same:
			break;
		}
		kmod_.collect(snap, notes_);
	}

	PmuSourceOptions opt_;
	bool initialized_ = false;
	std::string root_;
	std::unique_ptr<PmuDevices> pmus_;
	CpuIdentity cpu_;
	CorePlan plan_;
	pmu::PmuNotes notes_;
	pmu::KmodBackend kmod_; // kept across re-inits: it stops what it started
	pmu::PerfBackend perf_;
	pmu::UncoreBackend uncore_;
};

} // namespace

std::vector<std::string> pmu_metric_ids()
{
	std::vector<std::string_view> series = pmu_core_series();
	series.insert(series.end(), pmu_dram_series().begin(), pmu_dram_series().end());
	return metrics_reading(series);
}

SourcePtr make_pmu_source(PmuSourceOptions opt)
{
	return std::make_unique<PmuSource>(opt);
}

} // namespace hwsig
