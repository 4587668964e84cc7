// The bpf.sched source: reads the SchedCollector, emits run-queue wait
// histograms and involuntary switches per CPU, system, VM and pid.
#include <map>
#include <string>
#include <utility>

#include "hwsig/catalog.h"
#include "hwsig/series.h"
#include "hwsig/source_bpf.h"
#include "sched_collector.h"
#include "source_bpf_lazy.h"

namespace hwsig {

namespace {

using bpf_source::kSource;

const std::vector<std::string> &sched_ids()
{
	static const std::vector<std::string> ids = metrics_reading(
		{series::kRunqWaitUs, series::kRunqWakeupWaitUs, series::kRunqPreemptWaitUs,
		 series::kInvoluntarySwitches});
	return ids;
}

class BpfSchedSource : public Source {
public:
	explicit BpfSchedSource(std::vector<int> pids) : pids_(std::move(pids)) {}
	std::string_view name() const override { return "bpf.sched"; }
	std::vector<std::string> provides() const override { return sched_ids(); }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		collector_.collect(snap, sched_ids(), [&](SchedCollector &collector) { emit(ctx, collector, snap); });
	}

private:
	static void add(Snapshot &snap, const std::string &scope, const SchedCounts &c)
	{
		snap.add_histogram(series::kRunqWaitUs, scope, c.wait_us(), kSource);
		snap.add_histogram(series::kRunqWakeupWaitUs, scope, c.wakeup_wait_us, kSource);
		snap.add_histogram(series::kRunqPreemptWaitUs, scope, c.preempt_wait_us, kSource);
		snap.add_counter(series::kInvoluntarySwitches, scope, static_cast<double>(c.involuntary), kSource);
	}

	void emit(const SourceContext &ctx, SchedCollector &collector, Snapshot &snap)
	{
		// tgid -> scopes it is reported under.
		std::map<int, std::vector<std::string>> wanted;
		if (ctx.vms)
			for (const Vm &vm : *ctx.vms)
				wanted[vm.pid].push_back(vm.scope());
		for (int pid : pids_)
			wanted[pid].push_back("pid:" + std::to_string(pid));
		for (int tgid : collector.selected())
			if (!wanted.count(tgid))
				collector.deselect(tgid);
		for (const auto &[tgid, scopes] : wanted) {
			if (!collector.select(tgid)) {
				for (const auto &scope : scopes)
					for (const auto &id : sched_ids())
						snap.add_unavailable(id, scope, "too many processes selected for BPF");
				continue;
			}
			auto counts = collector.process(tgid);
			if (!counts)
				continue;
			for (const auto &scope : scopes)
				add(snap, scope, *counts);
		}
		auto cpus = collector.per_cpu();
		SchedCounts system;
		for (std::size_t cpu = 0; cpu < cpus.size(); ++cpu) {
			add(snap, "cpu:" + std::to_string(cpu), cpus[cpu]);
			system += cpus[cpu];
		}
		add(snap, "system", system);
	}

	std::vector<int> pids_;
	bpf_source::LazyCollector<SchedCollector> collector_;
};

} // namespace

SourcePtr make_bpf_sched_source()
{
	return std::make_unique<BpfSchedSource>(std::vector<int>{});
}

SourcePtr make_bpf_sched_source(std::vector<int> pids)
{
	return std::make_unique<BpfSchedSource>(std::move(pids));
}

} // namespace hwsig
