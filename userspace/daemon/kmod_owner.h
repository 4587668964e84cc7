// Who configured hwsig.ko. The PMU source starts an idle module with the
// default events and stops it when it is done; hwsigd records that it did
// (<state dir>/kmod.owner, its pid), so that after a `kill -9` the next
// hwsigd finds the dead owner's configuration and replaces it instead of
// adopting it forever, and `hwsigctl kmod start|stop` can refuse to pull
// the module from under a running daemon.
#pragma once

#include <string>

#include "config.h"

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

private:
	std::string record_;
	bool wanted_ = false;  // pmu = kmod
	bool was_running_ = false;
	bool uses_ = false;
	bool recorded_ = false;
};

} // namespace hwsigd
