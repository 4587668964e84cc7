// The list of every source this build has. Each source lives in its own
// file; this is the one place that knows them all.
#include "hwsig/procfs.h"
#include "hwsig/sampler.h"
#include "hwsig/source_pmu.h"
#include "hwsig/thermal.h"
#ifdef HWSIG_HAVE_BPF
#include "hwsig/bpf_sources.h"
#endif

namespace hwsig {

std::vector<SourcePtr> default_sources(const SourceOptions &opt)
{
	std::vector<SourcePtr> sources;
	(void)opt;
	sources.push_back(make_stat_source());
	sources.push_back(make_numa_source());
	sources.push_back(make_meminfo_source());
	sources.push_back(make_schedstat_source());
	sources.push_back(make_thermal_source());
	sources.push_back(make_psi_source());
	if (opt.pmu)
		sources.push_back(make_pmu_source({opt.kmod, true}));
#ifdef HWSIG_HAVE_BPF
	if (opt.bpf)
		sources.push_back(make_bpf_sched_source());
	if (opt.bpf)
		sources.push_back(make_bpf_block_source());
#endif
	return sources;
}

} // namespace hwsig
