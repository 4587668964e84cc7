// Run-queue wait from scheduler accounting: per CPU from /proc/schedstat,
// per VM and per vCPU from its vCPU threads' /proc/<pid>/task/<tid>/schedstat,
// or the same three figures for all of them in one read (TaskSchedReader,
// a BPF task iterator) where hwsigd may load one.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <map>
#include <unordered_map>
#include <vector>

#include "hwsig/docs.h"
#include "hwsig/fd.h"
#include "hwsig/fs.h"
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
	explicit SchedstatSource(TaskSchedReaderOpener open_reader) : open_reader_(std::move(open_reader)) {}
	std::string_view name() const override { return "procfs.schedstat"; }
	std::vector<std::string> provides() const override { return {kRunqWaitAvg, kVcpuWait, kVcpuCpus}; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (path_.empty() || root_ != ctx.root) {
			root_ = ctx.root;
			path_ = join_path(ctx.root, "/proc/schedstat");
			missing_rounds_ = 0;
			system_ = {};
		}
		collect_cpus(snap);
		read_batch(ctx);
		// batch_ holds every VM's vCPUs in turn (read_batch()).
		std::size_t batch_at = 0;
		if (ctx.vms)
			for (const auto &vm : *ctx.vms) {
				collect_vm(ctx, vm, batch_at, snap);
				batch_at += vm.vcpu_tids.size();
			}
		if (!ctx.vms || ctx.vms->empty())
			for (const char *id : {kVcpuWait, kVcpuCpus})
				snap.add_unavailable(id, Scope::all(Scope::Kind::Vm).str(), UnavailableCode::no_target,
						     "no VMs found (QEMU processes, " HWSIG_DOC("vms.rst") ")");
		// VMs not counted this round (gone, or unreadable) start afresh.
		if (vms_counted_ != vms_.size()) {
			for (auto it = vms_.begin(); it != vms_.end();)
				it = it->second.round == round_ ? std::next(it) : vms_.erase(it);
			tasks_changed_ = true;
		}
		vms_counted_ = 0;
		sweep_tasks();
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
		for (const auto &cpu : stat.cpus) {
			const std::string scope = Scope::cpu(cpu.cpu).str();
			snap.add_counter(series::kSchedstatRunDelayNs, scope, static_cast<double>(cpu.run_delay_ns), "procfs");
			snap.add_counter(series::kSchedstatTimeslices, scope, static_cast<double>(cpu.timeslices), "procfs");
		}
		system_.advance(stat.cpus);
		snap.add_counter(series::kSchedstatRunDelayNs, "system", system_.delay_ns, "procfs");
		snap.add_counter(series::kSchedstatTimeslices, "system", system_.timeslices, "procfs");
	}

	// The system counters. /proc/schedstat lists online CPUs only, and a
	// CPU keeps its counts while offline: a plain sum would drop by a
	// CPU's lifetime when it goes offline and jump by it when it comes
	// back, in one interval. The system counter instead grows by what
	// the CPUs listed in both reads counted between them; a CPU that
	// came (back) online counts from its second read on.
	struct SystemCounters {
		bool started = false;
		double delay_ns = 0, timeslices = 0;
		struct Seen {
			std::uint64_t delay_ns = 0, timeslices = 0;
			bool listed = false;
		};
		std::vector<Seen> last, now; // by CPU number; kept: no allocation per read

		void advance(const std::vector<SchedstatCpu> &cpus)
		{
			now.assign(last.size(), Seen{});
			for (const auto &cpu : cpus) {
				if (cpu.cpu >= now.size())
					now.resize(cpu.cpu + 1);
				now[cpu.cpu] = {cpu.run_delay_ns, cpu.timeslices, true};
				if (!started) {
					// The first read: the sum, as the kernel has it.
					delay_ns += static_cast<double>(cpu.run_delay_ns);
					timeslices += static_cast<double>(cpu.timeslices);
					continue;
				}
				if (cpu.cpu >= last.size() || !last[cpu.cpu].listed)
					continue; // (back) online: from its next read
				const Seen &before = last[cpu.cpu];
				if (cpu.run_delay_ns >= before.delay_ns && cpu.timeslices >= before.timeslices) {
					delay_ns += static_cast<double>(cpu.run_delay_ns - before.delay_ns);
					timeslices += static_cast<double>(cpu.timeslices - before.timeslices);
				}
			}
			started = true;
			std::swap(last, now);
		}
	};

	// Every VM's vCPU threads at once through the reader, where there is
	// one and it works; batch_ is left empty otherwise.
	void read_batch(const SourceContext &ctx)
	{
		batch_.clear();
		if (!open_reader_ || reader_failed_ || !ctx.vms || ctx.vms->empty() || (ctx.root != "/" && !ctx.root.empty()))
			return;
		try {
			if (!reader_)
				reader_ = open_reader_();
			tasks_asked_.clear();
			for (const Vm &vm : *ctx.vms)
				for (int tid : vm.vcpu_tids)
					tasks_asked_.emplace_back(vm.pid, tid);
			reader_->read(tasks_asked_, batch_);
		} catch (const std::exception &) {
			// No BPF here (or it broke): the files, from now on.
			batch_.clear();
			reader_.reset();
			reader_failed_ = true;
		}
	}

	// A VM's figure is the sum over all its vCPU threads; one unreadable
	// thread makes the sum incomparable with the last one, so no value.
	// batch_at: where vm's vCPUs start in batch_, when it was read.
	void collect_vm(const SourceContext &ctx, const Vm &vm, std::size_t batch_at, Snapshot &snap)
	{
		const std::string scope = vm.scope();
		auto unavailable = [&](UnavailableCode code, const std::string &reason) {
			for (const char *id : {kRunqWaitAvg, kVcpuWait, kVcpuCpus})
				snap.add_unavailable(id, scope, code, reason);
		};
		if (vm.vcpu_tids.empty()) {
			unavailable(UnavailableCode::no_target, "no vCPU threads ('CPU n/KVM') found");
			return;
		}
		// Its state from the last round, by name: the same process and
		// threads find their tasks without a search each.
		VmVcpus &last = vms_[vm.name];
		const bool fresh = last.round == 0;
		const bool same_threads = !fresh && last.pid == vm.pid && last.tids == vm.vcpu_tids &&
					  last.tasks.size() == vm.vcpu_tids.size();
		if (!same_threads) {
			last.tasks.clear();
			tasks_changed_ = true;
		}
		double delay_sum = 0, slices_sum = 0, run_sum = 0;
		vcpu_stats_.clear();
		for (std::size_t i = 0; i < vm.vcpu_tids.size(); ++i) {
			const int tid = vm.vcpu_tids[i];
			VcpuTask *known = same_threads ? last.tasks[i] : nullptr;
			VcpuTask &task = known ? *known : task_of(ctx, vm, tid);
			if (!same_threads)
				last.tasks.push_back(&task);
			TaskSchedstat stat;
			if (batch_at + i < batch_.size() && batch_[batch_at + i]) {
				stat = *batch_[batch_at + i];
			} else if (!read_file_of(ctx, vm, tid, task, stat, unavailable)) {
				return;
			}
			delay_sum += static_cast<double>(stat.run_delay_ns);
			slices_sum += static_cast<double>(stat.timeslices);
			run_sum += static_cast<double>(stat.on_cpu_ns);
			if (!task.scope.empty())
				vcpu_stats_.emplace_back(&task.scope, stat);
		}
		snap.add_counter(series::kSchedstatRunDelayNs, scope, delay_sum, "procfs");
		snap.add_counter(series::kSchedstatTimeslices, scope, slices_sum, "procfs");
		snap.add_counter(series::kSchedstatRunNs, scope, run_sum, "procfs");
		snap.add_gauge(series::kVmVcpus, scope, static_cast<double>(vm.vcpu_tids.size()), "procfs");
		// The VM's mean per vCPU compares only with a mean over the same
		// threads: a vCPU added or gone leaves that one snapshot without it.
		// Added before its vCPUs' (vm:NAME sorts before vm:NAME/vcpu:N):
		// in the order the snapshot keeps them, each is refilled in place.
		if (fresh || same_threads) {
			snap.add_counter(series::kVcpuRunDelayNs, scope,
					 delay_sum / static_cast<double>(vm.vcpu_tids.size()), "procfs");
			snap.add_counter(series::kVcpuRunNs, scope, run_sum, "procfs");
		}
		// And in the snapshot's order among themselves: vcpu:10 before
		// vcpu:2. The order is worked out again only when the threads
		// changed.
		if (!same_threads || last.order.size() != vcpu_stats_.size()) {
			last.pid = vm.pid;
			last.tids = vm.vcpu_tids;
			last.order.resize(vcpu_stats_.size());
			for (std::size_t i = 0; i < last.order.size(); ++i)
				last.order[i] = i;
			std::sort(last.order.begin(), last.order.end(), [&](std::size_t a, std::size_t b) {
				return *vcpu_stats_[a].first < *vcpu_stats_[b].first;
			});
		}
		last.round = round_;
		++vms_counted_;
		for (std::size_t i : last.order) {
			const auto &[vcpu_scope, stat] = vcpu_stats_[i];
			snap.add_counter(series::kVcpuRunDelayNs, *vcpu_scope, static_cast<double>(stat.run_delay_ns),
					 "procfs");
			snap.add_counter(series::kVcpuRunNs, *vcpu_scope, static_cast<double>(stat.on_cpu_ns), "procfs");
		}
	}

	struct VcpuTask;

	// Per VM (by name: its scopes are the name's): its process and vCPU
	// threads as last counted, and their order by scope.
	struct VmVcpus {
		int pid = 0;
		std::vector<int> tids;
		std::vector<std::size_t> order; // indexes into vcpu_stats_
		// tasks_'s entry of each of tids (stable: an unordered_map's
		// elements stay put); sweep_tasks() keeps every task listed here.
		std::vector<VcpuTask *> tasks;
		std::uint64_t round = 0; // the last round that counted it
	};

	// A vCPU thread's schedstat, kept open, and its scope, worked out once:
	// 200 VMs of 8 vCPUs are 1,600 of these read every interval.
	struct VcpuTask {
		Fd fd;
		std::string vm;           // the VM name its scope was made for
		std::string scope;        // vm:NAME/vcpu:N; "" when its comm is not "CPU n/KVM"
		// The last round that read it (task_of()) or found it listed
		// by a VM (sweep_tasks()).
		std::uint64_t round = 0;
	};

	static std::string task_dir(int pid, int tid)
	{
		return "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
	}

	// Keyed by pid and tid: a tid reused by another process is another task.
	static std::uint64_t task_key(int pid, int tid)
	{
		return static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid)) << 32 | static_cast<std::uint32_t>(tid);
	}

	VcpuTask &task_of(const SourceContext &ctx, const Vm &vm, int tid)
	{
		VcpuTask &task = tasks_[task_key(vm.pid, tid)];
		task.round = round_;
		if (task.vm != vm.name) {
			// The n of its "CPU n/KVM", read once per thread (and VM name).
			auto comm = read_trimmed(join_path(ctx.root, task_dir(vm.pid, tid) + "/comm"));
			auto n = comm ? vmparse::parse_vcpu_comm(*comm) : std::nullopt;
			task.vm = vm.name;
			task.scope = n ? Scope::vm(vm.name).vcpu(*n).str() : std::string();
		}
		return task;
	}

	// One thread's figures from its schedstat file; false (and the VM's
	// figures unavailable, and why) when it cannot be read.
	template <typename Unavailable>
	bool read_file_of(const SourceContext &ctx, const Vm &vm, int tid, VcpuTask &task, TaskSchedstat &stat,
			  Unavailable &unavailable)
	{
		std::string_view text;
		const int err = read_task(ctx, vm.pid, tid, task, text);
		if (err != 0) {
			const std::string dir = task_dir(vm.pid, tid);
			std::string reason = read_failure(dir + "/schedstat", err);
			UnavailableCode code = errno_code(err);
			if (err == ENOENT && !path_exists(join_path(ctx.root, dir))) {
				reason += " (vCPU thread exited)";
				code = UnavailableCode::incomplete;
			} else if (err == ENOENT) {
				reason += " (kernel without CONFIG_SCHED_INFO)";
			}
			unavailable(code, reason);
			return false;
		}
		stat = parse_task_schedstat(text);
		if (!stat.error.empty()) {
			unavailable(UnavailableCode::malformed, task_dir(vm.pid, tid) + "/schedstat garbled: " + stat.error);
			return false;
		}
		return true;
	}

	// Its schedstat text in text: 0 or an errno. A thread's exit makes the
	// kept fd fail (ESRCH); the file is then opened afresh, which says
	// ENOENT as a first read would.
	int read_task(const SourceContext &ctx, int pid, int tid, VcpuTask &task, std::string_view &text)
	{
		if (task.fd) {
			const ssize_t n = ::pread(task.fd.get(), buf_, sizeof(buf_), 0);
			if (n >= 0 && static_cast<std::size_t>(n) < sizeof(buf_)) {
				text = std::string_view(buf_, static_cast<std::size_t>(n));
				return 0;
			}
			task.fd.reset();
			--open_;
		}
		Fd fd(::open(join_path(ctx.root, task_dir(pid, tid) + "/schedstat").c_str(), O_RDONLY | O_CLOEXEC));
		if (!fd)
			return errno;
		const ssize_t n = ::pread(fd.get(), buf_, sizeof(buf_), 0);
		if (n < 0)
			return errno;
		if (static_cast<std::size_t>(n) >= sizeof(buf_))
			return EFBIG; // three numbers and a newline: not a schedstat file
		text = std::string_view(buf_, static_cast<std::size_t>(n));
		// Kept only on procfs, where each read regenerates the text (a
		// fixture tree's regular file may be replaced between reads).
		struct statfs fs;
		if (open_ < max_open_ && ::fstatfs(fd.get(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
			task.fd = std::move(fd);
			++open_;
		}
		return 0;
	}

	// vCPU threads come and go: forget those no VM lists now. Only in a
	// round where a VM's threads changed (or it went): walking 1,600
	// tasks every interval was a quarter of this source's cost beside
	// 200 VMs, their entries scattered in memory.
	void sweep_tasks()
	{
		if (!tasks_changed_) {
			++round_;
			return;
		}
		tasks_changed_ = false;
		for (const auto &[name, vm] : vms_)
			for (VcpuTask *task : vm.tasks)
				task->round = round_;
		for (auto it = tasks_.begin(); it != tasks_.end();) {
			if (it->second.round == round_) {
				++it;
				continue;
			}
			if (it->second.fd)
				--open_;
			it = tasks_.erase(it);
		}
		++round_;
	}

	static constexpr const char *kMissing = "/proc/schedstat missing (kernel built without CONFIG_SCHEDSTATS)";
	static constexpr std::uint64_t kMissingRetry = 60;

	std::string root_, path_;
	FileCache files_{1}; // /proc/schedstat, kept open
	std::uint64_t missing_rounds_ = 0; // rounds since ENOENT, 0 while present
	SystemCounters system_;
	// Every vCPU of 200 VMs of 16 vCPUs kept open where the fd limit
	// allows (a kept file is one pread, a fresh one three syscalls).
	std::unordered_map<std::uint64_t, VcpuTask> tasks_; // task_key() ->
	std::size_t open_ = 0;                              // tasks_ with an fd
	std::size_t max_open_ = kept_fd_bound(4096);
	std::uint64_t round_ = 1;
	std::size_t vms_counted_ = 0; // vms_ counted this round
	bool tasks_changed_ = false;  // a VM's tasks changed this round: sweep
	char buf_[256];
	std::unordered_map<std::string, VmVcpus> vms_;
	TaskSchedReaderOpener open_reader_;
	std::unique_ptr<TaskSchedReader> reader_;
	bool reader_failed_ = false;
	std::vector<std::pair<int, int>> tasks_asked_;    // scratch: every VM's (pid, vCPU tid)
	std::vector<std::pair<const std::string *, TaskSchedstat>> vcpu_stats_; // scratch: one VM's, by vCPU scope
	std::vector<std::optional<TaskSchedstat>> batch_; // this round's, from reader_: tasks_asked_'s
};

} // namespace

SourcePtr make_schedstat_source()
{
	return std::make_unique<SchedstatSource>(TaskSchedReaderOpener{});
}

SourcePtr make_schedstat_source(TaskSchedReaderOpener open_reader)
{
	return std::make_unique<SchedstatSource>(std::move(open_reader));
}

} // namespace hwsig
