// What a dump holds besides the daemon's history, gathered the same way by
// hwsigd and by `hwsigctl dump` without a daemon: the host's facts, the PMU
// event plan, and the module's rings (Documentation/dump-format.rst).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hwsig/dump_file.h"

namespace hwsig {

// hostname, kernel, machine, CPU identity, hypervisor, cpus_online,
// hwsig_version, catalog_version (the facts every dump has).
std::vector<std::pair<std::string, std::string>> host_facts(const std::string &root);

// The core PMU plan (the first choice for each pmu.* series, or why it is
// unavailable) and the uncore DRAM plan, from <root>/sys.
std::vector<DumpPlanEntry> pmu_plan_entries(const std::string &root);

// The module's rings, copied out of a read-only mapping of its own (its
// tails are its own memory: no other reader, hwsigd's included, sees any
// difference). Fills d.rings, or d.rings_absent with the one-line reason
// ("hwsig.ko is not loaded", "... loaded but not configured"). Only
// records of the configuration the event names belong to are kept.
// root: prefix of /dev (tests); netlink is asked only when root is "/".
// on_cpu: when set, each CPU's ring goes to it as soon as it is copied,
// with d.rings holding the header and events, instead of into
// d.rings->cpus (hwsigd streams a large host's rings into the file
// rather than hold them all).
using RingCpuSink = std::function<void(const DumpContents &head, DumpRingCpu &&cpu)>;
void capture_rings(const std::string &root, DumpContents &d, const RingCpuSink &on_cpu = {});

} // namespace hwsig
