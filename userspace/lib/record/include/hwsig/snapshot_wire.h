// The snapshot hwsigd hands hwsigctl over its local socket: one Snapshot,
// the VMs it saw and the metric ids its sources claim, as tab-separated
// lines (Documentation/hwsigd.rst, "Local socket"). Both ends are this
// library, but the reader still refuses anything malformed: a socket is an
// input like any other.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hwsig/snapshot.h"
#include "hwsig/vm.h"

namespace hwsig {

// 2: multiplexed counters ("M" lines) carry raw count and times.
// 3: "read" lines carry each series' stamp (Snapshot::read_ns: when its
// source read it); without them (versions 1 and 2) every series is taken
// as read at the snapshot's time, as those versions' writers did. Versions
// 1 and 2 (older hwsigd, the dumps they wrote) are still read.
// 4: "U" lines carry the note's code (unavailable_reason.h) before its
// words; an older version's notes are read with the code "unknown".
// 5: "M" lines end with the counters' failed reads (Multiplexing::unread);
// an older version's have none.
// 6: "P" lines carry CPU counts (Snapshot::cpu_counts(): where a VM's
// waits behind each culprit were); an older version has none, and its
// intervals name no such CPUs.
inline constexpr unsigned kSnapshotWireVersion = 6;

struct SharedSnapshot {
	Snapshot snapshot;
	std::vector<Vm> vms;
	std::vector<std::string> claimed_ids;
};

std::string encode_snapshot(const Snapshot &snap, const std::vector<Vm> &vms,
			    const std::vector<std::string> &claimed_ids);
// Throws hwsig::Error naming the line and what is wrong with it.
SharedSnapshot decode_snapshot(std::string_view text);

} // namespace hwsig
