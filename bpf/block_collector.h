// Loader and reader of block.bpf.c: per-disk request counts, latency,
// queueing, size and seek histograms.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "attach.h"
#include "hwsig/histogram.h"

namespace hwsig {

// Read and write requests only, each counted once when its last byte
// completes (Documentation/bpf.rst says which requests are in each field).
struct BlockCounts {
	std::uint64_t reads = 0, writes = 0;           // completed requests
	std::uint64_t read_bytes = 0, write_bytes = 0; // completed bytes
	std::uint64_t untimed = 0;  // completed without an issue time: not in latency_us
	std::uint64_t unqueued = 0; // completed without an allocation time: not in queue_us
	std::uint64_t generation = 0; // the disk's diskseq (0 before 5.15)
	Histogram latency_us;   // issue -> complete, log2 us
	Histogram queue_us;     // allocation -> issue, log2 us
	Histogram size_kib;     // request size as issued, log2 KiB
	Histogram seek_sectors; // log2 sectors from the nearest stream head
};

// Where the issue time of a request comes from.
enum class BlockTiming {
	// The kernel's own stamp (io_start_time_ns, read at completion); a
	// program on block_rq_issue is attached only once a request completes
	// without one (a queue that keeps no blk-stat statistics).
	KernelStamps,
	// The program on block_rq_issue for every request, the kernel's stamps
	// ignored: what a queue without them gets (tests).
	IssueProgram,
};

class BlockCollector {
public:
	// Opens, loads and attaches; throws hwsig::Error (with errno) on failure.
	// milliseconds: latency and queue slots in log2 ms instead of us.
	// max_devices: the table's size (0: HWSIG_BLOCK_MAX_DEVS; tests make
	// it small to fill it).
	explicit BlockCollector(BpfAttach how = BpfAttach::Auto, bool milliseconds = false,
				BlockTiming timing = BlockTiming::KernelStamps, std::uint32_t max_devices = 0);
	~BlockCollector();
	BlockCollector(BlockCollector &&) noexcept;
	BlockCollector &operator=(BlockCollector &&) noexcept;

	BpfAttach attached_as() const;
	// Key: kernel dev_t (major << 20 | minor) of the whole disk; the newest
	// generation (diskseq) of each that has completed a request. Entries
	// of older generations (a loop device attached to another file, a
	// disk removed and its dev_t given to another) are deleted from the
	// map as they are found. per_call: 0 reads the table of disks through
	// its mapping; N > 0 through BPF_MAP_LOOKUP_BATCH calls of N slots
	// each (tests compare the two). Attaches the issue program when a
	// request completed without the kernel's issue stamp.
	std::map<std::uint32_t, BlockCounts> devices(std::size_t per_call = 0) const;
	// Deletes the generations of dev up to `generation` from the maps (a
	// disk that is gone, as of that generation): they no longer take room
	// in the table, and a newer disk given the dev_t keeps its counts.
	void forget(std::uint32_t dev, std::uint64_t generation) const;
	// Requests of disks that found the table full (HWSIG_BLOCK_MAX_DEVS
	// generations with I/O), by dev, cumulative; key 0: disks beyond
	// the ones counted by dev. These requests are in no other count.
	std::map<std::uint32_t, std::uint64_t> untracked() const;
	// Whether the issue program is attached (BlockTiming::IssueProgram, or
	// a request completed without the kernel's stamp).
	bool issue_program_attached() const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
