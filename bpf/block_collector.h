// Loader and reader of block.bpf.c: per-disk request counts, latency,
// queueing, size and seek histograms.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "attach.h"
#include "hwsig/histogram.h"

namespace hwsig {

struct BlockCounts {
	std::uint64_t reads = 0, writes = 0;           // completed requests
	std::uint64_t read_bytes = 0, write_bytes = 0; // completed bytes
	Histogram latency_us;   // issue -> complete, log2 us
	Histogram queue_us;     // insert -> issue, log2 us
	Histogram size_kib;     // issued request size, log2 KiB
	Histogram seek_sectors; // log2 sectors from the previous request's end
};

class BlockCollector {
public:
	// Opens, loads and attaches; throws hwsig::Error (with errno) on failure.
	// milliseconds: latency and queue slots in log2 ms instead of us.
	explicit BlockCollector(BpfAttach how = BpfAttach::Auto, bool milliseconds = false);
	~BlockCollector();
	BlockCollector(BlockCollector &&) noexcept;
	BlockCollector &operator=(BlockCollector &&) noexcept;

	BpfAttach attached_as() const;
	// Key: kernel dev_t (major << 20 | minor) of the whole disk.
	// per_call: devices read per BPF_MAP_LOOKUP_BATCH call (0: as many
	// as about 1 MiB of per-CPU values holds; tests pass 1).
	std::map<std::uint32_t, BlockCounts> devices(std::size_t per_call = 0) const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
