// Loader and reader of vhost.bpf.c: per-virtqueue depth and handler counts
// of vhost_net (Documentation/vhost.rst).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hwsig/vhost_queue.h"

namespace hwsig {

// Which vhost program set to load. Auto tries Fentry, then Kprobe, and
// keeps the first that loads and attaches. (hwsig/source_bpf.h declares it
// opaquely for make_bpf_vhost_source.)
enum class VhostAttach {
	Auto,
	Fentry, // fentry on handle_tx, handle_rx, vhost_enable_notify; fexit on handle_rx
	Kprobe, // kprobes on the same three, a kretprobe on handle_rx
};
const char *vhost_attach_name(VhostAttach how);

class VhostCollector {
public:
	// Opens, loads and attaches; throws hwsig::Error (with errno) when
	// vhost_net is not loaded, its BTF is missing, a hooked function name
	// is ambiguous, or no program set attaches (the message says why for
	// each set tried). root: where /sys and /proc are (tests).
	explicit VhostCollector(VhostAttach how = VhostAttach::Auto, const std::string &root = "/");
	~VhostCollector();
	VhostCollector(VhostCollector &&) noexcept;
	VhostCollector &operator=(VhostCollector &&) noexcept;

	VhostAttach attached_as() const;
	// Every queue seen since attach, cumulative.
	std::map<VhostQueueKey, VhostQueueCounts> queues() const;
	// Drops a queue's entry (its worker exited).
	void forget(const VhostQueueKey &key);
	// Handler invocations not counted because the queue map was full.
	std::uint64_t dropped() const;
	// The loaded programs (name, fd): for BPF_ENABLE_STATS run-time figures.
	std::vector<std::pair<std::string, int>> programs() const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
