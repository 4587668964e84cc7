// Owns the configured sources; takes snapshots (discovering VMs first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwsig/source.h"

namespace hwsig {

class Sampler {
public:
	// VMs are rediscovered at most every rediscover_ns (a /proc scan costs
	// far more than every source together); 0 rediscovers on every take().
	Sampler(std::vector<SourcePtr> sources, std::string root = "/",
		std::uint64_t rediscover_ns = 5'000'000'000ull);
	Snapshot take();
	const std::vector<Vm> &vms() const { return vms_; }
	std::vector<std::string> claimed_ids() const;

private:
	std::vector<SourcePtr> sources_;
	std::string root_;
	std::vector<Vm> vms_;
	std::uint64_t rediscover_ns_;
	std::uint64_t discovered_at_ns_ = 0;
	bool discovered_ = false;
};

struct SourceOptions {
	std::string root = "/";
	bool pmu = true;  // hardware counters (kmod or perf_event_open)
	bool bpf = true;  // attach BPF collectors (needs root)
	bool kmod = true; // for pmu: use /dev/hwsig when present, else perf_event_open
};

// Every source this build has, in catalog order of layers.
std::vector<SourcePtr> default_sources(const SourceOptions &opt);

} // namespace hwsig
