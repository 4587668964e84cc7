// Owns the configured sources; takes snapshots (discovering VMs first).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/series.h"
#include "hwsig/source.h"
#include "hwsig/vm_discovery.h"

namespace hwsig {

class Sampler {
public:
	// VMs are rediscovered at most every rediscover_ns (a /proc scan costs
	// far more than every source together); 0 rediscovers on every take().
	Sampler(std::vector<SourcePtr> sources, std::string root = "/",
		std::uint64_t rediscover_ns = 5'000'000'000ull);
	Snapshot take();
	// The same, filled in the storage of a snapshot no longer needed
	// (Snapshot::reuse_storage): what an always-on sampler takes.
	Snapshot take(Snapshot &&reuse);
	const std::vector<Vm> &vms() const { return vms_; }
	std::vector<std::string> claimed_ids() const;
	// How long each source's collect took in the last take(), in source
	// order (the daemon exports them as self-metrics).
	struct SourceTiming {
		std::string_view source;
		double seconds = 0;
	};
	const std::vector<SourceTiming> &last_timings() const { return timings_; }

private:
	std::vector<SourcePtr> sources_;
	std::string root_;
	VmScanner scanner_;
	std::vector<Vm> vms_;
	std::uint64_t rediscover_ns_;
	std::uint64_t discovered_at_ns_ = 0;
	bool discovered_ = false;
	std::vector<SourceTiming> timings_;
};

struct SourceOptions {
	std::string root = "/";
	bool pmu = true;  // hardware counters (kmod or perf_event_open)
	bool bpf = true;  // attach BPF collectors (needs root)
	// Which BPF collector sets, when bpf is on.
	bool bpf_sched = true, bpf_block = true, bpf_vhost = true;
	// What the unavailable notes say of a source switched off.
	std::string pmu_off_reason = "hardware counters disabled (--no-pmu)";
	std::string bpf_off_reason = "BPF collectors disabled (--no-bpf)";
	bool kmod = true; // for pmu: use /dev/hwsig when present, else perf_event_open
	// resctrl monitoring groups per VM (Documentation/resctrl.rst). Off by
	// default: it changes the kernel's state (one RMID per VM).
	bool resctrl = false;
	// Starts with kResctrlOffPrefix.
	std::string resctrl_off_reason = "resctrl monitoring is off (opt-in: hwsigctl --resctrl, hwsigd "
					 "resctrl = true; it makes a monitoring group per VM)";
};

// How hwsigctl tells a daemon sampling without resctrl: its note for this
// id at system starts with this.
inline constexpr const char *kResctrlProbeId = metric_id::kMemLlcOccupancyBytes;
inline constexpr const char *kResctrlOffPrefix = "resctrl monitoring is off";

// Every source this build has, in catalog order of layers.
std::vector<SourcePtr> default_sources(const SourceOptions &opt);

} // namespace hwsig
