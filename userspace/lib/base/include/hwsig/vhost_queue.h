// One vhost-net virtqueue as the BPF vhost collector (bpf/vhost.bpf.c)
// counts it, and whether the collector can attach at all: the data the
// collector (bpf/vhost_collector.h) hands to the library, with no
// dependency on snapshots or series (hwsig/vhost.h turns it into series).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>

#include "hwsig/histogram.h"

namespace hwsig {

// One virtqueue as the kernel side keys it (struct hwsig_vhost_key).
struct VhostQueueKey {
	std::uint32_t owner_tgid = 0; // 0: the kernel could not tell (no mm->owner)
	std::uint32_t worker_tid = 0; // the vhost worker thread: one per device
	std::uint16_t queue = 0;      // index in the device: vhost_net 0 = RX, 1 = TX
	bool tx = false;
	auto operator<=>(const VhostQueueKey &) const = default;
};

// Cumulative counts of one queue (or a sum of queues).
struct VhostQueueCounts {
	Histogram depth{Histogram::Layout::LinearLog2, {}}; // outstanding descriptors
	std::uint64_t samples = 0;     // depth samples
	std::uint64_t handled = 0;     // handle_tx / handle_rx invocations
	std::uint64_t stalls = 0;      // RX ring stalls
	std::uint64_t read_errors = 0; // invocations whose avail index was unreadable
	std::uint64_t viommu = 0;      // invocations not sampled: ring behind a vIOMMU (IOVA)
	VhostQueueCounts &operator+=(const VhostQueueCounts &o);
};

// nullopt when vhost_net is loaded (<root>/sys/module/vhost_net or
// <root>/sys/kernel/btf/vhost_net exists); else "vhost not loaded (...)".
std::optional<std::string> vhost_not_loaded_reason(const std::string &root);

} // namespace hwsig
