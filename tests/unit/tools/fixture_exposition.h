// What hwsigd would export for a captured /proc and /sys tree (no PMU, no
// BPF): two snapshots of the fixture and the interval between them. Made-up
// PMU, uncore, kmod and BPF series, which a fixture cannot produce, can be
// added so that every family shape of the exposition is exercised. For
// render-prometheus-fixture and the unit tests of the exporter.
#pragma once

#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/snapshot.h"
#include "hwsig/vm.h"

namespace hwsig_test {

void add_synthetic_series(hwsig::Snapshot &snap, const std::vector<hwsig::Vm> &vms);

// A big hypervisor host's guests and disks, as the sources would report
// them: n VMs named vm000.. with vcpus vCPU threads each, one rx and one tx
// virtqueue each, every VM's wait blamed on every other VM and on each
// host class, and the devices sd0.. with every block series. step scales
// the counts (a later snapshot of the same host: step + 1).
std::vector<hwsig::Vm> add_guests(hwsig::Snapshot &snap, unsigned n, unsigned vcpus, unsigned devices,
				  unsigned step = 1);

struct FixtureExport {
	hwsig::Snapshot snapshot; // the second one
	hwsig::Interval interval;
	std::vector<hwsig::Vm> vms;
	// What render_prometheus() takes; points into this object.
	hwsig::ExportInput input(bool per_cpu, const std::string &version = "test") const;
};

// root: the fixture tree; synthetic: add_synthetic_series() to the second
// snapshot.
FixtureExport fixture_export(const std::string &root, bool synthetic);

} // namespace hwsig_test
