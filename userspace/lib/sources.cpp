// The list of every source this build has. Each source lives in its own
// file; this is the one place that knows them all.
#include "hwsig/procfs.h"
#include "hwsig/sampler.h"
#include "hwsig/thermal.h"

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
	return sources;
}

} // namespace hwsig
