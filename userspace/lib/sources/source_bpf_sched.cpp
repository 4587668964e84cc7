// The bpf.sched source: reads the SchedCollector, emits run-queue wait
// histograms and involuntary switches per CPU, system, VM and pid.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "hwsig/catalog.h"
#include "hwsig/fs.h"
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
		 series::kInvoluntarySwitches, series::kVmWaitBehindNs, series::kVmPreemptedBy});
	return ids;
}

const std::vector<std::string> &blame_ids()
{
	static const std::vector<std::string> ids =
		metrics_reading({series::kVmWaitBehindNs, series::kVmPreemptedBy});
	return ids;
}

// The culprit part of a vm:VICTIM/culprit:WHO scope; "" for a VM not listed.
std::string culprit_name(const Blame &b, const std::map<int, std::string> &vm_scope_of)
{
	switch (b.culprit) {
	case Culprit::Idle: return "idle";
	case Culprit::Kernel: return "host:kernel";
	case Culprit::Vhost: return "host:vhost";
	case Culprit::Other: return "host:other";
	case Culprit::Vm: {
		auto it = vm_scope_of.find(b.culprit_tgid);
		return it == vm_scope_of.end() ? std::string() : it->second;
	}
	}
	return {};
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

	// The VM list is rediscovered every few seconds: a QEMU that exited
	// since (or a zombie) is not reported as an idle VM.
	static bool alive(const SourceContext &ctx, int pid)
	{
		auto stat = read_file(join_path(ctx.root, "proc/" + std::to_string(pid) + "/stat"), 4096);
		if (!stat.data)
			return false;
		auto close = stat.data->rfind(')');
		if (close == std::string::npos || close + 2 >= stat.data->size())
			return true; // unparsable: not ours to judge
		char state = (*stat.data)[close + 2];
		return state != 'Z' && state != 'X' && state != 'x';
	}

	static bool has_data(const SchedCounts &c)
	{
		return c.runs || c.involuntary || c.wakeup_wait_us.total() || c.preempt_wait_us.total();
	}

	void emit(const SourceContext &ctx, SchedCollector &collector, Snapshot &snap)
	{
		// Every scope counts from zero: the CPUs since the attach, a
		// process since it was selected (select() clears its slot). A VM
		// is reported from its first event on (a short-lived process
		// that merely looks like QEMU never shows up as an idle VM),
		// derive takes that first interval from zero.
		for (const char *name : {series::kRunqWaitUs, series::kRunqWakeupWaitUs, series::kRunqPreemptWaitUs,
					 series::kInvoluntarySwitches, series::kVmWaitBehindNs, series::kVmPreemptedBy})
			snap.set_counts_from_zero(name);
		// tgid -> scopes it is reported under.
		std::map<int, std::vector<std::string>> wanted;
		std::set<int> vm_pids;
		if (ctx.vms)
			for (const Vm &vm : *ctx.vms)
				if (alive(ctx, vm.pid)) {
					wanted[vm.pid].push_back(vm.scope());
					vm_pids.insert(vm.pid);
				}
		blame(collector, vm_pids, ctx, snap);
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
			if (vm_pids.count(tgid) && !pids_wanted(tgid) && !has_data(*counts))
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

	// The victim x culprit matrix of the VMs alive now: one counter pair
	// per cell with any count, culprits named as the VMs listed now.
	static void blame(SchedCollector &collector, const std::set<int> &vm_pids, const SourceContext &ctx,
			  Snapshot &snap)
	{
		if (vm_pids.empty()) {
			for (const auto &id : blame_ids())
				snap.add_unavailable(id, "vm:*", "no VMs found (QEMU processes, Documentation/vms.rst)");
		}
		for (int tgid : collector.watched_vms())
			if (!vm_pids.count(tgid))
				collector.unwatch_vm(tgid);
		std::map<int, std::string> scope_of;
		if (ctx.vms)
			for (const Vm &vm : *ctx.vms)
				if (vm_pids.count(vm.pid))
					scope_of[vm.pid] = vm.scope();
		for (const auto &[tgid, scope] : scope_of) {
			if (!collector.watch_vm(tgid)) {
				for (const auto &id : blame_ids())
					snap.add_unavailable(id, scope, "more VMs than the BPF matrix holds (64)");
				continue;
			}
			for (const Blame &cell : collector.blame(tgid)) {
				std::string culprit = culprit_name(cell, scope_of);
				if (culprit.empty())
					continue;
				std::string at = scope + std::string(series::kCulpritSep) + culprit;
				snap.add_counter(series::kVmWaitBehindNs, at, static_cast<double>(cell.wait_ns), kSource);
				snap.add_counter(series::kVmPreemptedBy, at, static_cast<double>(cell.preemptions), kSource);
			}
		}
	}

	bool pids_wanted(int tgid) const { return std::find(pids_.begin(), pids_.end(), tgid) != pids_.end(); }

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
