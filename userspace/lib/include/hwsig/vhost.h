// How vhost-net virtqueues (hwsig/vhost_queue.h) become series: naming (vq:<pid>:<index>:<rx|tx>), the
// owner -> VM mapping and the per-VM and system aggregates. Pure functions
// over plain data (and a root for /proc), built without BPF too, so that the
// unit tests run them on fixtures. Documentation/vhost.rst defines it all.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/snapshot.h"
#include "hwsig/vhost_queue.h"
#include "hwsig/vm.h"

namespace hwsig {

// A queue with its user-visible identity.
struct VhostQueueView {
	VhostQueueKey key;
	int owner = 0;         // owner tgid (resolved when the key has none)
	unsigned pair = 0;     // the owner's device number, in worker-tid order
	unsigned index = 0;    // 2 * pair + key.queue
	std::string scope;     // vq:<owner>:<index>:<rx|tx>
	std::string vm_scope;  // vm:NAME of the owner; empty when not a discovered VM
	VhostQueueCounts counts;
};

// "vq:<owner>:<index>:<rx|tx>".
std::string vhost_queue_scope(int owner, unsigned index, bool tx);

// Owner tgid of a vhost worker from <root>/proc: the comm "vhost-N" names
// the thread N that set the owner; N's Tgid is the owner (N gone: the
// worker's own Tgid when it is a thread of another process, 6.4+). nullopt
// if unknown.
std::optional<int> vhost_worker_owner(const std::string &root, std::uint32_t worker_tid);

// Names the queues. owner: the key's owner_tgid; else the discovered VM that
// lists the worker among its vhost_tids; else owner_of_worker(tid); else the
// worker's own tid. Queue pairs of one owner are numbered in worker-tid
// order. vms may be null.
std::vector<VhostQueueView> name_vhost_queues(
	const std::map<VhostQueueKey, VhostQueueCounts> &queues, const std::vector<Vm> *vms,
	const std::function<std::optional<int>(std::uint32_t)> &owner_of_worker);

// Counts of queues that no longer exist (their worker exited), kept so that
// the per-VM and system sums never go backwards.
struct VhostRetired {
	std::map<int, VhostQueueCounts> by_owner;
	VhostQueueCounts all;
};

// The vhost source's series: depth histogram (series::kVhostDepth) and,
// for RX queues, the stall counter (series::kVhostStalls) per queue; both
// per VM (the VM's queues merged, stalls summed) and for the system (every
// queue). TX queues get an unavailable note for vhost.ring_stalls_ps; a
// discovered VM without any vhost-net queue gets notes for every vhost id.
void add_vhost_series(Snapshot &snap, const std::vector<VhostQueueView> &queues,
		      const std::vector<Vm> *vms, const VhostRetired &retired);

// The metric ids of the vhost source.
const std::vector<std::string> &vhost_metric_ids();

} // namespace hwsig
