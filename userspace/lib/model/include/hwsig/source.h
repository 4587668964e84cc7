// A Source reads one layer of the host at time t and adds what it saw to a
// Snapshot. Sources never derive metrics; they report raw counters, gauges
// and histograms, or say why a metric is unavailable.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/snapshot.h"
#include "hwsig/vm.h"

namespace hwsig {

// What sources may need to know about the host at snapshot time.
struct SourceContext {
	std::string root = "/";           // prefix for /proc and /sys (fixtures in tests)
	const std::vector<Vm> *vms = nullptr; // VMs discovered for this snapshot
	// Whether vms was scanned for this snapshot (the Sampler rescans every
	// few seconds): what only a VM's start changes is checked then.
	bool rediscovered = true;
};

class Source {
public:
	virtual ~Source() = default;
	// Short stable name: "procfs.stat", "sysfs.thermal", "kmod", "bpf.sched"...
	virtual std::string_view name() const = 0;
	// Catalog metric ids this source can feed. Ids no source claims are
	// reported as unavailable ("no source in this build").
	virtual std::vector<std::string> provides() const = 0;
	// Adds this instant's readings. Must not throw for host conditions
	// (missing/garbled files, no permission): it adds unavailable notes.
	virtual void collect(const SourceContext &ctx, Snapshot &snap) = 0;
};

using SourcePtr = std::unique_ptr<Source>;

} // namespace hwsig
