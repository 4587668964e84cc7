// Source "resctrl.vm": per VM, a resctrl monitoring group in the default
// control group holding the VM's threads; each collect reads its
// llc_occupancy and MBM byte counters, summed over the L3 domains. The
// default group's own mon_data gives the host-wide values.
// Documentation/resctrl.rst: what is created, when it goes, the limits.
#include "hwsig/docs.h"
#include "hwsig/resctrl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "hwsig/error.h"
#include "hwsig/fd.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/series.h"

namespace hwsig::resctrl {

namespace {

constexpr std::string_view kPrefix = "hwsig-";
constexpr std::size_t kMaxNameBytes = 64;

class KernelOps final : public FsOps {
public:
	int make_dir(const std::string &path) override { return ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno; }
	int remove_dir(const std::string &path) override { return ::rmdir(path.c_str()) == 0 ? 0 : errno; }
	std::vector<int> write_tasks(const std::string &tasks_path, const std::vector<int> &tids) override
	{
		Fd fd(::open(tasks_path.c_str(), O_WRONLY | O_CLOEXEC));
		if (!fd)
			return std::vector<int>(tids.size(), errno);
		std::vector<int> out;
		out.reserve(tids.size());
		for (int tid : tids) {
			const std::string text = std::to_string(tid) + "\n";
			ssize_t n;
			do
				n = ::write(fd.get(), text.data(), text.size());
			while (n < 0 && errno == EINTR);
			out.push_back(n < 0 ? errno : 0);
		}
		return out;
	}
};

} // namespace

std::unique_ptr<FsOps> kernel_ops()
{
	return std::make_unique<KernelOps>();
}

std::string sanitize(std::string_view vm_name)
{
	std::string out;
	for (char c : vm_name.substr(0, kMaxNameBytes)) {
		const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				  c == '.' || c == '_' || c == '-';
		out.push_back(keep ? c : '_');
	}
	if (out.empty() || out == "." || out == "..")
		out = "_";
	return out;
}

std::string group_name(int owner_pid, std::string_view vm_name)
{
	return std::string(kPrefix) + std::to_string(owner_pid) + "-" + sanitize(vm_name);
}

int owner_of(std::string_view group)
{
	if (!group.starts_with(kPrefix))
		return 0;
	group.remove_prefix(kPrefix.size());
	auto dash = group.find('-');
	if (dash == std::string_view::npos || dash == 0)
		return 0;
	auto pid = parse_u64(group.substr(0, dash));
	if (!pid || *pid == 0 || *pid > 0x3fffffff || group.substr(0, dash).find_first_not_of("0123456789") !=
							     std::string_view::npos)
		return 0;
	return static_cast<int>(*pid);
}

} // namespace hwsig::resctrl

namespace hwsig {

namespace {

using namespace resctrl;

constexpr const char *kSourceKind = "resctrl";

struct Event {
	const char *file;   // in mon_data/mon_L3_XX and info/L3_MON/mon_features
	const char *metric; // catalog id
	const char *series;
	bool counter; // cumulative bytes (MBM), else a level (occupancy)
};

constexpr Event kEvents[] = {
	{"llc_occupancy", metric_id::kMemLlcOccupancyBytes, series::kResctrlLlcOccupancy, false},
	{"mbm_total_bytes", metric_id::kMemMbmTotalBps, series::kResctrlMbmTotalBytes, true},
	{"mbm_local_bytes", metric_id::kMemMbmLocalBps, series::kResctrlMbmLocalBytes, true},
};
constexpr std::size_t kEventCount = std::size(kEvents);

// A short, printable excerpt of unexpected file content for a note.
std::string excerpt(std::string_view s)
{
	std::string out;
	for (unsigned char c : trim(s).substr(0, 24))
		out += (c < ' ' || c >= 0x7f) ? '?' : static_cast<char>(c);
	return out;
}

std::vector<int> parse_ids(std::string_view text)
{
	std::vector<int> out;
	for (std::string_view line : split_lines(text))
		if (auto v = parse_u64(line); v && *v > 0 && *v <= 0x3fffffff)
			out.push_back(static_cast<int>(*v));
	return out;
}

// The values of one group's mon_data, summed over the L3 domains; why[i]
// says what kept event i from a value.
struct Reading {
	double sum[kEventCount] = {};
	std::string why[kEventCount];
	UnavailableCode code[kEventCount] = {};
};

class ResctrlSource final : public Source {
public:
	ResctrlSource(std::unique_ptr<FsOps> ops, int owner_pid) : ops_(std::move(ops)), owner_(owner_pid) {}
	~ResctrlSource() override
	{
		// Never leave a group behind: its RMID stays taken until someone
		// removes it, and RMIDs are few.
		for (auto &[pid, g] : groups_)
			if (g.created)
				ops_->remove_dir(g.dir);
	}
	ResctrlSource(const ResctrlSource &) = delete;
	ResctrlSource &operator=(const ResctrlSource &) = delete;

	std::string_view name() const override { return "resctrl.vm"; }
	std::vector<std::string> provides() const override
	{
		std::vector<std::string> ids;
		for (const auto &e : kEvents)
			ids.emplace_back(e.metric);
		return ids;
	}

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (root_ != ctx.root) {
			drop_groups();
			root_ = ctx.root;
			base_ = join_path(ctx.root, "sys/fs/resctrl");
			checked_ = false;
		}
		if (!checked_ || (!unavailable_.empty() && ctx.rediscovered))
			check();
		if (!unavailable_.empty()) {
			for (const auto &e : kEvents)
				snap.add_unavailable(e.metric, "system", unavailable_code_, unavailable_);
			return;
		}
		for (std::size_t i = 0; i < kEventCount; ++i)
			if (!missing_[i].empty())
				snap.add_unavailable(kEvents[i].metric, "system", UnavailableCode::unsupported, missing_[i]);

		static const std::vector<Vm> kNoVms;
		const std::vector<Vm> &vms = ctx.vms ? *ctx.vms : kNoVms;
		remove_gone(vms);
		for (const Vm &vm : vms)
			prepare(ctx, vm);

		// The groups are made and filled: the readings start here.
		snap.restamp_readings();
		for (const Vm &vm : vms) {
			Group &g = groups_.at(vm.pid);
			if (!g.error.empty()) {
				for (std::size_t i = 0; i < kEventCount; ++i)
					if (missing_[i].empty())
						snap.add_unavailable(kEvents[i].metric, vm.scope(), g.error_code, g.error);
				continue;
			}
			emit(read_mon(g.dir + "/mon_data", "mon_groups/" + g.name + "/mon_data", &g), vm.scope(), snap);
		}
		emit(read_mon(base_ + "/mon_data", "mon_data", nullptr), "system", snap);
		files_.sweep();
	}

private:
	struct Group {
		std::string name, dir;
		bool created = false;
		std::string error; // the VM's metrics are unavailable for this reason
		UnavailableCode error_code = UnavailableCode::read_error;
		bool retry = false; // error came from mkdir or a write: try again at the next rediscovery
		// What the tasks were last synced for: the thread count
		// (/proc/PID/task's link count) and the 6.1-style vhost workers.
		nlink_t task_links = 0;
		std::vector<int> vhost;
		std::set<int> written; // tids moved into the group
	};

	// Whether resctrl monitoring is there; which events it has.
	void check()
	{
		checked_ = true;
		unavailable_.clear();
		unavailable_code_ = UnavailableCode::unsupported;
		for (auto &m : missing_)
			m.clear();
		if (!path_exists(base_)) {
			unavailable_ = "no /sys/fs/resctrl: the kernel has no resctrl (CONFIG_X86_CPU_RESCTRL) or this "
				       "CPU no RDT/PQoS";
			return;
		}
		if (!path_exists(base_ + "/info")) {
			unavailable_ = "resctrl is not mounted (mount -t resctrl resctrl /sys/fs/resctrl; the mount "
				       "fails where the CPU has no RDT/PQoS)";
			return;
		}
		if (!path_exists(base_ + "/info/L3_MON")) {
			unavailable_ = "this CPU has no RDT/PQoS monitoring (resctrl has no info/L3_MON)";
			return;
		}
		auto features = read_file(base_ + "/info/L3_MON/mon_features", 64 << 10);
		if (!features.data) {
			unavailable_ = Error("reading /sys/fs/resctrl/info/L3_MON/mon_features", features.err).what();
			unavailable_code_ = errno_code(features.err);
			return;
		}
		std::set<std::string, std::less<>> listed;
		for (std::string_view line : split_lines(*features.data))
			listed.emplace(trim(line));
		for (std::size_t i = 0; i < kEventCount; ++i)
			if (!listed.count(kEvents[i].file))
				missing_[i] = std::string("this CPU's RDT/PQoS monitoring has no ") + kEvents[i].file +
					      " (not in info/L3_MON/mon_features)";
		if (auto n = read_trimmed(base_ + "/info/L3_MON/num_rmids"))
			num_rmids_ = *n;
		reclaim_stale();
	}

	// Groups of hwsig processes that are gone (kill -9, a crash) hold
	// RMIDs nobody frees: removed. So are groups named with this process's
	// pid, left by an earlier process that had it: this one made none yet.
	void reclaim_stale()
	{
		for (const auto &entry : list_dir(base_ + "/mon_groups", kPrefix)) {
			const int owner = owner_of(entry);
			if (owner == 0)
				continue;
			const bool ours = std::any_of(groups_.begin(), groups_.end(),
						      [&](const auto &g) { return g.second.name == entry; });
			if (ours)
				continue;
			if (owner == owner_ || !path_exists(join_path(root_, "proc/" + std::to_string(owner))))
				ops_->remove_dir(base_ + "/mon_groups/" + entry);
		}
	}

	void remove_gone(const std::vector<Vm> &vms)
	{
		for (auto it = groups_.begin(); it != groups_.end();) {
			const bool present =
				std::any_of(vms.begin(), vms.end(), [&](const Vm &vm) { return vm.pid == it->first; });
			if (present) {
				++it;
				continue;
			}
			if (it->second.created)
				ops_->remove_dir(it->second.dir);
			it = groups_.erase(it);
		}
	}

	void drop_groups()
	{
		for (auto &[pid, g] : groups_)
			if (g.created)
				ops_->remove_dir(g.dir);
		groups_.clear();
	}

	// A name no other group of this source has (two VM names can
	// sanitize alike).
	std::string unique_name(const Vm &vm) const
	{
		std::string name = group_name(owner_, vm.name);
		auto taken = [&](const std::string &n) {
			return std::any_of(groups_.begin(), groups_.end(),
					   [&](const auto &g) { return g.first != vm.pid && g.second.name == n; });
		};
		if (taken(name))
			name += "-" + std::to_string(vm.pid);
		return name;
	}

	void prepare(const SourceContext &ctx, const Vm &vm)
	{
		auto [it, fresh] = groups_.try_emplace(vm.pid);
		Group &g = it->second;
		if (fresh) {
			g.name = unique_name(vm);
			g.dir = base_ + "/mon_groups/" + g.name;
		}
		if (!g.error.empty() && !(g.retry && ctx.rediscovered))
			return;
		g.error.clear();
		g.retry = false;
		if (!g.created && !create(g))
			return;
		sync(g, vm);
	}

	bool create(Group &g)
	{
		int err = ops_->make_dir(g.dir);
		if (err == EEXIST)
			err = 0; // ours by its name (owner pid): a group this process made
		if (err) {
			const std::string doing = "creating mon_groups/" + g.name;
			g.retry = true;
			if (err == ENOSPC || err == EBUSY)
				g.error_code = UnavailableCode::capacity; // RMIDs
			else
				g.error_code = err == EROFS ? UnavailableCode::permission : errno_code(err);
			if (err == ENOSPC)
				g.error = "out of RMIDs (info/L3_MON/num_rmids = " + num_rmids_ +
					  ", one per monitoring or control group): " + Error(doing, err).what();
			else if (err == EBUSY)
				g.error = std::string("no free RMID yet: freed ones wait until their LLC occupancy "
						      "drops below info/L3_MON/max_threshold_occupancy: ") +
					  Error(doing, err).what();
			else if (err == EROFS || err == EACCES || err == EPERM)
				g.error = Error(doing, err).what() +
					  std::string(" (needs root and a writable /sys/fs/resctrl; hwsigd's unit: "
						      HWSIG_DOC("resctrl.rst") ")");
			else
				g.error = Error(doing, err).what();
			return false;
		}
		g.created = true;
		g.task_links = 0;
		g.vhost.clear();
		g.written.clear();
		return true;
	}

	// The threads that belong in the VM's group: those of its cgroup v2
	// when the QEMU process is alone there (libvirt's scope per guest;
	// 6.1's vhost kthreads are attached to it too), else the process's
	// own; and its vhost workers.
	std::vector<int> vm_tids(const Vm &vm) const
	{
		const std::string proc = join_path(root_, "proc/" + std::to_string(vm.pid));
		std::vector<int> tids;
		bool from_cgroup = false;
		auto cg = read_file(proc + "/cgroup", 64 << 10);
		std::string path;
		if (cg.data)
			for (std::string_view line : split_lines(*cg.data))
				if (line.starts_with("0::"))
					path = std::string(line.substr(3));
		if (!path.empty() && path != "/" && path.find("..") == std::string::npos) {
			const std::string dir = join_path(root_, "sys/fs/cgroup" + path);
			// A threaded cgroup (cgroup.type other than "domain")
			// holds only some of the process's threads.
			auto type = read_trimmed(dir + "/cgroup.type");
			auto procs = read_file(dir + "/cgroup.procs");
			if ((!type || *type == "domain") && procs.data) {
				auto pids = parse_ids(*procs.data);
				const bool alone = std::find(pids.begin(), pids.end(), vm.pid) != pids.end() &&
						   std::all_of(pids.begin(), pids.end(), [&](int p) {
							   return p == vm.pid || std::find(vm.vhost_tids.begin(),
											   vm.vhost_tids.end(),
											   p) != vm.vhost_tids.end();
						   });
				if (alone) {
					if (auto threads = read_file(dir + "/cgroup.threads"); threads.data) {
						tids = parse_ids(*threads.data);
						from_cgroup = !tids.empty();
					}
				}
			}
		}
		if (!from_cgroup) {
			tids.clear();
			for (const auto &e : list_dir(proc + "/task"))
				if (auto t = parse_u64(e); t && *t > 0 && *t <= 0x3fffffff)
					tids.push_back(static_cast<int>(*t));
		}
		tids.insert(tids.end(), vm.vhost_tids.begin(), vm.vhost_tids.end());
		std::sort(tids.begin(), tids.end());
		tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
		return tids;
	}

	// Threads a VM starts later inherit the group from their creator; a
	// 6.1 vhost kthread (made by kthreadd) does not. So the tasks are
	// synced again only when the thread count or the vhost workers
	// changed: one stat() per VM and interval otherwise.
	void sync(Group &g, const Vm &vm)
	{
		struct stat st {};
		const std::string task_dir = join_path(root_, "proc/" + std::to_string(vm.pid) + "/task");
		const nlink_t links = ::stat(task_dir.c_str(), &st) == 0 ? st.st_nlink : 0;
		if (links != 0 && links == g.task_links && vm.vhost_tids == g.vhost)
			return;
		const auto tids = vm_tids(vm);
		// Exited threads' tids may come back as new threads'.
		for (auto it = g.written.begin(); it != g.written.end();)
			it = std::binary_search(tids.begin(), tids.end(), *it) ? std::next(it) : g.written.erase(it);
		std::vector<int> todo;
		for (int tid : tids)
			if (!g.written.count(tid))
				todo.push_back(tid);
		const auto errs = todo.empty() ? std::vector<int>{} : ops_->write_tasks(g.dir + "/tasks", todo);
		for (std::size_t i = 0; i < todo.size(); ++i) {
			const int err = i < errs.size() ? errs[i] : EIO;
			if (err == 0) {
				g.written.insert(todo[i]);
				continue;
			}
			if (err == ESRCH)
				continue; // exited since it was listed
			const std::string doing =
				"writing tid " + std::to_string(todo[i]) + " to mon_groups/" + g.name + "/tasks";
			g.error_code = errno_code(err);
			if (err == EINVAL)
				g.error = "thread " + std::to_string(todo[i]) +
					  " is in another resctrl control group, which a monitoring group of the "
					  "default one cannot take: " +
					  Error(doing, err).what();
			else
				g.error = Error(doing, err).what();
			g.retry = true;
			return;
		}
		g.task_links = links;
		g.vhost = vm.vhost_tids;
	}

	// mon_data/mon_L3_XX/<event> of a group; g: the VM's group (nullptr
	// for the default group), forgotten when its directory is gone.
	Reading read_mon(const std::string &mon_data, const std::string &shown, Group *g)
	{
		Reading r;
		const auto domains = list_dir(mon_data, "mon_L3_");
		if (domains.empty()) {
			std::string why = shown + " has no mon_L3_* domain";
			UnavailableCode code = UnavailableCode::unsupported;
			if (g && !path_exists(g->dir)) {
				code = UnavailableCode::incomplete;
				// Removed by hand, or resctrl remounted: made again.
				why = "monitoring group mon_groups/" + g->name + " vanished (removed, or resctrl "
				      "remounted): made again at the next interval";
				g->created = false;
			}
			for (std::size_t i = 0; i < kEventCount; ++i) {
				r.why[i] = why;
				r.code[i] = code;
			}
			return r;
		}
		for (const auto &d : domains) {
			for (std::size_t i = 0; i < kEventCount; ++i) {
				if (!missing_[i].empty() || !r.why[i].empty())
					continue;
				const std::string rel = shown + "/" + d + "/" + kEvents[i].file;
				auto v = files_.read(mon_data + "/" + d + "/" + kEvents[i].file, 4096);
				if (!v.data) {
					// EIO: the hardware flagged the RMID's count as an error.
					r.why[i] = Error("reading " + rel, v.err).what();
					r.code[i] = errno_code(v.err);
					continue;
				}
				auto text = trim(*v.data);
				if (text == "Unavailable" || text == "Error") {
					r.why[i] = rel + " reads \"" + std::string(text) +
						   "\": the hardware has no count for this RMID on this domain";
					r.code[i] = UnavailableCode::incomplete;
					continue;
				}
				auto n = parse_u64(text);
				if (!n) {
					r.why[i] = rel + " is not a byte count: \"" + excerpt(text) + "\"";
					r.code[i] = UnavailableCode::malformed;
					continue;
				}
				r.sum[i] += static_cast<double>(*n);
			}
		}
		return r;
	}

	void emit(const Reading &r, const std::string &scope, Snapshot &snap) const
	{
		for (std::size_t i = 0; i < kEventCount; ++i) {
			if (!missing_[i].empty())
				continue; // said once, at system scope
			const Event &e = kEvents[i];
			if (!r.why[i].empty())
				snap.add_unavailable(e.metric, scope, r.code[i], r.why[i]);
			else if (e.counter)
				snap.add_counter(e.series, scope, r.sum[i], kSourceKind);
			else
				snap.add_gauge(e.series, scope, r.sum[i], kSourceKind);
		}
	}

	std::unique_ptr<FsOps> ops_;
	int owner_;
	std::string root_, base_;
	bool checked_ = false;
	std::string unavailable_;            // resctrl monitoring is not there, and why
	UnavailableCode unavailable_code_ = UnavailableCode::unsupported;
	std::string missing_[kEventCount];   // an event this CPU lacks, and why
	std::string num_rmids_ = "?";
	std::map<int, Group> groups_;        // by QEMU pid
	FileCache files_{256};
};

} // namespace

SourcePtr make_resctrl_source(std::unique_ptr<FsOps> ops, int owner_pid)
{
	return std::make_unique<ResctrlSource>(std::move(ops), owner_pid);
}

SourcePtr make_resctrl_source()
{
	return make_resctrl_source(kernel_ops(), static_cast<int>(::getpid()));
}

} // namespace hwsig
