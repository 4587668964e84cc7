// Run-queue wait from scheduler accounting: per CPU from /proc/schedstat,
// per VM and per vCPU from its vCPU threads' /proc/<pid>/task/<tid>/schedstat.
#include <cerrno>
#include <map>
#include <set>

#include "hwsig/procfs.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/vm_parse.h"

namespace hwsig {

namespace {

constexpr const char *kRunqWaitAvg = metric_id::kSchedRunqWaitAvgUs;
constexpr const char *kVcpuWait = metric_id::kSchedVcpuWaitRatio;
constexpr const char *kVcpuCpus = metric_id::kSchedVcpuCpus;

class SchedstatSource final : public Source {
public:
	std::string_view name() const override { return "procfs.schedstat"; }
	std::vector<std::string> provides() const override { return {kRunqWaitAvg, kVcpuWait, kVcpuCpus}; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (path_.empty() || root_ != ctx.root) {
			root_ = ctx.root;
			path_ = join_path(ctx.root, "/proc/schedstat");
			missing_rounds_ = 0;
		}
		collect_cpus(snap);
		std::map<int, std::vector<int>> vcpus_now;
		if (ctx.vms)
			for (const auto &vm : *ctx.vms)
				collect_vm(ctx, vm, snap, vcpus_now);
		if (!ctx.vms || ctx.vms->empty())
			for (const char *id : {kVcpuWait, kVcpuCpus})
				snap.add_unavailable(id, Scope::all(Scope::Kind::Vm).str(), UnavailableCode::no_target,
						     "no VMs found (QEMU processes, Documentation/vms.rst)");
		// vCPU threads come and go: keep only the files read this round.
		vcpu_files_.sweep();
		for (auto it = vcpu_index_.begin(); it != vcpu_index_.end();)
			it = seen_tids_.count(it->first) ? std::next(it) : vcpu_index_.erase(it);
		seen_tids_.clear();
		vcpus_last_ = std::move(vcpus_now);
	}

private:
	void collect_cpus(Snapshot &snap)
	{
		// A kernel has /proc/schedstat or not for the whole boot
		// (CONFIG_SCHEDSTATS): after ENOENT, look again only every
		// kMissingRetry rounds instead of a failed open every interval.
		if (missing_rounds_ > 0 && missing_rounds_++ % kMissingRetry != 0) {
			snap.add_unavailable(kRunqWaitAvg, "system", UnavailableCode::unsupported, kMissing);
			return;
		}
		auto r = files_.read(path_);
		missing_rounds_ = !r.data && r.err == ENOENT ? 1 : 0;
		if (!r.data) {
			snap.add_unavailable(kRunqWaitAvg, "system", errno_code(r.err),
					     r.err == ENOENT ? std::string(kMissing) : read_failure("/proc/schedstat", r.err));
			return;
		}
		auto stat = parse_schedstat(*r.data);
		if (!stat.error.empty()) {
			bool unsupported = stat.version != 0 && (stat.version < 15 || stat.version > 17);
			snap.add_unavailable(kRunqWaitAvg, "system",
					     unsupported ? UnavailableCode::unsupported : UnavailableCode::malformed,
					     (unsupported ? "/proc/schedstat: " : "/proc/schedstat garbled: ") + stat.error);
			return;
		}
		double delay_sum = 0, slices_sum = 0;
		for (const auto &cpu : stat.cpus) {
			const std::string scope = Scope::cpu(cpu.cpu).str();
			snap.add_counter(series::kSchedstatRunDelayNs, scope, static_cast<double>(cpu.run_delay_ns), "procfs");
			snap.add_counter(series::kSchedstatTimeslices, scope, static_cast<double>(cpu.timeslices), "procfs");
			delay_sum += static_cast<double>(cpu.run_delay_ns);
			slices_sum += static_cast<double>(cpu.timeslices);
		}
		snap.add_counter(series::kSchedstatRunDelayNs, "system", delay_sum, "procfs");
		snap.add_counter(series::kSchedstatTimeslices, "system", slices_sum, "procfs");
	}

	// A VM's figure is the sum over all its vCPU threads; one unreadable
	// thread makes the sum incomparable with the last one, so no value.
	void collect_vm(const SourceContext &ctx, const Vm &vm, Snapshot &snap, std::map<int, std::vector<int>> &vcpus_now)
	{
		auto unavailable = [&](UnavailableCode code, const std::string &reason) {
			for (const char *id : {kRunqWaitAvg, kVcpuWait, kVcpuCpus})
				snap.add_unavailable(id, vm.scope(), code, reason);
		};
		if (vm.vcpu_tids.empty()) {
			unavailable(UnavailableCode::no_target, "no vCPU threads ('CPU n/KVM') found");
			return;
		}
		double delay_sum = 0, slices_sum = 0, run_sum = 0;
		for (int tid : vm.vcpu_tids) {
			std::string task = "/proc/" + std::to_string(vm.pid) + "/task/" + std::to_string(tid);
			std::string rel = task + "/schedstat";
			auto r = vcpu_files_.read(join_path(ctx.root, rel));
			if (!r.data) {
				std::string reason = read_failure(rel, r.err);
				UnavailableCode code = errno_code(r.err);
				if (r.err == ENOENT && !path_exists(join_path(ctx.root, task))) {
					reason += " (vCPU thread exited)";
					code = UnavailableCode::incomplete;
				} else if (r.err == ENOENT) {
					reason += " (kernel without CONFIG_SCHED_INFO)";
				}
				unavailable(code, reason);
				return;
			}
			auto stat = parse_task_schedstat(*r.data);
			if (!stat.error.empty()) {
				unavailable(UnavailableCode::malformed, rel + " garbled: " + stat.error);
				return;
			}
			delay_sum += static_cast<double>(stat.run_delay_ns);
			slices_sum += static_cast<double>(stat.timeslices);
			run_sum += static_cast<double>(stat.on_cpu_ns);
			if (auto n = vcpu_index(ctx, task, tid)) {
				const std::string at = Scope::vm(vm.name).vcpu(*n).str();
				snap.add_counter(series::kVcpuRunDelayNs, at, static_cast<double>(stat.run_delay_ns),
						 "procfs");
				snap.add_counter(series::kVcpuRunNs, at, static_cast<double>(stat.on_cpu_ns), "procfs");
			}
		}
		snap.add_counter(series::kSchedstatRunDelayNs, vm.scope(), delay_sum, "procfs");
		snap.add_counter(series::kSchedstatTimeslices, vm.scope(), slices_sum, "procfs");
		snap.add_counter(series::kSchedstatRunNs, vm.scope(), run_sum, "procfs");
		snap.add_gauge(series::kVmVcpus, vm.scope(), static_cast<double>(vm.vcpu_tids.size()), "procfs");
		// The VM's mean per vCPU compares only with a mean over the same
		// threads: a vCPU added or gone leaves that one snapshot without it.
		vcpus_now[vm.pid] = vm.vcpu_tids;
		auto last = vcpus_last_.find(vm.pid);
		if (last == vcpus_last_.end() || last->second == vm.vcpu_tids) {
			snap.add_counter(series::kVcpuRunDelayNs, vm.scope(),
					 delay_sum / static_cast<double>(vm.vcpu_tids.size()), "procfs");
			snap.add_counter(series::kVcpuRunNs, vm.scope(), run_sum, "procfs");
		}
	}

	// The n of a vCPU thread's "CPU n/KVM", read once per thread.
	std::optional<unsigned> vcpu_index(const SourceContext &ctx, const std::string &task, int tid)
	{
		seen_tids_.insert(tid);
		if (auto it = vcpu_index_.find(tid); it != vcpu_index_.end())
			return it->second;
		auto comm = read_trimmed(join_path(ctx.root, task + "/comm"));
		auto n = comm ? vmparse::parse_vcpu_comm(*comm) : std::nullopt;
		if (n)
			vcpu_index_[tid] = *n;
		return n;
	}

	static constexpr const char *kMissing = "/proc/schedstat missing (kernel built without CONFIG_SCHEDSTATS)";
	static constexpr std::uint64_t kMissingRetry = 60;

	std::string root_, path_;
	FileCache files_{1}; // /proc/schedstat, kept open
	std::uint64_t missing_rounds_ = 0; // rounds since ENOENT, 0 while present
	// /proc/PID/task/TID/schedstat of vCPU threads: a thread's exit makes
	// its kept fd fail (ESRCH), and the file is then opened afresh, which
	// says ENOENT as before; at most 256 kept, swept after every round.
	FileCache vcpu_files_{256};
	std::map<int, unsigned> vcpu_index_;           // vCPU tid -> n of "CPU n/KVM"
	std::set<int> seen_tids_;                      // vCPU tids read this round
	std::map<int, std::vector<int>> vcpus_last_;   // VM pid -> its vCPU tids last round
};

} // namespace

SourcePtr make_schedstat_source()
{
	return std::make_unique<SchedstatSource>();
}

} // namespace hwsig
