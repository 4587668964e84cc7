// Loader and reader of vcpu.bpf.c: the scheduler accounting of a set of
// threads (the VMs' vCPUs), read in one pass of a BPF task iterator
// instead of a /proc/PID/task/TID/schedstat file per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hwsig {

struct VcpuSched {
	std::uint64_t on_cpu_ns = 0, run_delay_ns = 0, timeslices = 0;
};

// How a read finds the threads (vcpu.bpf.c): by looking each up (6.2+),
// or by walking every task. Auto looks up where the kernel can.
enum class VcpuPass { Auto, LookUp, Walk };

class VcpuCollector {
public:
	// Opens, loads and attaches the iterator (iter/task: 5.8+; the fields
	// need CONFIG_SCHED_INFO); throws hwsig::Error (with errno) on failure.
	// Auto falls back to the walk when the look-up program fails to load.
	explicit VcpuCollector(VcpuPass pass = VcpuPass::Auto);
	// Which pass this collector makes (LookUp or Walk).
	VcpuPass pass() const;
	~VcpuCollector();
	VcpuCollector(VcpuCollector &&) noexcept;
	VcpuCollector &operator=(VcpuCollector &&) noexcept;

	// The accounting of these threads now, each given with its process
	// (pid, tid): out[i] is tasks[i]'s, or empty for a thread that exited
	// or whose tid another process has now. Past HWSIG_VCPU_MAX_TASKS
	// threads, the rest are empty too. Throws hwsig::Error when the map
	// update or the read fails.
	void read(const std::vector<std::pair<int, int>> &tasks, std::vector<std::optional<VcpuSched>> &out);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
