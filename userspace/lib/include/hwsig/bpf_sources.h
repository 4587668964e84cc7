// BPF scheduler and block-layer sources, and the probes behind them (used
// directly by `hwsigctl hist`, the live tests and the benchmarks).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/block_device.h"
#include "hwsig/histogram.h"
#include "hwsig/source.h"
#include "hwsig/vhost.h"

namespace hwsig {

// Series bpf.runq_* and bpf.involuntary_switches at cpu:N, system, vm:NAME
// (the discovered VMs) and pid:N for each pid given. Attaches on the first
// collect(); without root or BPF it reports its metrics unavailable.
SourcePtr make_bpf_sched_source();
SourcePtr make_bpf_sched_source(std::vector<int> pids);
// Series bpf.io_* at dev:NAME (the seek histogram in full log2 sector
// slots; io.pattern_entropy folds it in derive).
SourcePtr make_bpf_block_source();

// Which program set to load: tp_btf (BTF-typed, task storage) when the
// kernel has it, else raw_tp. Forcing one is for tests and benchmarks.
enum class BpfAttach { Auto, TpBtf, RawTp };
const char *attach_name(BpfAttach how);
// Auto, unless the environment's HWSIG_BPF_ATTACH says tp_btf or raw_tp:
// how an operator (or a test) forces the sched and block program sets
// without a rebuild. Any other value throws hwsig::Error (EINVAL).
BpfAttach attach_from_environment(BpfAttach how);

struct SchedCounts {
	Histogram wakeup_wait_us;  // wakeup -> on CPU, log2 us
	Histogram preempt_wait_us; // preempted (still runnable) -> on CPU
	std::uint64_t involuntary = 0;
	std::uint64_t runs = 0; // times a task ran on a CPU (tp_btf: counted when the run ends)
	Histogram wait_us() const;   // both kinds
	SchedCounts &operator+=(const SchedCounts &o);
};

class SchedCollector {
public:
	// Opens, loads and attaches; throws hwsig::Error (with errno) on failure.
	// milliseconds: wait slots in log2 ms instead of us (hwsigctl hist -m).
	explicit SchedCollector(BpfAttach how = BpfAttach::Auto, bool milliseconds = false);
	~SchedCollector();
	SchedCollector(SchedCollector &&) noexcept;
	SchedCollector &operator=(SchedCollector &&) noexcept;

	BpfAttach attached_as() const;
	// Per-process counts for tgid from now on (its slot starts at zero).
	// False when HWSIG_SCHED_MAX_PROCS processes are already selected.
	bool select(int tgid);
	void deselect(int tgid);
	std::vector<int> selected() const;
	// Index = CPU number (possible CPUs).
	std::vector<SchedCounts> per_cpu() const;
	std::optional<SchedCounts> process(int tgid) const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

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
	// milliseconds: latency and queue slots in log2 ms instead of us.
	explicit BlockCollector(BpfAttach how = BpfAttach::Auto, bool milliseconds = false);
	~BlockCollector();
	BlockCollector(BlockCollector &&) noexcept;
	BlockCollector &operator=(BlockCollector &&) noexcept;

	BpfAttach attached_as() const;
	// Key: kernel dev_t (major << 20 | minor) of the whole disk.
	std::map<std::uint32_t, BlockCounts> devices() const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// Which vhost program set to load (bpf/vhost.bpf.c). Auto tries Fentry,
// then Kprobe, and keeps the first that loads and attaches.
enum class VhostAttach {
	Auto,
	Fentry, // fentry on handle_tx, handle_rx, vhost_enable_notify; fexit on handle_rx
	Kprobe, // kprobes on the same three, a kretprobe on handle_rx
};
const char *vhost_attach_name(VhostAttach how);

// Series bpf.vhost_* at vq:<pid>:<index>:<rx|tx>, vm:NAME and system
// (hwsig/vhost.h, Documentation/vhost.rst). Attaches only once vhost_net is
// loaded (checked cheaply at every collect until then: "vhost not loaded");
// re-attaches when the module is reloaded. how: which program set (tests).
SourcePtr make_bpf_vhost_source(VhostAttach how = VhostAttach::Auto);

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

// One line for unavailable notes: why BPF could not be used.
std::string bpf_unavailable_reason(const std::exception &e);

} // namespace hwsig
