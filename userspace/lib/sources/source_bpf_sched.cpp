// The bpf.sched source: reads the SchedCollector, emits run-queue wait
// histograms and involuntary switches per CPU, system, VM and pid.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <linux/types.h>
#include <utility>

#include "hwsig/catalog.h"
#include "hwsig/docs.h"
#include "hwsig/proc_alive.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/source_bpf.h"
#include "sched_collector.h"
#include "hwsig_sched.h" // after linux/types.h: it uses __u64
#include "source_bpf_lazy.h"

// The registry's bucket specs describe these programs' histograms.
static_assert(hwsig::series::kRunqSeconds.slots == HWSIG_SCHED_SLOTS);

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

// The WHO of a vm:VICTIM/culprit:WHO scope; none for a VM not listed.
std::optional<Scope> culprit_of(const Blame &b, const std::map<int, Scope> &vm_scope_of)
{
	switch (b.culprit) {
	case Culprit::Idle: return Scope::idle();
	case Culprit::Kernel: return Scope::host(Scope::HostWork::Kernel);
	case Culprit::Vhost: return Scope::host(Scope::HostWork::Vhost);
	case Culprit::Other: return Scope::host(Scope::HostWork::Other);
	case Culprit::Vm: {
		auto it = vm_scope_of.find(b.culprit_tgid);
		if (it == vm_scope_of.end())
			return std::nullopt;
		return it->second;
	}
	}
	return std::nullopt;
}

class BpfSchedSource : public Source {
public:
	BpfSchedSource(std::vector<int> pids, bool milliseconds)
		: pids_(std::move(pids)),
		  collector_([milliseconds](std::optional<SchedCollector> &c) { c.emplace(BpfAttach::Auto, milliseconds); })
	{
	}
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
					 series::kInvoluntarySwitches, series::kVmWaitBehindNs, series::kVmPreemptedBy,
					 series::kVmWaitBehindCpus})
			snap.set_counts_from_zero(name);
		// The VM list is rediscovered every few seconds: a QEMU that
		// exited since (or a zombie) is not reported as an idle VM.
		std::vector<int> pids;
		if (ctx.vms) {
			pids.reserve(ctx.vms->size());
			for (const Vm &vm : *ctx.vms)
				pids.push_back(vm.pid);
		}
		std::vector<bool> alive = alive_.alive(ctx.root, pids);
		alive_.sweep();
		plan_scopes(ctx, std::move(alive));
		const std::map<int, std::vector<std::string>> &wanted = plan_.wanted;
		const std::set<int> &vm_pids = plan_.vm_pids;
		blame(collector, vm_pids, plan_.scope_of, snap);
		for (int tgid : collector.selected())
			if (!wanted.count(tgid))
				collector.deselect(tgid);
		for (const auto &[tgid, scopes] : wanted)
			collector.select(tgid);
		// One read for all of them: a lookup each was about half of
		// this source's cost beside 200 VMs. A process select() refused
		// (no slot left) is not among them.
		const std::map<int, SchedCounts> counts_of = collector.processes();
		for (const auto &[tgid, scopes] : wanted) {
			auto counts = counts_of.find(tgid);
			if (counts == counts_of.end()) {
				for (const auto &scope : scopes)
					for (const auto &id : sched_ids())
						snap.add_unavailable(id, scope, UnavailableCode::capacity,
								     "too many processes selected for BPF");
				continue;
			}
			if (vm_pids.count(tgid) && !pids_wanted(tgid) && !has_data(counts->second))
				continue;
			for (const auto &scope : scopes)
				add(snap, scope, counts->second);
		}
		auto cpus = collector.per_cpu();
		SchedCounts system;
		for (std::size_t cpu = 0; cpu < cpus.size(); ++cpu) {
			add(snap, Scope::cpu(static_cast<unsigned>(cpu)).str(), cpus[cpu]);
			system += cpus[cpu];
		}
		add(snap, "system", system);
	}

	// The victim x culprit matrix of the VMs alive now: one counter pair
	// per cell with any count, and the CPUs of its waits, culprits named
	// as the VMs listed now.
	static void blame(SchedCollector &collector, const std::set<int> &vm_pids, const std::map<int, Scope> &scope_of,
			  Snapshot &snap)
	{
		if (vm_pids.empty()) {
			for (const auto &id : blame_ids())
				snap.add_unavailable(id, Scope::all(Scope::Kind::Vm).str(), UnavailableCode::no_target,
						     "no VMs found (QEMU processes, " HWSIG_DOC("vms.rst") ")");
		}
		for (int tgid : collector.watched_vms())
			if (!vm_pids.count(tgid))
				collector.unwatch_vm(tgid);
		for (const auto &[tgid, scope] : scope_of) {
			if (!collector.watch_vm(tgid)) {
				for (const auto &id : blame_ids())
					snap.add_unavailable(id, scope.str(), UnavailableCode::capacity,
						     "more VMs than the BPF matrix holds (64)");
				continue;
			}
			for (const Blame &cell : collector.blame(tgid)) {
				auto who = culprit_of(cell, scope_of);
				if (!who)
					continue;
				const std::string at = scope.culprit(*who).str();
				snap.add_counter(series::kVmWaitBehindNs, at, static_cast<double>(cell.wait_ns), kSource);
				snap.add_counter(series::kVmPreemptedBy, at, static_cast<double>(cell.preemptions), kSource);
				// Where the waits were (hwsigctl top's "on CPUs"): data
				// in the snapshot, so that it reaches a hwsigctl reading
				// the daemon; no metric, no export.
				if (!cell.cpu_reads.empty())
					snap.add_cpu_counts(series::kVmWaitBehindCpus, at, cell.cpu_reads, kSource);
			}
		}
	}

	// Who is reported under which scopes: worked out again only when the
	// VM list or a VM's liveness changed, not every interval (200 VMs'
	// scopes, sets and maps were a third of this source's cost).
	struct ScopePlan {
		std::vector<int> pids;
		std::vector<std::string> names;
		std::vector<bool> alive;
		std::map<int, std::vector<std::string>> wanted; // tgid -> scopes it is reported under
		std::set<int> vm_pids;                          // the VMs alive
		std::map<int, Scope> scope_of;                  // each of those -> its scope
		bool made = false;
	};

	void plan_scopes(const SourceContext &ctx, std::vector<bool> alive)
	{
		const std::vector<Vm> none;
		const std::vector<Vm> &vms = ctx.vms ? *ctx.vms : none;
		bool same = plan_.made && plan_.alive == alive && plan_.pids.size() == vms.size();
		for (std::size_t i = 0; same && i < vms.size(); ++i)
			same = plan_.pids[i] == vms[i].pid && plan_.names[i] == vms[i].name;
		if (same)
			return;
		ScopePlan plan;
		plan.made = true;
		for (std::size_t i = 0; i < vms.size(); ++i) {
			const Vm &vm = vms[i];
			plan.pids.push_back(vm.pid);
			plan.names.push_back(vm.name);
			if (!alive[i])
				continue;
			plan.wanted[vm.pid].push_back(vm.scope());
			plan.vm_pids.insert(vm.pid);
			plan.scope_of[vm.pid] = Scope::vm(vm.name);
		}
		plan.alive = std::move(alive);
		for (int pid : pids_)
			plan.wanted[pid].push_back(Scope::pid(static_cast<unsigned>(pid)).str());
		plan_ = std::move(plan);
	}

	bool pids_wanted(int tgid) const { return std::find(pids_.begin(), pids_.end(), tgid) != pids_.end(); }

	std::vector<int> pids_;
	AliveWatch alive_; // the VMs' pidfds
	ScopePlan plan_;
	bpf_source::LazyCollector<SchedCollector> collector_;
};

} // namespace

SourcePtr make_bpf_sched_source()
{
	return std::make_unique<BpfSchedSource>(std::vector<int>{}, false);
}

SourcePtr make_bpf_sched_source(std::vector<int> pids, bool milliseconds)
{
	return std::make_unique<BpfSchedSource>(std::move(pids), milliseconds);
}

} // namespace hwsig
