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
// Kept by direction: the sums of TX and of RX queues are separate series.
struct VhostRetired {
	struct Dirs {
		VhostQueueCounts tx, rx;
		void add(const VhostQueueCounts &c, bool tx_queue) { (tx_queue ? tx : rx) += c; }
	};
	std::map<int, Dirs> by_owner;
	Dirs all;
	void add(int owner, const VhostQueueCounts &c, bool tx_queue)
	{
		by_owner[owner].add(c, tx_queue);
		all.add(c, tx_queue);
	}
};

// The vhost source's series (Documentation/vhost.rst). Per TX queue its
// depth histogram (series::kVhostDepth); per RX queue its free-buffer
// histogram (kVhostRxBuffers), the samples that found none
// (kVhostRxEmpty) of all (kVhostRxSamples), and the stalls
// (kVhostStalls). The same per VM (its queues of that direction merged
// slot by slot, counts summed) and for the system. Unavailable notes: at a
// TX queue for the RX ids, at an RX queue for the TX ids, at a queue (or a
// sum) never sampled because its device is behind a vIOMMU for its depth
// ids, and at a discovered VM without any vhost-net queue for every id.
// sums_unavailable: why no VM or system sum is whole in this snapshot (the
// BPF table of queues was full: handler runs of queues it does not know,
// of any VM, went uncounted); then every id is unavailable at the VMs and
// the system, for that reason, and only the queues have values.
// The words of the sums_unavailable reason when the BPF table of queues
// was full (hwsigctl hist vhost prints that note under its queues).
inline constexpr const char *kVhostTableFull = "the BPF table of virtqueues was full";
void add_vhost_series(Snapshot &snap, const std::vector<VhostQueueView> &queues,
		      const std::vector<Vm> *vms, const VhostRetired &retired,
		      const std::string &sums_unavailable = {});

// The metric ids of the vhost source.
const std::vector<std::string> &vhost_metric_ids();

} // namespace hwsig
