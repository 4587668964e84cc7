// Internals of the PMU source (source_pmu.cpp), not public API: what the
// backends report through (PmuNotes; counts go through ScaledCounters,
// multiplex.h) and the three backends,
// one file each: pmu_backend_kmod.cpp (hwsig.ko rings), pmu_backend_perf.cpp
// (perf_event_open groups per CPU), pmu_backend_uncore.cpp (uncore DRAM).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/fs.h"
#include "hwsig/kmod.h"
#include "hwsig/multiplex.h"
#include "hwsig/perf_open.h"
#include "hwsig/pmu_plan.h"
#include "hwsig/snapshot.h"

namespace hwsig::pmu {

// Why metrics cannot be measured, per (metric, scope); the first reason
// wins. Which metrics a missing series leaves unmeasured comes from the
// catalog's rules (metrics_reading), never from a list of our own.
class PmuNotes {
public:
	void note(const std::string &id, UnavailableCode code, const std::string &reason,
		  const std::string &scope = "system");
	// Every metric that reads any of these series.
	void series_missing(const std::vector<std::string_view> &series, UnavailableCode code,
			    const std::string &reason, const std::string &scope = "system");
	// Every metric that reads a core pmu.* series.
	void core_missing(UnavailableCode code, const std::string &reason)
	{
		series_missing(pmu_core_series(), code, reason);
	}
	// No core PMU at all: one reason for every core metric, replacing the
	// per-event ones.
	void replace_core(UnavailableCode code, const std::string &reason);
	// Drops the notes of one scope (a CPU gone offline).
	void forget(const std::string &scope);
	void clear() { notes_.clear(); }
	void add_to(Snapshot &snap) const;

private:
	struct Note {
		std::string id, scope;
		UnavailableCode code;
		std::string reason;
	};
	std::vector<Note> notes_;
};

std::string cpu_scope(unsigned cpu);

// Core counters from hwsig.ko's per-CPU rings.
class KmodBackend {
public:
	KmodBackend() = default;
	KmodBackend(const KmodBackend &) = delete;
	KmodBackend &operator=(const KmodBackend &) = delete;
	~KmodBackend(); // stops the module if this backend started it

	// Uses the module at `device` when it runs a configuration with cycles
	// or, with `start`, when it is idle and this host has a core PMU (then
	// it configures the default events). False: problem() says why.
	bool init(const std::string &device, const PmuDevices &pmus, const CpuIdentity &cpu, const CorePlan &plan,
		  bool start);
	bool active() const { return reader_ != nullptr; }
	void reset(); // inactive until the next init
	const std::string &problem() const { return problem_; }

	enum class Refresh { Same, Reconfigured, Failed };
	// Reconfigured: the caller initializes again (the slots changed meaning).
	Refresh refresh(PmuNotes &notes);
	void collect(Snapshot &snap, PmuNotes &notes);

private:
	void check_status(PmuNotes &notes);

	CpuIdentity cpu_;
	std::unique_ptr<KmodClient> client_;
	std::unique_ptr<RingReader> reader_;
	ScaledCounters counters_;
	std::vector<std::string> series_; // per configured event; empty: not a pmu.* series
	std::uint64_t series_generation_ = 0; // the configuration series_ names the events of
	std::string problem_;
	bool started_ = false;
	bool status_checked_ = false;
};

// Core counters from perf_event_open groups, one set per online CPU.
class PerfBackend {
public:
	// Keeps the plan's events the kernel accepts (probing the first online
	// CPU of <root>/sys/devices/system/cpu/online) and opens the groups on
	// every online CPU. kmod_problem is why hwsig.ko is not used, added to
	// the reason when perf fails too.
	void init(const std::string &root, const CpuIdentity &cpu, const CorePlan &plan,
		  const std::string &kmod_problem, PmuNotes &notes);
	void reset();
	// Reads the online CPU list again (one pread of a kept fd): opens the
	// groups of a CPU that came online since the last collect, closes
	// those of a CPU that went offline; then reads every group, and opens
	// again the groups of a CPU whose groups stopped (went offline and
	// came back between two collects).
	void collect(Snapshot &snap, PmuNotes &notes);

private:
	std::optional<std::vector<unsigned>> online_cpus();
	void open_cpu(unsigned cpu, PmuNotes &notes);

	struct Group {
		unsigned id; // the counters' key: stable across a CPU's offline/online
		std::vector<const char *> series; // per member
		PerfGroup group;
		std::uint64_t last_enabled_ns = 0; // at the last read (0: not read yet)
	};
	std::string online_path_;
	FileCache online_file_{1};
	// Per group of kGroups (pmu_backend_perf.cpp), its members' series
	// and events this kernel accepts.
	std::vector<std::pair<std::vector<const char *>, std::vector<PerfEventSpec>>> sets_;
	std::map<unsigned, std::vector<Group>> cpus_; // online CPU -> its open groups
	ScaledCounters counters_;
};

// Uncore DRAM CAS counts per socket, from perf_event_open.
class UncoreBackend {
public:
	void init(const PmuDevices &pmus, const CpuIdentity &cpu, PmuNotes &notes);
	void reset()
	{
		boxes_.clear();
		counts_.clear();
	}
	void collect(Snapshot &snap);

private:
	struct Box {
		UncoreDramEvent event;
		PerfGroup group;
	};
	std::vector<Box> boxes_;
	ScaledCounters counts_;
};

} // namespace hwsig::pmu
