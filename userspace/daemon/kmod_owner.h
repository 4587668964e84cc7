// Who configured hwsig.ko. The PMU source starts an idle module with the
// default events and stops it when it is done; hwsigd records that it did
// (<state dir>/kmod.owner, its pid), so that after a `kill -9` the next
// hwsigd finds the dead owner's configuration and replaces it instead of
// adopting it forever, and `hwsigctl kmod start|stop` can refuse to pull
// the module from under a running daemon.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "hwsig/render_prometheus.h"

#include "config.h"

namespace hwsig {
class KmodClient;
}

namespace hwsigd {

class KmodOwnership {
public:
	// Before the sampler exists: stops a module configuration whose
	// recorded owner is no longer alive.
	explicit KmodOwnership(const Config &cfg);
	// After the collectors attached: records our pid when the module runs
	// now and was idle before (the PMU source started it).
	void after_attach();
	// Removes the record. The PMU source stops what it started itself.
	~KmodOwnership();
	KmodOwnership(const KmodOwnership &) = delete;
	KmodOwnership &operator=(const KmodOwnership &) = delete;

	bool uses_module() const { return uses_; }
	// The module's own accounting as self-metrics (samples it could not
	// record, records overwritten in its rings, timer overruns); empty
	// when the daemon does not use it. The PMU source reads the newest
	// record of each ring (counts are cumulative), so an overwritten
	// record loses nothing there; a skipped tick is a sample never taken.
	std::vector<hwsig::SelfMetric> self_metrics();

private:
	std::string record_;
	bool wanted_ = false;  // pmu = kmod
	bool was_running_ = false;
	std::atomic<bool> uses_{false}; // read by the local socket thread
	bool recorded_ = false;
	std::unique_ptr<hwsig::KmodClient> client_;
};

} // namespace hwsigd
