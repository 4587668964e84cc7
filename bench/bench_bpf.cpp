// Cost of hwsig's BPF programs per event, side by side in one run:
//   sched: a ping-pong of two threads pinned to one CPU (every round is two
//          context switches and two wakeups) with no program, an empty
//          raw_tp program on sched_switch, and hwsig's scheduler programs;
//   block: O_DIRECT 4 KiB reads of a loop device with no program, an empty
//          raw_tp program on block_rq_complete, and hwsig's block programs.
// Modes alternate within each repetition, so drift on a shared machine hits
// every mode alike, and the fastest repetition of each mode is kept (load
// from other processes only ever adds time). The cost of a mode is its time
// per event minus the no-program time; the ratio divides hwsig's cost by the
// empty program's.
//
// Wall-clock differences of ~100 ns on a ~5 us context switch are at the
// mercy of noise, so a second pass reads the kernel's own accounting
// (BPF_ENABLE_STATS: run_time_ns and run_cnt of every program) and prints
// the time spent inside the programs per event, which load does not skew.
// That in-program time excludes the tracepoint-to-program dispatch, which
// the wall-clock numbers include.
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
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "empty.skel.h"
#include "hwsig/bpf_sources.h"
#include "hwsig/error.h"
#include "hwsig/fd.h"
#include "hwsig/skeleton.h"

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

// ns per context switch of a pinned ping-pong of `rounds` round trips.
double ping_pong_ns_per_switch(int cpu, unsigned rounds)
{
	int ab[2], ba[2];
	if (pipe(ab) || pipe(ba))
		hwsig::throw_errno("pipe");
	Fd a0(ab[0]), a1(ab[1]), b0(ba[0]), b1(ba[1]);
	std::thread peer([&] {
		pin(cpu);
		char c;
		for (unsigned i = 0; i < rounds; ++i)
			if (read(a0.get(), &c, 1) != 1 || write(b1.get(), &c, 1) != 1)
				std::abort();
	});
	cpu_set_t old;
	sched_getaffinity(0, sizeof old, &old);
	pin(cpu);
	char c = 'x';
	std::uint64_t t0 = now_ns();
	for (unsigned i = 0; i < rounds; ++i)
		if (write(a1.get(), &c, 1) != 1 || read(b0.get(), &c, 1) != 1)
			std::abort();
	std::uint64_t t1 = now_ns();
	peer.join();
	sched_setaffinity(0, sizeof old, &old);
	return static_cast<double>(t1 - t0) / (2.0 * rounds);
}

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

enum class Empty { Switch, WakeupAndSwitch, BlockComplete };

hwsig::Skeleton<hwsig_empty_bpf> empty_program(Empty which)
{
	return hwsig::Skeleton<hwsig_empty_bpf>(kEmptyOps, [which](hwsig_empty_bpf &s) {
		bpf_program__set_autoload(s.progs.empty_sched_switch, which != Empty::BlockComplete);
		bpf_program__set_autoload(s.progs.empty_sched_wakeup, which == Empty::WakeupAndSwitch);
		bpf_program__set_autoload(s.progs.empty_block_rq_complete, which == Empty::BlockComplete);
		bpf_program__set_autoload(s.progs.empty_tracepoint_sched_switch, false);
	});
}

double fastest(const std::vector<double> &v)
{
	return *std::min_element(v.begin(), v.end());
}

// run_time_ns and run_cnt of each loaded program whose name starts with
// prefix, by program id. Detached programs are freed after an RCU grace
// period, so the previous mode's may still be listed: deltas are taken per
// id.
using RunTimes = std::map<__u32, std::pair<std::uint64_t, std::uint64_t>>;

RunTimes prog_run_times(const std::string &prefix)
{
	RunTimes out;
	__u32 id = 0;
	while (bpf_prog_get_next_id(id, &id) == 0) {
		Fd fd(bpf_prog_get_fd_by_id(id));
		if (!fd)
			continue;
		struct bpf_prog_info info = {};
		__u32 len = sizeof info;
		if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
			continue;
		if (std::string(info.name).rfind(prefix, 0) != 0)
			continue;
		out[id] = {info.run_time_ns, info.run_cnt};
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

struct Mode {
	std::string name;
	std::function<std::function<void()>()> attach; // returns the detach
};

// Runs each mode `reps` times, interleaved; returns the fastest per mode.
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
	std::map<std::string, double> out;
	for (auto &[name, v] : samples)
		out[name] = fastest(v);
	return out;
}

void report(const char *bench, const char *unit, const std::map<std::string, double> &t,
	    const std::vector<std::string> &ours)
{
	double none = t.at("none");
	double empty = t.at("empty_raw_tp") - none;
	std::printf("%s.none: %.0f ns/%s\n", bench, none, unit);
	std::printf("%s.empty_raw_tp: %.0f ns/%s (+%.0f)\n", bench, t.at("empty_raw_tp"), unit, empty);
	for (const auto &name : ours) {
		double cost = t.at(name) - none;
		std::printf("%s.%s: %.0f ns/%s (+%.0f)\n", bench, name.c_str(), t.at(name), unit, cost);
		if (empty > 0)
			std::printf("%s.%s_vs_empty: %.2f ratio\n", bench, name.c_str(), cost / empty);
		else
			std::printf("%s.%s_vs_empty: n/a ratio (the empty program cost nothing measurable)\n", bench,
				    name.c_str());
	}
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	std::size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// With the kernel's run-time accounting on: ns spent inside each mode's
// programs per event (run() returns the number of events it caused). The
// modes alternate over `reps` repetitions; each ratio is taken within one
// repetition (so both sides saw the same conditions) and the median of
// those is printed, next to each mode's median time.
void in_program(const char *bench, const char *unit, const std::vector<Mode> &modes, const std::string &what,
		int reps, const std::function<double()> &run)
{
	Fd stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
	if (!stats) {
		std::printf("%s.in_program: unavailable (BPF_ENABLE_STATS: %s)\n", bench, std::strerror(errno));
		return;
	}
	std::map<std::string, std::vector<double>> per_event, runs, vs_empty, vs_floor;
	for (int r = 0; r < reps; ++r) {
		double empty = 0, floor = 0;
		for (const auto &m : modes) {
			if (m.name == "none")
				continue;
			auto detach = m.attach();
			std::string prefix = m.name.rfind("empty", 0) == 0 ? "empty_"
					     : m.name.find("raw_tp") != std::string::npos ? "raw_" + what.substr(0, 5)
											   : "btf_" + what.substr(0, 5);
			RunTimes before = prog_run_times(prefix);
			double events = run();
			auto [ns, runs_total] = run_time_delta(before, prog_run_times(prefix));
			detach();
			double t = static_cast<double>(ns) / events;
			per_event[m.name].push_back(t);
			runs[m.name].push_back(static_cast<double>(runs_total) / events);
			if (m.name == "empty_raw_tp")
				empty = t;
			else if (empty > 0)
				vs_empty[m.name].push_back(t / empty);
			if (m.name == "empty_wakeup_and_switch")
				floor = t;
			else if (m.name.rfind("hwsig", 0) == 0 && floor > 0)
				vs_floor[m.name].push_back(t / floor);
		}
	}
	for (const auto &m : modes) {
		if (m.name == "none")
			continue;
		std::printf("%s.in_program.%s: %.0f ns/%s (median of %d; %.2f program runs per %s)\n", bench,
			    m.name.c_str(), median(per_event[m.name]), unit, reps, median(runs[m.name]), unit);
		if (!vs_empty[m.name].empty())
			std::printf("%s.in_program.%s_vs_empty: %.2f ratio\n", bench, m.name.c_str(),
				    median(vs_empty[m.name]));
		if (!vs_floor[m.name].empty())
			std::printf("%s.in_program.%s_vs_empty_wakeup_and_switch: %.2f ratio\n", bench, m.name.c_str(),
				    median(vs_floor[m.name]));
	}
}

template <typename Probe> std::function<void()> hold(std::optional<Probe> p)
{
	auto shared = std::make_shared<std::optional<Probe>>(std::move(p));
	return [shared] { shared->reset(); };
}

} // namespace

int main(int argc, char **argv)
{
	int reps = argc > 1 ? std::atoi(argv[1]) : 15;
	if (reps < 1)
		reps = 15;
	if (geteuid() != 0) {
		std::printf("bench_bpf: not root: loading BPF programs needs root (CAP_BPF+CAP_PERFMON)\n");
		return 1;
	}
	try {
		int cpu = last_cpu();
		constexpr unsigned kRounds = 5000;
		std::vector<Mode> sched_modes = {
			{"none", [] { return std::function<void()>([] {}); }},
			{"empty_raw_tp",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(empty_program(Empty::Switch));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"empty_wakeup_and_switch",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(
					 empty_program(Empty::WakeupAndSwitch));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"hwsig_tp_btf",
			 [] { return hold(std::optional<hwsig::SchedProbe>(std::in_place, hwsig::BpfAttach::TpBtf)); }},
			{"hwsig_raw_tp",
			 [] { return hold(std::optional<hwsig::SchedProbe>(std::in_place, hwsig::BpfAttach::RawTp)); }},
			{"hwsig_tp_btf_selected",
			 [] {
				 std::optional<hwsig::SchedProbe> p(std::in_place, hwsig::BpfAttach::TpBtf);
				 p->select(getpid());
				 return hold(std::move(p));
			 }},
		};
		auto sched = measure(sched_modes, reps, [&] { return ping_pong_ns_per_switch(cpu, kRounds); });
		std::printf("# sched: pinned ping-pong on CPU %d, %u round trips x %d repetitions (fastest)\n", cpu,
			    kRounds, reps);
		report("bpf_sched", "switch", sched,
		       {"empty_wakeup_and_switch", "hwsig_tp_btf", "hwsig_raw_tp", "hwsig_tp_btf_selected"});
		if (double floor = sched.at("empty_wakeup_and_switch") - sched.at("none"); floor > 0)
			std::printf("bpf_sched.hwsig_tp_btf_vs_empty_wakeup_and_switch: %.2f ratio\n",
				    (sched.at("hwsig_tp_btf") - sched.at("none")) / floor);
		in_program("bpf_sched", "switch", sched_modes, "sched", reps, [&] {
			ping_pong_ns_per_switch(cpu, kRounds);
			return 2.0 * kRounds;
		});

		LoopDevice loop(256ull << 20);
		std::mt19937_64 rng(7);
		std::vector<std::uint64_t> offsets(4000);
		for (auto &o : offsets)
			o = (rng() % ((256ull << 20) / 4096)) * 4096;
		std::vector<Mode> block_modes = {
			{"none", [] { return std::function<void()>([] {}); }},
			{"empty_raw_tp",
			 [] {
				 auto s = std::make_shared<hwsig::Skeleton<hwsig_empty_bpf>>(empty_program(Empty::BlockComplete));
				 return std::function<void()>([s] { s->reset(); });
			 }},
			{"hwsig_tp_btf",
			 [] { return hold(std::optional<hwsig::BlockProbe>(std::in_place, hwsig::BpfAttach::TpBtf)); }},
			{"hwsig_raw_tp",
			 [] { return hold(std::optional<hwsig::BlockProbe>(std::in_place, hwsig::BpfAttach::RawTp)); }},
		};
		auto block = measure(block_modes, reps, [&] { return direct_read_ns(loop.path(), offsets); });
		std::printf("# block: O_DIRECT 4 KiB random reads of %s, %zu reads x %d repetitions (fastest)\n",
			    loop.path().c_str(), offsets.size(), reps);
		report("bpf_block", "io", block, {"hwsig_tp_btf", "hwsig_raw_tp"});
		in_program("bpf_block", "io", block_modes, "block", reps, [&] {
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
