// The PMU source's uncore backend (pmu_backend.h): DRAM CAS counts from the
// memory controllers' PMUs through perf_event_open, summed per socket. Always
// perf_event_open, also when hwsig.ko counts the core: uncore counters are
// per socket, cheap to read at snapshot time, and would not fit beside the
// core events in the module's HWSIG_MAX_EVENTS.

#include <algorithm>

#include "hwsig/error.h"
#include "hwsig/pmu_backend.h"
#include "hwsig/scope.h"

namespace hwsig::pmu {

void UncoreBackend::init(const PmuDevices &pmus, const CpuIdentity &cpu, PmuNotes &notes)
{
	reset();
	UncoreDramPlan plan = plan_uncore_dram(pmus, cpu);
	if (plan.events.empty()) {
		notes.series_missing(pmu_dram_series(), UnavailableCode::unsupported, plan.unavailable_reason);
		return;
	}
	// The series this plan feeds; the catalog's other DRAM metrics say why not.
	std::vector<std::string_view> fed, not_fed;
	for (const auto &e : plan.events)
		if (std::find(fed.begin(), fed.end(), dram_series(e.direction)) == fed.end())
			fed.push_back(dram_series(e.direction));
	for (std::string_view s : pmu_dram_series())
		if (std::find(fed.begin(), fed.end(), s) == fed.end())
			not_fed.push_back(s);
	notes.series_missing(not_fed, UnavailableCode::unsupported, plan.kind == "amd_df"
					      ? "amd_df counts DRAM reads and writes together (no read/write split)"
					      : plan.kind + " counts DRAM reads and writes apart (mem.imc_read_bps, "
							    "mem.imc_write_bps)");
	std::string first_error;
	int first_errno = 0;
	for (auto &e : plan.events) {
		try {
			PerfGroup g = PerfGroup::open({e.spec}, static_cast<int>(e.cpu));
			boxes_.push_back(Box{std::move(e), std::move(g)});
		} catch (const Error &x) {
			if (first_error.empty()) {
				first_error = x.what();
				first_errno = x.err();
			}
		}
	}
	if (boxes_.empty())
		notes.series_missing(fed, errno_code(first_errno), "uncore " + plan.kind + ": " + first_error);
}

void UncoreBackend::collect(Snapshot &snap)
{
	for (std::size_t i = 0; i < boxes_.size(); i++) {
		const Box &box = boxes_[i];
		std::vector<CounterReading> c;
		try {
			c = box.group.read();
		} catch (const Error &) {
			counts_.read_failed({static_cast<unsigned>(i), 0}); // the socket's sum: unknown
			continue;
		}
		if (c.empty())
			continue;
		// CAS commands as counted: the 64-byte factor is the catalog's,
		// and the sysfs .scale (MiB) is never applied on top of it.
		counts_.read({static_cast<unsigned>(i), 0}, dram_series(box.event.direction),
			     Scope::socket(box.event.socket).str(), c[0]);
	}
	counts_.add_to(snap, "perf");
}

} // namespace hwsig::pmu
