// Loader and reader of vmio.bpf.c: block requests per VM (the QEMU process
// that submitted them), and per VM and disk.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "hwsig/histogram.h"

namespace hwsig {

struct VmIoCounts {
	std::uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0, untimed = 0;
	Histogram latency_us; // issue -> complete, log2 us
	// Per disk (kernel dev_t, major << 20 | minor): {reads, writes}.
	std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> by_dev;
};

class VmIoCollector {
public:
	// Opens, loads and attaches the tp_btf programs (block_bio_queue with
	// the bio as its only argument: 5.11+); throws hwsig::Error (with
	// errno) on failure.
	VmIoCollector();
	~VmIoCollector();
	VmIoCollector(VmIoCollector &&) noexcept;
	VmIoCollector &operator=(VmIoCollector &&) noexcept;

	// Counts of `tgid`'s requests from now on (from zero). False when
	// HWSIG_VMIO_MAX_VMS are already watched.
	bool watch_vm(int tgid);
	// Also counts, as `tgid`'s, the bios charged to the cgroup v2 whose id
	// (its directory's inode number) is `cgroup_id`: the writeback of the
	// pages its processes dirtied, which the flusher submits. The cgroup
	// must be this VM's alone. 0: none (the default). False when tgid is
	// not watched or another VM has that cgroup. Throws hwsig::Error when
	// the map cannot be updated.
	bool attribute_cgroup(int tgid, std::uint64_t cgroup_id);
	// Stops counting it, its cgroup's bios included.
	void unwatch_vm(int tgid);
	std::vector<int> watched_vms() const;
	std::optional<VmIoCounts> counts(int tgid) const;
	// Every watched VM's counts, by tgid: what counts() gives each, in one
	// batch read of the per-VM array and one pass over the (VM, disk)
	// pairs instead of one of each per VM.
	std::map<int, VmIoCounts> all_counts() const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
