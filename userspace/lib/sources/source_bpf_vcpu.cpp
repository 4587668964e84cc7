// The schedstat source's reader of every vCPU thread's accounting at once:
// bpf/vcpu.bpf.c's task iterator behind the TaskSchedReader interface
// (procfs.h), so that the source itself builds without BPF.
#include "hwsig/source_bpf.h"

#include "hwsig/procfs.h"
#include "vcpu_collector.h"

namespace hwsig {

namespace {

class BpfTaskSchedReader final : public TaskSchedReader {
public:
	void read(const std::vector<std::pair<int, int>> &tasks, std::unordered_map<int, TaskSchedstat> &out) override
	{
		collector_.read(tasks, got_);
		out.clear();
		out.reserve(got_.size());
		for (const auto &[tid, v] : got_) {
			TaskSchedstat &t = out[tid];
			t.on_cpu_ns = v.on_cpu_ns;
			t.run_delay_ns = v.run_delay_ns;
			t.timeslices = v.timeslices;
		}
	}

private:
	VcpuCollector collector_; // loads and attaches in the constructor (throws)
	std::unordered_map<int, VcpuSched> got_;
};

} // namespace

std::unique_ptr<TaskSchedReader> open_bpf_task_sched_reader()
{
	return std::make_unique<BpfTaskSchedReader>();
}

} // namespace hwsig
