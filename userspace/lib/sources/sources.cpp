// The list of every source this build has. Each source lives in its own
// file; this is the one place that knows them all.
#include "hwsig/procfs.h"
#include "hwsig/resctrl.h"
#include "hwsig/sampler.h"
#include "hwsig/source_pmu.h"
#include "hwsig/thermal.h"
#ifdef HWSIG_HAVE_BPF
#include "hwsig/source_bpf.h"
#endif

namespace hwsig {

namespace {

// A source the user switched off: its metrics are listed as unavailable
// with that reason instead of "no source in this build". The wrapped source
// is never collected (creating one loads nothing: they set up lazily).
class DisabledSource : public Source {
public:
	DisabledSource(SourcePtr inner, std::string reason)
		: inner_(std::move(inner)), reason_(std::move(reason))
	{
	}
	std::string_view name() const override { return inner_->name(); }
	std::vector<std::string> provides() const override { return inner_->provides(); }
	void collect(const SourceContext &, Snapshot &snap) override
	{
		for (const auto &id : inner_->provides())
			snap.add_unavailable(id, "system", UnavailableCode::disabled, reason_);
	}

private:
	SourcePtr inner_;
	std::string reason_;
};

void add(std::vector<SourcePtr> &sources, SourcePtr source, bool enabled, const std::string &why_not)
{
	if (enabled)
		sources.push_back(std::move(source));
	else
		sources.push_back(std::make_unique<DisabledSource>(std::move(source), why_not));
}

} // namespace

std::vector<SourcePtr> default_sources(const SourceOptions &opt)
{
	std::vector<SourcePtr> sources;
	sources.push_back(make_stat_source());
	sources.push_back(make_numa_source());
	sources.push_back(make_meminfo_source());
#ifdef HWSIG_HAVE_BPF
	// With the scheduler program allowed, the vCPU threads' accounting in
	// one pass of a BPF iterator; the files where it cannot load.
	if (opt.bpf && opt.bpf_sched)
		sources.push_back(make_schedstat_source(open_bpf_task_sched_reader));
	else
		sources.push_back(make_schedstat_source());
#else
	sources.push_back(make_schedstat_source());
#endif
	sources.push_back(make_thermal_source());
	sources.push_back(make_psi_source());
	add(sources, make_pmu_source({opt.kmod, true}), opt.pmu, opt.pmu_off_reason);
	// Its metrics are the pmu source's, at vm:NAME: when that one is off
	// it says so for both.
	if (opt.pmu)
		sources.push_back(make_pmu_vm_source());
	add(sources, make_resctrl_source(), opt.resctrl, opt.resctrl_off_reason);
#ifdef HWSIG_HAVE_BPF
	add(sources, make_bpf_sched_source(), opt.bpf && opt.bpf_sched, opt.bpf_off_reason);
	add(sources, make_bpf_block_source(), opt.bpf && opt.bpf_block, opt.bpf_off_reason);
	// Its metrics are bpf.block's, at vm:NAME: when that one is off it
	// says so for both.
	if (opt.bpf && opt.bpf_block)
		sources.push_back(make_bpf_vmio_source());
	add(sources, make_bpf_vhost_source(), opt.bpf && opt.bpf_vhost, opt.bpf_off_reason);
#endif
	return sources;
}

} // namespace hwsig
