// Loader and reader of vcpu.bpf.c: the scheduler accounting of a set of
// threads (the VMs' vCPUs), read in one pass of a BPF task iterator
// instead of a /proc/PID/task/TID/schedstat file per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hwsig {

struct VcpuSched {
	std::uint64_t on_cpu_ns = 0, run_delay_ns = 0, timeslices = 0;
};

class VcpuCollector {
public:
	// Opens, loads and attaches the iterator (iter/task: 5.8+; the fields
	// need CONFIG_SCHED_INFO); throws hwsig::Error (with errno) on failure.
	VcpuCollector();
	~VcpuCollector();
	VcpuCollector(VcpuCollector &&) noexcept;
	VcpuCollector &operator=(VcpuCollector &&) noexcept;

	// The accounting of these threads now, by tid, each given with its
	// process (pid, tid); a thread that exited, or whose tid another
	// process has now, is absent. Past HWSIG_VCPU_MAX_TASKS threads, the
	// rest are absent too. Throws hwsig::Error when the map update or the
	// read fails.
	void read(const std::vector<std::pair<int, int>> &tasks, std::unordered_map<int, VcpuSched> &out);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
