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
	void read(const std::vector<std::pair<int, int>> &tasks, std::vector<std::optional<TaskSchedstat>> &out) override
	{
		collector_.read(tasks, got_);
		out.assign(got_.size(), std::nullopt);
		for (std::size_t i = 0; i < got_.size(); ++i) {
			if (!got_[i])
				continue;
			TaskSchedstat &t = out[i].emplace();
			t.on_cpu_ns = got_[i]->on_cpu_ns;
			t.run_delay_ns = got_[i]->run_delay_ns;
			t.timeslices = got_[i]->timeslices;
		}
	}

private:
	VcpuCollector collector_; // loads and attaches in the constructor (throws)
	std::vector<std::optional<VcpuSched>> got_;
};

} // namespace

std::unique_ptr<TaskSchedReader> open_bpf_task_sched_reader()
{
	return std::make_unique<BpfTaskSchedReader>();
}

} // namespace hwsig
