// Cost of hwsig's BPF programs per event, side by side in one run:
//   sched: a ping-pong of two threads pinned to one CPU (every round is two
//          context switches and two wakeups) with no program, an empty
//          raw_tp program on sched_switch, empty programs on sched_wakeup
//          and sched_switch, a tp_btf program doing only the task-storage
//          lookup hwsig's makes (the floor of any per-task tracer),
//          hwsig's scheduler programs and, for reference, Debian's
//          libbpf-tools runqlat (a hash-map run-queue tracer, run as a
//          child process for the length of its mode; left out, with a note,
//          when it is not installed);
//   block: O_DIRECT 4 KiB reads of a loop device with no program, an empty
//          raw_tp program on block_rq_complete, hwsig's block programs (both
//          sets, and tp_btf with the issue program that queues without the
//          kernel's issue stamps get) and, for reference, libbpf-tools'
//          biolatency (a hash-map block I/O latency tracer, run likewise).
// Modes alternate, so drift on a shared machine hits every mode alike. The
// scheduler's wall-clock cost of a mode is the 10th percentile of many short
// timed batches minus that of no program (measure_batches() says why); the
// block's, the median over repetitions of its time per I/O minus the
// no-program time of the same repetition. The ratios divide hwsig's cost by
// the empty program's and, for the scheduler, by the other references'.
//
// A second pass reads the kernel's own accounting (BPF_ENABLE_STATS:
// run_time_ns and run_cnt of every program) and prints the time spent inside
// the programs per event, which load does not skew. That in-program time
// excludes the tracepoint-to-program dispatch, which the wall-clock numbers
// include, and includes the accounting's own clock reads.
#include <cstdio>

#ifndef HWSIG_HAVE_BPF
int main()
{
	std::printf("bench_bpf: built without BPF (HWSIG_BPF=OFF): nothing to measure\n");
	return 0;
}
#else

#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "empty.skel.h"
#include "block_collector.h"
#include "hwsig/error.h"
#include "hwsig/fd.h"
#include "sched_collector.h"
#include "vmio_collector.h"
#include "skeleton.h"

#include <bpf/bpf.h>

namespace {

using hwsig::Fd;

std::uint64_t now_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		hwsig::throw_errno("pinning to CPU " + std::to_string(cpu));
}

int last_cpu()
{
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof set, &set);
	for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return 0;
}

// Two threads pinned to one CPU that pass a byte back and forth over a pair
// of pipes: every round trip is two context switches and two wakeups. The
// peer thread lives as long as the object, so that batches of round trips
// can be timed one after another (and programs attached in between) without
// a thread start in any of them. The calling thread is pinned to the same
// CPU for the object's lifetime and gets its old affinity back at the end.
class PingPong {
public:
	explicit PingPong(int cpu)
	{
		int ab[2], ba[2];
		if (pipe(ab))
			hwsig::throw_errno("pipe");
		to_peer_read_ = Fd(ab[0]);
		to_peer_write_ = Fd(ab[1]);
		if (pipe(ba))
			hwsig::throw_errno("pipe");
		from_peer_read_ = Fd(ba[0]);
		from_peer_write_ = Fd(ba[1]);
		sched_getaffinity(0, sizeof old_affinity_, &old_affinity_);
		pin(cpu);
		try {
			peer_ = std::thread([this, cpu] {
				pin(cpu);
				char c;
				while (read(to_peer_read_.get(), &c, 1) == 1 && c != kQuit)
					if (write(from_peer_write_.get(), &c, 1) != 1)
						std::abort();
			});
		} catch (...) {
			sched_setaffinity(0, sizeof old_affinity_, &old_affinity_);
			throw;
		}
	}
	PingPong(const PingPong &) = delete;
	PingPong &operator=(const PingPong &) = delete;
	~PingPong()
	{
		char quit = kQuit;
		if (write(to_peer_write_.get(), &quit, 1) != 1)
			to_peer_write_ = Fd(); // EOF ends the peer's loop all the same
		peer_.join();
		sched_setaffinity(0, sizeof old_affinity_, &old_affinity_);
	}

	// ns per context switch over `rounds` round trips.
	double ns_per_switch(unsigned rounds)
	{
		char c = 'x';
		std::uint64_t t0 = now_ns();
		for (unsigned i = 0; i < rounds; ++i)
			if (write(to_peer_write_.get(), &c, 1) != 1 || read(from_peer_read_.get(), &c, 1) != 1)
				std::abort();
		return static_cast<double>(now_ns() - t0) / (2.0 * rounds);
	}

private:
	static constexpr char kQuit = 'q';
	Fd to_peer_read_, to_peer_write_, from_peer_read_, from_peer_write_;
	cpu_set_t old_affinity_;
	std::thread peer_;
};

class LoopDevice {
public:
	explicit LoopDevice(std::uint64_t bytes)
	{
		char tmpl[] = "/var/tmp/hwsig-bench-XXXXXX";
		Fd backing(mkstemp(tmpl));
		if (!backing)
			hwsig::throw_errno("creating the loop backing file");
		backing_ = tmpl;
		if (ftruncate(backing.get(), static_cast<off_t>(bytes)))
			hwsig::throw_errno("sizing the loop backing file");
		Fd control(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
		if (!control)
			hwsig::throw_errno("opening /dev/loop-control");
		int index = ioctl(control.get(), LOOP_CTL_GET_FREE);
		if (index < 0)
			hwsig::throw_errno("LOOP_CTL_GET_FREE");
		path_ = "/dev/loop" + std::to_string(index);
		Fd dev(open(path_.c_str(), O_RDWR | O_CLOEXEC));
		if (!dev || ioctl(dev.get(), LOOP_SET_FD, backing.get()))
			hwsig::throw_errno("attaching " + path_);
	}
	~LoopDevice()
	{
		int fd = open(path_.c_str(), O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			ioctl(fd, LOOP_CLR_FD, 0);
			close(fd);
		}
		unlink(backing_.c_str());
	}
	const std::string &path() const { return path_; }

private:
	std::string path_, backing_;
};

// ns per O_DIRECT read of 4 KiB at the given offsets.
double direct_read_ns(const std::string &dev, const std::vector<std::uint64_t> &offsets)
{
	Fd fd(open(dev.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
	if (!fd)
		hwsig::throw_errno("opening " + dev);
	void *buf = nullptr;
	if (posix_memalign(&buf, 4096, 4096))
		std::abort();
	std::uint64_t t0 = now_ns();
	for (auto off : offsets)
		if (pread(fd.get(), buf, 4096, static_cast<off_t>(off)) != 4096)
			std::abort();
	std::uint64_t t1 = now_ns();
	free(buf);
	return static_cast<double>(t1 - t0) / static_cast<double>(offsets.size());
}

const hwsig::SkeletonOps<hwsig_empty_bpf> kEmptyOps = {
	"empty", hwsig_empty_bpf__open_opts, hwsig_empty_bpf__load, hwsig_empty_bpf__attach,
	hwsig_empty_bpf__destroy};

enum class Empty { Switch, WakeupAndSwitch, TaskStorage, BlockComplete };

hwsig::Skeleton<hwsig_empty_bpf> empty_program(Empty which)
{
	return hwsig::Skeleton<hwsig_empty_bpf>(kEmptyOps, [which](hwsig_empty_bpf &s) {
		bpf_program__set_autoload(s.progs.empty_sched_switch,
					  which == Empty::Switch || which == Empty::WakeupAndSwitch);
		bpf_program__set_autoload(s.progs.empty_sched_wakeup, which == Empty::WakeupAndSwitch);
		bpf_program__set_autoload(s.progs.empty_task_storage_sched_switch, which == Empty::TaskStorage);
		bpf_map__set_autocreate(s.maps.empty_task_state, which == Empty::TaskStorage);
		bpf_program__set_autoload(s.progs.empty_block_rq_complete, which == Empty::BlockComplete);
		bpf_program__set_autoload(s.progs.empty_tracepoint_sched_switch, false);
	});
}

// run_time_ns and run_cnt of each loaded program whose name starts with
// prefix, by program id. Detached programs are freed after an RCU grace
// period, so the previous mode's may still be listed: deltas are taken per
// id.
using RunTimes = std::map<__u32, std::pair<std::uint64_t, std::uint64_t>>;

// Calls fn(id, info) for each loaded program whose name starts with prefix
// (a program freed while being listed is skipped).
void for_each_prog(const std::string &prefix, const std::function<void(__u32, const bpf_prog_info &)> &fn)
{
	__u32 id = 0;
	while (bpf_prog_get_next_id(id, &id) == 0) {
		Fd fd(bpf_prog_get_fd_by_id(id));
		if (!fd)
			continue;
		struct bpf_prog_info info = {};
		__u32 len = sizeof info;
		if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
			continue;
		if (std::string(info.name).rfind(prefix, 0) == 0)
			fn(id, info);
	}
}

RunTimes prog_run_times(const std::string &prefix)
{
	RunTimes out;
	for_each_prog(prefix, [&](__u32 id, const bpf_prog_info &info) {
		out[id] = {info.run_time_ns, info.run_cnt};
	});
	return out;
}

std::map<__u32, std::string> prog_names(const std::string &prefix)
{
	std::map<__u32, std::string> out;
	for_each_prog(prefix, [&](__u32 id, const bpf_prog_info &info) { out[id] = info.name; });
	return out;
}

// Ids of the programs that have a BPF link, i.e. are attached: a program
// shows up in the id list when loaded, a moment before it is attached
// (tp_btf and raw_tp attachments are links).
std::set<__u32> linked_prog_ids()
{
	std::set<__u32> out;
	__u32 id = 0;
	while (bpf_link_get_next_id(id, &id) == 0) {
		Fd fd(bpf_link_get_fd_by_id(id));
		if (!fd)
			continue;
		struct bpf_link_info info = {};
		__u32 len = sizeof info;
		if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) == 0)
			out.insert(info.prog_id);
	}
	return out;
}

// Time and runs between two readings, over the programs alive at the second.
std::pair<std::uint64_t, std::uint64_t> run_time_delta(const RunTimes &before, const RunTimes &after)
{
	std::uint64_t ns = 0, runs = 0;
	for (const auto &[id, now] : after) {
		auto it = before.find(id);
		ns += now.first - (it == before.end() ? 0 : it->second.first);
		runs += now.second - (it == before.end() ? 0 : it->second.second);
	}
	return {ns, runs};
}

// A child process that never outlives its owner: killed and reaped in the
// destructor if still there, so no exception path leaves a zombie or a
// tracer attached behind the bench.
class Child {
public:
	// fork+exec of argv[0] (a path) with stdout and stderr to /dev/null.
	explicit Child(std::vector<std::string> argv)
	{
		std::vector<char *> args;
		for (auto &a : argv)
			args.push_back(a.data());
		args.push_back(nullptr);
		// Everything is prepared before fork: between fork and exec of a
		// threaded process only async-signal-safe calls are allowed.
		Fd devnull(open("/dev/null", O_WRONLY | O_CLOEXEC));
		if (!devnull)
			hwsig::throw_errno("opening /dev/null");
		pid_ = fork();
		if (pid_ < 0)
			hwsig::throw_errno("fork for " + argv[0]);
		if (pid_ == 0) {
			// dup2 leaves the copies without O_CLOEXEC, so they survive exec.
			if (dup2(devnull.get(), STDOUT_FILENO) >= 0 && dup2(devnull.get(), STDERR_FILENO) >= 0)
				execv(args[0], args.data());
			_exit(127);
		}
	}
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;
	~Child()
	{
		if (pid_ > 0) {
			kill(pid_, SIGKILL);
			reap(0);
		}
	}

	// Whether it has exited (and is reaped); its wait status goes to *status.
	bool exited(int *status) { return reap(WNOHANG, status); }

	// Sends sig and reaps it; SIGKILL if it is still there after timeout_ns.
	void stop(int sig, std::uint64_t timeout_ns)
	{
		if (pid_ <= 0)
			return;
		kill(pid_, sig);
		for (std::uint64_t deadline = now_ns() + timeout_ns; now_ns() < deadline; usleep(10000))
			if (reap(WNOHANG))
				return;
		kill(pid_, SIGKILL);
		reap(0);
	}

private:
	bool reap(int flags, int *status = nullptr)
	{
		int st = 0;
		pid_t r;
		while ((r = waitpid(pid_, &st, flags)) < 0 && errno == EINTR)
			;
		if (r == 0)
			return false; // WNOHANG: still running
		pid_ = -1;        // reaped, or not ours to wait for any more (ECHILD)
		if (status)
			*status = st;
		return true;
	}

	pid_t pid_ = -1;
};

// Debian's libbpf-tools as references, each a hash-map tracer run as a child
// process for the length of its mode:
//  - runqlat, a run-queue latency tracer, for hwsig's scheduler programs.
//    Its tp_btf programs are named after their tracepoints: sched_wakeup,
//    sched_wakeup_new, sched_switch. (Without BTF it falls back to raw_tp
//    programs named handle_sched_*, but hwsig's tp_btf mode cannot run on
//    such a kernel either.)
//  - biolatency, a block I/O latency tracer, for hwsig's block programs.
//    Without -Q it runs two programs per request: block_rq_issue_btf (a
//    hash-map insert keyed by the request) and block_rq_complete_btf (that
//    entry's lookup and delete, and the histogram's lookup); block_rq_issue
//    and block_rq_complete where it falls back to raw_tp.
struct ReferenceTool {
	const char *path;
	const char *programs; // the name prefix of its programs
	const char *ready;    // attached once a program of this name prefix is
};
const ReferenceTool kRunqlat = {"/usr/sbin/runqlat", "sched_", "sched_switch"};
// (Program names are cut to 15 characters: block_rq_complete_btf is
// "block_rq_comple".)
const ReferenceTool kBiolatency = {"/usr/sbin/biolatency", "block_rq_", "block_rq_comple"};

// A reference tool for the length of one mode: attached once constructed,
// detached by stop(). With no arguments each prints nothing until
// interrupted.
class Reference {
public:
	explicit Reference(const ReferenceTool &tool)
		: tool_(tool), preexisting_(prog_names(tool.programs)), child_({tool.path})
	{
		// There is no owner in a program's info: the tool's programs are
		// the ones of its prefix that were not loaded before it started.
		std::uint64_t deadline = now_ns() + 5000000000ull;
		for (;;) {
			bool ready = false;
			programs_.clear();
			for (const auto &[id, name] : prog_names(tool_.programs))
				if (!preexisting_.count(id)) {
					programs_.insert(id);
					ready |= name.rfind(tool_.ready, 0) == 0;
				}
			if (ready && attached())
				return;
			int status;
			if (child_.exited(&status))
				throw hwsig::Error(std::string(tool_.path) + " exited before attaching (" +
						   (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
								      : "signal " + std::to_string(WTERMSIG(status))) +
						   (WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": could not exec" : "") +
						   ")");
			if (now_ns() > deadline)
				throw hwsig::Error(std::string(tool_.path) + ": no program named " + tool_.ready +
						   "* attached within 5 s");
			usleep(10000);
		}
	}

	// SIGINT, on which the tool detaches and exits by itself, then waits
	// until its programs are freed, so they cannot tax the next mode.
	void stop()
	{
		child_.stop(SIGINT, 2000000000ull);
		std::uint64_t deadline = now_ns() + 2000000000ull;
		while (loaded())
			if (now_ns() > deadline)
				throw hwsig::Error(std::string(tool_.path) + "'s programs still loaded 2 s after it exited");
			else
				usleep(10000);
	}

private:
	bool attached() const
	{
		auto linked = linked_prog_ids();
		return std::all_of(programs_.begin(), programs_.end(), [&](__u32 id) { return linked.count(id); });
	}
	bool loaded() const
	{
		auto now = prog_names(tool_.programs);
		return std::any_of(programs_.begin(), programs_.end(), [&](__u32 id) { return now.count(id); });
	}

	ReferenceTool tool_;
	std::map<__u32, std::string> preexisting_; // declared before child_: taken before the fork
	Child child_;
	std::set<__u32> programs_;
};

struct Mode {
	std::string name;
	std::string programs; // name prefix of its BPF programs (in_program counts those)
	std::function<std::function<void()>()> attach; // returns the detach
};

// The mode that runs tool; nullopt (the caller prints a note) when it is
// not installed.
std::optional<Mode> reference_mode(const char *name, const ReferenceTool &tool)
{
	if (access(tool.path, X_OK) != 0)
		return std::nullopt;
	return Mode{name, tool.programs, [tool] {
			    auto r = std::make_shared<Reference>(tool);
			    return std::function<void()>([r] { r->stop(); });
		    }};
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	std::size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// Runs each mode `reps` times, interleaved. Returns per mode the median
// no-program time plus the median of the mode's per-repetition cost, so that
// time - none is that median cost.
std::map<std::string, double> measure(const std::vector<Mode> &modes, int reps, const std::function<double()> &run)
{
	std::map<std::string, std::vector<double>> samples;
	run(); // warm-up: page cache, pipes, CPU frequency
	for (int r = 0; r < reps; ++r)
		for (const auto &m : modes) {
			auto detach = m.attach();
			samples[m.name].push_back(run());
			detach();
		}
	const std::vector<double> &none = samples.at("none");
	std::map<std::string, double> out;
	for (auto &[name, v] : samples) {
		std::vector<double> cost(v.size());
		for (std::size_t r = 0; r < v.size(); ++r)
			cost[r] = v[r] - none[r];
		out[name] = median(none) + median(cost);
	}
	return out;
}

// The q-quantile (0..1) of v, nearest rank.
double percentile(std::vector<double> v, double q)
{
	std::sort(v.begin(), v.end());
	auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
	return v[std::min(rank, v.size() - 1)];
}

// The scheduler's wall-clock pass. Each cycle visits every mode in turn:
// attach, one batch to settle, `batches` timed batches, detach. A mode's
// time is the 10th percentile of all its batches. Interference (interrupts,
// the other vCPU, the host) only ever adds time, so a low percentile of many
// short batches follows the undisturbed cost. (The median of whole runs of
// 40000 round trips does not: it moves the empty program's cost by several
// ns from one bench run to the next, and hwsig's ratio to it between 1.2
// and 1.8.)
std::map<std::string, double> measure_batches(const std::vector<Mode> &modes, int cycles, int batches,
					      const std::function<double()> &batch)
{
	std::map<std::string, std::vector<double>> samples;
	for (int c = 0; c < cycles; ++c)
		for (const auto &m : modes) {
			auto detach = m.attach();
			batch();
			for (int b = 0; b < batches; ++b)
				samples[m.name].push_back(batch());
			detach();
		}
	std::map<std::string, double> out;
	for (const auto &[name, v] : samples)
		out[name] = percentile(v, 0.10);
	return out;
}

void report_ratio(const char *bench, const std::map<std::string, double> &t, const std::string &mode,
		  const std::string &reference, const std::string &label)
{
	double none = t.at("none");
	double cost = t.at(mode) - none, reference_cost = t.at(reference) - none;
	if (reference_cost > 0)
		std::printf("%s.%s_vs_%s: %.2f ratio\n", bench, mode.c_str(), label.c_str(), cost / reference_cost);
	else
		std::printf("%s.%s_vs_%s: n/a ratio (%s cost nothing measurable)\n", bench, mode.c_str(),
			    label.c_str(), reference.c_str());
}

void report(const char *bench, const char *unit, const std::map<std::string, double> &t,
	    const std::vector<std::string> &ours)
{
	double none = t.at("none");
	std::printf("%s.none: %.0f ns/%s\n", bench, none, unit);
	std::printf("%s.empty_raw_tp: %.0f ns/%s (+%.0f)\n", bench, t.at("empty_raw_tp"), unit,
		    t.at("empty_raw_tp") - none);
	for (const auto &name : ours) {
		std::printf("%s.%s: %.0f ns/%s (+%.0f)\n", bench, name.c_str(), t.at(name), unit, t.at(name) - none);
		report_ratio(bench, t, name, "empty_raw_tp", "empty");
	}
}

// The in-program ratios "<mode>_vs_<label>": each mode they apply to over
// the reference mode. A reference that is not among the modes (the block
// bench has neither the wakeup-and-switch floor nor runqlat) gives none.
struct Ratio {
	const char *reference, *label;
	bool (*applies)(const std::string &mode);
};
const Ratio kInProgramRatios[] = {
	{"empty_raw_tp", "empty", [](const std::string &) { return true; }},
	// The empty pair on wakeup and switch: the floor of any scheduler tracer.
	{"empty_wakeup_and_switch", "empty_wakeup_and_switch",
	 [](const std::string &mode) { return mode.rfind("hwsig", 0) == 0; }},
	// One task-storage lookup: the floor of any tracer keeping per-task state.
	{"empty_task_storage", "empty_task_storage", [](const std::string &mode) { return mode == "hwsig_tp_btf"; }},
	{"runqlat", "runqlat",
	 [](const std::string &mode) { return mode == "hwsig_tp_btf" || mode == "hwsig_tp_btf_vm"; }},
	// The block programs against biolatency's issue + complete pair.
	{"biolatency", "biolatency", [](const std::string &mode) { return mode.rfind("hwsig", 0) == 0; }},
};

// With the kernel's run-time accounting on: ns spent inside each mode's
// programs per event (run() returns the number of events it caused). The
// modes alternate over `reps` repetitions; each ratio is taken within one
// repetition (so both sides saw the same conditions) and the median of
// those is printed, next to each mode's median time.
void in_program(const char *bench, const char *unit, const std::vector<Mode> &modes, int reps,
		const std::function<double()> &run)
{
	Fd stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
	if (!stats) {
		std::printf("%s.in_program: unavailable (BPF_ENABLE_STATS: %s)\n", bench, std::strerror(errno));
		return;
	}
	std::map<std::string, std::vector<double>> per_event, runs;
	std::map<std::pair<std::string, std::string>, std::vector<double>> ratios; // by (mode, label)
	for (int r = 0; r < reps; ++r) {
		std::map<std::string, double> this_rep, this_rep_runs;
		for (const auto &m : modes) {
			if (m.name == "none")
				continue;
			// Only the programs this mode loaded: another process may run
			// programs of the same names (hwsigd, a test) at the same time.
			auto others = prog_names(m.programs);
			auto detach = m.attach();
			RunTimes before = prog_run_times(m.programs), after;
			double events = run();
			for (auto &[id, t] : prog_run_times(m.programs))
				if (!others.count(id))
					after.emplace(id, t);
			auto [ns, runs_total] = run_time_delta(before, after);
			detach();
			double t = static_cast<double>(ns) / events;
			this_rep[m.name] = t;
			per_event[m.name].push_back(t);
			runs[m.name].push_back(static_cast<double>(runs_total) / events);
			this_rep_runs[m.name] = static_cast<double>(runs_total) / events;
		}
		// Above the entry floor: each mode's time less what its runs would
		// cost as runs of the empty program (the kernel's entry, exit and
		// the accounting's own clock reads, which no program can avoid),
		// against runqlat's likewise. The ratio of what each program's own
		// instructions cost.
		if (auto floor = this_rep.find("empty_raw_tp"), reference = this_rep.find("runqlat");
		    floor != this_rep.end() && reference != this_rep.end()) {
			const double reference_above = reference->second - floor->second * this_rep_runs["runqlat"];
			for (const char *mode : {"hwsig_tp_btf", "hwsig_tp_btf_vm"})
				if (auto it = this_rep.find(mode); it != this_rep.end() && reference_above > 0)
					ratios[{mode, "runqlat_above_entry"}].push_back(
						(it->second - floor->second * this_rep_runs[mode]) / reference_above);
		}
		for (const auto &[mode, t] : this_rep)
			for (const auto &ratio : kInProgramRatios) {
				auto reference = this_rep.find(ratio.reference);
				if (mode != ratio.reference && ratio.applies(mode) && reference != this_rep.end() &&
				    reference->second > 0)
					ratios[{mode, ratio.label}].push_back(t / reference->second);
			}
	}
	for (const auto &m : modes) {
		if (m.name == "none")
			continue;
		std::printf("%s.in_program.%s: %.0f ns/%s (median of %d; %.2f program runs per %s)\n", bench,
			    m.name.c_str(), median(per_event[m.name]), unit, reps, median(runs[m.name]), unit);
		for (const auto &ratio : kInProgramRatios)
			if (auto it = ratios.find({m.name, ratio.label}); it != ratios.end())
				std::printf("%s.in_program.%s_vs_%s: %.2f ratio\n", bench, m.name.c_str(), ratio.label,
					    median(it->second));
		if (auto it = ratios.find({m.name, "runqlat_above_entry"}); it != ratios.end())
			std::printf("%s.in_program.%s_vs_runqlat_above_entry: %.2f ratio (each side less its runs "
				    "as the empty program's)\n",
				    bench, m.name.c_str(), median(it->second));
	}
}

// The accounting in_program() turns on is scoped to its fd; this sysctl
// turns it on for every program until it is turned off again.
bool stats_enabled_globally()
{
	std::ifstream f("/proc/sys/kernel/bpf_stats_enabled");
	int on = 0;
	return (f >> on) && on != 0;
}

template <typename Collector> std::function<void()> hold(std::optional<Collector> p)
{
	auto shared = std::make_shared<std::optional<Collector>>(std::move(p));
	return [shared] { shared->reset(); };
}

} // namespace

int main(int argc, char **argv)
{
	int reps = argc > 1 ? std::atoi(argv[1]) : 21;
	if (reps < 1)
		reps = 21;
	// bench_bpf [REPS] [sched|block]: one part alone.
	const std::string only = argc > 2 ? argv[2] : "";
	if (!only.empty() && only != "sched" && only != "block") {
		std::printf("usage: bench_bpf [REPS] [sched|block]\n");
		return 2;
	}
	if (geteuid() != 0) {
		std::printf("bench_bpf: not root: loading BPF programs needs root (CAP_BPF+CAP_PERFMON)\n");
		return 1;
	}
	try {
		if (stats_enabled_globally())
			std::printf("# warning: kernel.bpf_stats_enabled is 1 (someone left the run-time "
				    "accounting on): every program run also pays two clock reads, so the wall-clock "
				    "costs below are inflated alike and their ratios pulled towards 1; "
				    "sysctl -w kernel.bpf_stats_enabled=0 for true figures\n");
		int cpu = last_cpu();
		constexpr unsigned kRounds = 40000;      // round trips per in-program repetition
		constexpr unsigned kBatchRounds = 1000;  // round trips per timed wall-clock batch
		constexpr int kBatches = 40;             // batches per mode and cycle
		std::vector<Mode> sched_modes = {
			{"none", "", [] { return std::function<void()>([] {}); }},
			{"empty_raw_tp", "empty_",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(empty_program(Empty::Switch));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"empty_wakeup_and_switch", "empty_",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(
					 empty_program(Empty::WakeupAndSwitch));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"empty_task_storage", "empty_",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(
					 empty_program(Empty::TaskStorage));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"hwsig_tp_btf", "btf_sched",
			 [] { return hold(std::optional<hwsig::SchedCollector>(std::in_place, hwsig::BpfAttach::TpBtf)); }},
			{"hwsig_raw_tp", "raw_sched",
			 [] { return hold(std::optional<hwsig::SchedCollector>(std::in_place, hwsig::BpfAttach::RawTp)); }},
			{"hwsig_tp_btf_selected", "btf_sched",
			 [] {
				 std::optional<hwsig::SchedCollector> p(std::in_place, hwsig::BpfAttach::TpBtf);
				 p->select(getpid());
				 return hold(std::move(p));
			 }},
			// The ping-pong's threads watched as a VM: every switch
			// blames a wait and looks at the victim x culprit matrix.
			{"hwsig_tp_btf_vm", "btf_sched",
			 [] {
				 std::optional<hwsig::SchedCollector> p(std::in_place, hwsig::BpfAttach::TpBtf);
				 p->watch_vm(getpid());
				 return hold(std::move(p));
			 }},
		};
		std::vector<std::string> sched_reported = {"empty_wakeup_and_switch", "empty_task_storage",
							   "hwsig_tp_btf", "hwsig_raw_tp", "hwsig_tp_btf_selected",
							   "hwsig_tp_btf_vm"};
		auto runqlat = reference_mode("runqlat", kRunqlat);
		bool have_runqlat = runqlat.has_value();
		if (have_runqlat) {
			sched_modes.push_back(*runqlat);
			sched_reported.push_back("runqlat");
		}
		if (only != "block") {
			PingPong ping_pong(cpu);
			auto sched = measure_batches(sched_modes, reps, kBatches,
						     [&] { return ping_pong.ns_per_switch(kBatchRounds); });
			std::printf("# sched: pinned ping-pong on CPU %d; per mode %d cycles x %d batches of %u round "
				    "trips, 10th percentile\n",
				    cpu, reps, kBatches, kBatchRounds);
			report("bpf_sched", "switch", sched, sched_reported);
			report_ratio("bpf_sched", sched, "hwsig_tp_btf", "empty_wakeup_and_switch",
				     "empty_wakeup_and_switch");
			report_ratio("bpf_sched", sched, "hwsig_tp_btf", "empty_task_storage", "empty_task_storage");
			if (have_runqlat) {
				report_ratio("bpf_sched", sched, "hwsig_tp_btf", "runqlat", "runqlat");
				report_ratio("bpf_sched", sched, "hwsig_tp_btf_vm", "runqlat", "runqlat");
			} else {
				std::printf("bpf_sched.runqlat: not installed (apt install libbpf-tools)\n");
			}
			in_program("bpf_sched", "switch", sched_modes, reps, [&] {
				ping_pong.ns_per_switch(kRounds);
				return 2.0 * kRounds;
			});
		}

		if (only == "sched")
			return 0;
		LoopDevice loop(256ull << 20);
		std::mt19937_64 rng(7);
		std::vector<std::uint64_t> offsets(4000);
		for (auto &o : offsets)
			o = (rng() % ((256ull << 20) / 4096)) * 4096;
		std::vector<Mode> block_modes = {
			{"none", "", [] { return std::function<void()>([] {}); }},
			{"empty_raw_tp", "empty_",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(empty_program(Empty::BlockComplete));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"hwsig_tp_btf", "btf_block",
			 [] { return hold(std::optional<hwsig::BlockCollector>(std::in_place, hwsig::BpfAttach::TpBtf)); }},
			{"hwsig_raw_tp", "raw_block",
			 [] { return hold(std::optional<hwsig::BlockCollector>(std::in_place, hwsig::BpfAttach::RawTp)); }},
			// The fallback for queues without the kernel's issue stamps:
			// the issue program and its map for every request.
			{"hwsig_tp_btf_issue_program", "btf_block",
			 [] {
				 return hold(std::optional<hwsig::BlockCollector>(std::in_place, hwsig::BpfAttach::TpBtf,
										  false, hwsig::BlockTiming::IssueProgram));
			 }},
			// The per-VM attribution alone, this process watched as a VM:
			// what each request costs on top of hwsig_tp_btf on a host
			// with VMs (a bio tag and a completion lookup).
			{"hwsig_vmio", "vmio_",
			 [] {
				 std::optional<hwsig::VmIoCollector> v(std::in_place);
				 v->watch_vm(getpid());
				 return hold(std::move(v));
			 }},
		};
		std::vector<std::string> block_reported = {"hwsig_tp_btf", "hwsig_raw_tp", "hwsig_tp_btf_issue_program",
							   "hwsig_vmio"};
		auto biolatency = reference_mode("biolatency", kBiolatency);
		if (biolatency) {
			block_modes.push_back(*biolatency);
			block_reported.push_back("biolatency");
		}
		auto block = measure(block_modes, reps, [&] { return direct_read_ns(loop.path(), offsets); });
		std::printf("# block: O_DIRECT 4 KiB random reads of %s, %zu reads x %d repetitions (median cost)\n",
			    loop.path().c_str(), offsets.size(), reps);
		report("bpf_block", "io", block, block_reported);
		if (biolatency) {
			report_ratio("bpf_block", block, "hwsig_tp_btf", "biolatency", "biolatency");
			report_ratio("bpf_block", block, "hwsig_vmio", "biolatency", "biolatency");
		}
		else
			std::printf("bpf_block.biolatency: not installed (apt install libbpf-tools)\n");
		in_program("bpf_block", "io", block_modes, reps, [&] {
			direct_read_ns(loop.path(), offsets);
			return static_cast<double>(offsets.size());
		});
	} catch (const std::exception &e) {
		std::fprintf(stderr, "bench_bpf: %s\n", e.what());
		return 1;
	}
	return 0;
}
#endif
