// The pmu.vm source: core PMU counts per VM, counted on each of its vCPU
// threads (perf_event_open with pid = the thread, cpu = -1: the counters
// follow the thread from CPU to CPU, guest mode included) and summed per VM
// at vm:NAME. Two groups per thread, {cycles, instructions} and {LLC
// references, LLC misses}: IPC and the LLC miss ratio are exact under
// multiplexing (one group each), LLC MPKI is a ratio of two groups' scaled
// counts. Why vCPU threads rather than the VM's cgroup: Documentation/pmu.rst,
// "Per VM".
#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <utility>

#include "hwsig/catalog.h"
#include "hwsig/cpu_identity.h"
#include "hwsig/error.h"
#include "hwsig/multiplex.h"
#include "hwsig/perf_open.h"
#include "hwsig/pmu_devices.h"
#include "hwsig/pmu_plan.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/source_pmu.h"

namespace hwsig {

namespace {

const std::vector<std::vector<const char *>> kVmGroups = {
	{series::kPmuCycles, series::kPmuInstructions},
	{series::kPmuLlcReferences, series::kPmuLlcMisses},
};

// The catalog's metrics these groups give all the series of.
const std::vector<std::string> kVmMetrics = {metric_id::kCpuIpc, metric_id::kCpuLlcMpki, metric_id::kCpuLlcMissRatio,
					     metric_id::kMemLlcMissBps};

class PmuVmSource final : public Source {
public:
	explicit PmuVmSource(std::map<std::string, PerfEventSpec> events) : fixed_events_(std::move(events)) {}

	std::string_view name() const override { return "pmu.vm"; }
	std::vector<std::string> provides() const override { return kVmMetrics; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (!ctx.vms || ctx.vms->empty()) {
			// The pmu source speaks for the host; no VM, nothing to
			// say, nothing to keep open.
			threads_.clear();
			counters_.clear();
			vm_scopes_.clear();
			return;
		}
		if (!planned_ || ctx.root != root_)
			plan(ctx.root);
		std::set<int> tids_now;
		std::set<std::string> scopes_now;
		for (const Vm &vm : *ctx.vms) {
			const std::string &scope = *scopes_now.insert(vm.scope()).first;
			if (vm.vcpu_tids.empty()) {
				unavailable(snap, scope, UnavailableCode::no_target, "no vCPU threads ('CPU n/KVM') to count on");
				continue;
			}
			if (!problem_.empty())
				continue; // said once for all VMs, below
			collect_vm(vm, snap, tids_now);
		}
		// A host-wide problem (no core PMU, no permission) is every VM's:
		// one note at vm:* instead of one per VM (800 beside 200 VMs,
		// each kept and exported every interval).
		if (!problem_.empty())
			unavailable(snap, Scope::all(Scope::Kind::Vm).str(), problem_code_, problem_);
		// Threads gone: close their groups; VMs gone: forget their sums.
		for (auto it = threads_.begin(); it != threads_.end();)
			it = tids_now.count(it->first) ? std::next(it) : threads_.erase(it);
		for (auto it = vm_scopes_.begin(); it != vm_scopes_.end();) {
			if (scopes_now.count(*it)) {
				++it;
				continue;
			}
			counters_.erase_scope(*it);
			it = vm_scopes_.erase(it);
		}
		counters_.add_to(snap, "perf", false);
	}

private:
	struct Thread {
		std::string scope;
		std::vector<PerfGroup> groups; // as kVmGroups, those with events
		std::vector<std::vector<const char *>> series;
	};

	// The events of this host's plan (or the ones given: tests), or why
	// there are none.
	void plan(const std::string &root)
	{
		planned_ = true;
		root_ = root;
		problem_.clear();
		events_ = fixed_events_;
		if (events_.empty()) {
			PmuDevices pmus(root);
			CpuIdentity cpu = read_cpu_identity(root);
			for (const auto &s : plan_core_events(pmus, cpu).series)
				events_.emplace(s.series, s.event);
			if (!events_.count(series::kPmuCycles)) {
				problem_ = "per-VM counting needs the core PMU: " + no_pmu_reason(cpu, ENOENT);
				problem_code_ = UnavailableCode::unsupported;
			}
			cpu_ = cpu;
		}
	}

	void unavailable(Snapshot &snap, const std::string &scope, UnavailableCode code, const std::string &why)
	{
		for (const auto &id : kVmMetrics)
			snap.add_unavailable(id, scope, code, why);
	}

	void collect_vm(const Vm &vm, Snapshot &snap, std::set<int> &tids_now)
	{
		vm_scopes_.insert(vm.scope());
		for (int tid : vm.vcpu_tids) {
			tids_now.insert(tid);
			auto it = threads_.find(tid);
			if (it == threads_.end() || it->second.scope != vm.scope()) {
				Thread t;
				std::string why;
				UnavailableCode code{};
				if (!open_thread(vm, tid, t, code, why)) {
					if (problem_.empty()) // else said at vm:* (collect)
						unavailable(snap, vm.scope(), code, why);
					return;
				}
				it = threads_.insert_or_assign(tid, std::move(t)).first;
			}
			for (std::size_t g = 0; g < it->second.groups.size(); ++g) {
				std::vector<CounterReading> members;
				try {
					members = it->second.groups[g].read();
				} catch (const Error &) {
					continue; // the thread exited since the scan
				}
				const auto &names = it->second.series[g];
				for (std::size_t m = 0; m < members.size() && m < names.size(); ++m)
					counters_.read({static_cast<unsigned>(tid), static_cast<unsigned>(g * 4 + m)}, names[m],
						       vm.scope(), members[m]);
			}
		}
	}

	bool open_thread(const Vm &vm, int tid, Thread &t, UnavailableCode &code, std::string &why)
	{
		t.scope = vm.scope();
		for (std::size_t g = 0; g < kVmGroups.size(); ++g) {
			std::vector<PerfEventSpec> events;
			std::vector<const char *> names;
			for (const char *s : kVmGroups[g]) {
				auto e = events_.find(s);
				if (e == events_.end())
					continue;
				events.push_back(e->second);
				names.push_back(s);
			}
			if (events.empty())
				continue;
			try {
				t.groups.push_back(PerfGroup::open(events, -1, tid));
			} catch (const Error &e) {
				if (e.err() == ESRCH)
					continue; // the thread exited since the scan
				why = std::string("perf: ") + e.what();
				code = errno_code(e.err());
				// What no retry changes: said once for all, and not
				// tried again at every interval.
				if (e.err() == ENOENT || e.err() == EOPNOTSUPP)
					problem_ = why = "per-VM counting needs the core PMU: " + no_pmu_reason(cpu_, e.err());
				else if (e.err() == EACCES || e.err() == EPERM || e.err() == EINVAL)
					problem_ = why;
				if (!problem_.empty())
					problem_code_ = code;
				return false;
			}
			t.series.push_back(std::move(names));
			// Its counts start from zero (a tid reused by another VM).
			for (unsigned m = 0; m < t.series.back().size(); ++m)
				counters_.restart({static_cast<unsigned>(tid), static_cast<unsigned>(g * 4 + m)});
		}
		return true;
	}

	std::map<std::string, PerfEventSpec> fixed_events_, events_;
	bool planned_ = false;
	std::string root_, problem_;
	UnavailableCode problem_code_ = UnavailableCode::unsupported;
	CpuIdentity cpu_;
	std::map<int, Thread> threads_;
	std::set<std::string> vm_scopes_;
	ScaledCounters counters_;
};

} // namespace

SourcePtr make_pmu_vm_source(std::map<std::string, PerfEventSpec> events)
{
	return std::make_unique<PmuVmSource>(std::move(events));
}

} // namespace hwsig
