// hwsigctl hist runq|bio|vhost: the full in-kernel histograms, printed the
// way libbpf-tools' runqlat and biolatency print them (vhost queue depths:
// exact rows below 64, log2 rows above). Each interval shows what happened
// during that interval (the difference of two cumulative reads).
#include <boost/program_options.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "hist_common.h"
#include "hist_daemon.h"
#include "snapshot_feed.h"
#include "interrupt.h"
#include "hwsig/histogram.h"
#include "hwsig/histogram_print.h"

#ifdef HWSIG_HAVE_BPF
#include <linux/types.h>
#include <unistd.h>

#include "block_collector.h"
#include "hwsig/block_device.h"
#include "hwsig_sched.h" // HWSIG_SCHED_MAX_PROCS: processes the sched collector selects at once
#include "sched_collector.h"
#include "vhost_collector.h"
#include "hwsig/fs.h"
#include "hwsig/vhost.h"
#include "hwsig/vm_discovery.h"
#endif

namespace po = boost::program_options;

namespace {

const char *kHistHelp =
	"hwsigctl hist runq|bio|vhost [options] [interval [count]]\n\n"
	"Prints the in-kernel log2 histograms like runqlat and biolatency do:\n"
	"  runq   run-queue wait: wakeup or preemption -> running\n"
	"  bio    block I/O latency: issue -> complete (per device with -D)\n"
	"  vhost  vhost-net virtqueue depth (descriptors outstanding when the\n"
	"         worker handles the queue), per virtqueue (per VM with -V),\n"
	"         with the RX ring stalls; needs vhost_net loaded\n"
	"Every interval seconds (default: once, at Ctrl-C) the counts of that\n"
	"interval are printed, count times (default: until Ctrl-C). Needs root.\n\n"
	"options";

const char *kHistExamples =
	"examples:\n"
	"  hwsigctl hist runq                 run-queue wait until Ctrl-C\n"
	"  hwsigctl hist runq 1 5             five 1-second histograms\n"
	"  hwsigctl hist runq -m 5            in milliseconds, every 5 s\n"
	"  hwsigctl hist runq -P -p 1234      only process 1234 (repeat -p for more)\n"
	"  hwsigctl hist runq -P              each QEMU/KVM guest (or every process)\n"
	"  hwsigctl hist runq --kind preempt  only waits after a preemption\n"
	"  hwsigctl hist bio -D 1 10          I/O latency per disk, ten times\n"
	"  hwsigctl hist bio -D --queue       allocation -> issue (queue time) per disk\n"
	"  hwsigctl hist bio -D --size        request sizes (log2 KiB) per disk\n"
	"  hwsigctl hist bio -D --seek        seek distances (log2 sectors) per disk\n"
	"  hwsigctl hist vhost 1 10           virtqueue depths, ten 1-second histograms\n"
	"  hwsigctl hist vhost -V             one histogram per VM (its queues merged)\n";

} // namespace

#ifndef HWSIG_HAVE_BPF

namespace hwsigctl {
int cmd_hist(const std::vector<std::string> &args)
{
	if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
		std::printf("%s\n%s", kHistHelp, kHistExamples);
		return 0;
	}
	std::fprintf(stderr, "hwsigctl hist: this hwsigctl was built without BPF (HWSIG_BPF=OFF)\n");
	return 1;
}
} // namespace hwsigctl

#else

namespace {

using hwsig::Histogram;
using namespace hwsigctl::hist;

std::string comm_of(const std::string &root, int pid)
{
	hwsig::FileRead r = hwsig::read_file(hwsig::join_path(root, "proc/" + std::to_string(pid) + "/comm"), 256);
	if (!r.data)
		return "?";
	std::string s = *r.data;
	while (!s.empty() && s.back() == '\n')
		s.pop_back();
	return s;
}

// -P without -p: the QEMU/KVM guests, else every process (up to the
// table's size).
std::vector<int> default_processes(const std::string &root)
{
	std::vector<int> pids;
	for (const auto &vm : hwsig::discover_vms(root))
		pids.push_back(vm.pid);
	if (!pids.empty())
		return pids;
	for (const auto &name : hwsig::list_dir(hwsig::join_path(root, "proc"))) {
		if (name.find_first_not_of("0123456789") != std::string::npos)
			continue;
		pids.push_back(std::stoi(name));
	}
	return pids;
}

int run_runq(const HistOptions &o)
{
	hwsig::SchedCollector collector(hwsig::BpfAttach::Auto, o.ms);
	std::vector<int> pids = o.pids;
	if (o.per_process && pids.empty())
		pids = default_processes(o.root);
	std::size_t skipped = 0;
	for (int pid : pids)
		if (!collector.select(pid))
			++skipped;
	if (skipped)
		std::fprintf(stderr, "hwsigctl hist: %zu processes not shown (at most %d at once)\n", skipped,
			     HWSIG_SCHED_MAX_PROCS);
	const char *unit = o.ms ? "msecs" : "usecs";
	auto pick = [&](const hwsig::SchedCounts &c) {
		if (o.kind == "wakeup")
			return c.wakeup_wait_us;
		if (o.kind == "preempt")
			return c.preempt_wait_us;
		return c.wait_us();
	};
	std::map<std::string, Histogram> prev;
	auto show = [&](const std::string &key, const std::string &title, const Histogram &cur) {
		Histogram d = diff(prev[key], cur);
		prev[key] = cur;
		if (!title.empty())
			std::printf("\n%s\n", title.c_str());
		hwsig::print_log2_hist(stdout, d, unit);
	};
	// A guest is labelled by its VM name (every QEMU's comm is the same).
	std::map<int, std::string> vm_names;
	if (o.per_process || !o.pids.empty())
		for (const auto &vm : hwsig::discover_vms(o.root))
			vm_names[vm.pid] = vm.name;
	auto title = [&](int pid) {
		auto it = vm_names.find(pid);
		if (it != vm_names.end())
			return "vm = " + it->second + " (pid " + std::to_string(pid) + ")";
		return "pid = " + std::to_string(pid) + " " + comm_of(o.root, pid);
	};
	return interval_loop(o, "Tracing run queue latency", [&] {
		if (o.per_process || !o.pids.empty()) {
			for (int pid : collector.selected()) {
				auto c = collector.process(pid);
				if (c && c->runs)
					show("pid:" + std::to_string(pid), title(pid), pick(*c));
			}
			return;
		}
		auto cpus = collector.per_cpu();
		if (o.per_cpu) {
			for (std::size_t cpu = 0; cpu < cpus.size(); ++cpu)
				show("cpu:" + std::to_string(cpu), "cpu = " + std::to_string(cpu), pick(cpus[cpu]));
			return;
		}
		hwsig::SchedCounts all = cpus.empty() ? hwsig::SchedCounts{} : cpus[0];
		for (std::size_t cpu = 1; cpu < cpus.size(); ++cpu)
			all += cpus[cpu];
		show("system", "", pick(all));
	});
}

int run_bio(const HistOptions &o)
{
	hwsig::BlockCollector collector(hwsig::BpfAttach::Auto, o.ms);
	const char *unit = o.size ? "kbytes" : o.seek ? "sectors" : o.ms ? "msecs" : "usecs";
	auto pick = [&](const hwsig::BlockCounts &c) {
		if (o.size)
			return c.size_kib;
		if (o.seek)
			return c.seek_sectors;
		if (o.queue)
			return c.queue_us;
		return c.latency_us;
	};
	std::map<std::string, Histogram> prev;
	return interval_loop(o, "Tracing block device I/O", [&] {
		Histogram all;
		for (const auto &[dev, c] : collector.devices()) {
			std::string disk = hwsig::block_dev_label(o.root, dev);
			Histogram d = diff(prev[disk], pick(c));
			prev[disk] = pick(c);
			if (o.per_disk) {
				if (d.total() == 0)
					continue;
				std::printf("\ndisk = %s\n", disk.c_str());
				hwsig::print_log2_hist(stdout, d, unit);
			} else {
				all += d;
			}
		}
		if (!o.per_disk)
			hwsig::print_log2_hist(stdout, all, unit);
	});
}

int run_vhost(const HistOptions &o)
{
	hwsig::VhostCollector collector(hwsig::VhostAttach::Auto, o.root);
	std::map<std::string, Histogram> prev;
	std::map<std::string, std::uint64_t> prev_stalls;
	std::string banner = std::string("Tracing vhost-net virtqueue depths (") +
			     hwsig::vhost_attach_name(collector.attached_as()) + ")";
	return interval_loop(o, banner.c_str(), [&] {
		auto vms = hwsig::discover_vms(o.root);
		auto views = hwsig::name_vhost_queues(collector.queues(), &vms, [&](std::uint32_t tid) {
			return hwsig::vhost_worker_owner(o.root, tid);
		});
		// What to print: a title and counts per queue, or per VM.
		struct Row {
			std::string title;
			hwsig::VhostQueueCounts c;
			bool rx = true;
		};
		std::map<std::string, Row> rows;
		for (const auto &v : views) {
			std::string vm = v.vm_scope.empty() ? "" : v.vm_scope.substr(3);
			if (o.per_vm) {
				std::string key = vm.empty() ? "pid " + std::to_string(v.owner) : "vm " + vm;
				Row &r = rows[key];
				r.title = vm.empty() ? "owner = " + std::to_string(v.owner) + " (not a discovered VM)"
						     : "vm = " + vm + " (pid " + std::to_string(v.owner) + ")";
				r.c += v.counts;
			} else {
				Row &r = rows[v.scope];
				r.title = "vq = " + v.scope + (vm.empty() ? "" : " vm = " + vm) +
					  " worker = " + std::to_string(v.key.worker_tid);
				r.c = v.counts;
				r.rx = !v.key.tx;
			}
		}
		if (rows.empty())
			std::printf("no vhost-net virtqueue has been handled yet\n");
		for (const auto &[key, r] : rows) {
			Histogram d = diff(prev[key], r.c.depth);
			prev[key] = r.c.depth;
			std::uint64_t stalls = r.c.stalls - std::min(r.c.stalls, prev_stalls[key]);
			prev_stalls[key] = r.c.stalls;
			std::printf("\n%s\n", r.title.c_str());
			if (r.rx)
				std::printf("ring stalls = %llu\n", static_cast<unsigned long long>(stalls));
			hwsig::print_linear_log2_hist(stdout, d, "depth");
		}
		if (std::uint64_t dropped = collector.dropped())
			std::printf("\n%llu handler runs not counted: queue map full\n",
				    static_cast<unsigned long long>(dropped));
	});
}

// [interval [count]] after the histogram's name.
std::optional<int> parse_interval_count(const std::vector<std::string> &positional, HistOptions &o)
{
	try {
		if (positional.size() > 1) {
			std::size_t used = 0;
			o.interval = std::stod(positional[1], &used);
			if (used != positional[1].size() || !(o.interval > 0) || o.interval > 1e6)
				throw std::invalid_argument("interval");
		}
		if (positional.size() > 2) {
			std::size_t used = 0;
			long long c = std::stoll(positional[2], &used);
			if (used != positional[2].size() || c <= 0)
				throw std::invalid_argument("count");
			o.count = static_cast<unsigned long>(c);
		}
	} catch (const std::exception &) {
		return hwsigctl::usage_error("hist", "interval must be seconds > 0 and count an integer > 0");
	}
	return std::nullopt;
}

// Options that belong to another histogram, or exclude each other.
std::optional<int> check_hist_options(const HistOptions &o)
{
	using hwsigctl::usage_error;
	if (o.kind != "all" && o.kind != "wakeup" && o.kind != "preempt")
		return usage_error("hist", "--kind is all, wakeup or preempt");
	for (int pid : o.pids)
		if (pid <= 0)
			return usage_error("hist", "-p needs a process id > 0");
	if (o.what == "runq" && (o.per_disk || o.queue || o.size || o.seek))
		return usage_error("hist", "-D, -Q, --size and --seek are for bio");
	if (o.what == "bio" && (o.per_process || o.per_cpu || !o.pids.empty() || o.kind != "all"))
		return usage_error("hist", "-P, -p, -C and --kind are for runq");
	if (o.what == "vhost" && (o.per_process || o.per_cpu || !o.pids.empty() || o.kind != "all" ||
				  o.per_disk || o.queue || o.size || o.seek || o.ms))
		return usage_error("hist", "vhost takes only -V, -T and [interval [count]]");
	if (o.what != "vhost" && o.per_vm)
		return usage_error("hist", "-V is for vhost");
	if (static_cast<int>(o.queue) + static_cast<int>(o.size) + static_cast<int>(o.seek) > 1)
		return usage_error("hist", "pick one of -Q, --size, --seek");
	return std::nullopt;
}

// Fills o from args; returns the exit code when the command ends here
// (--help, a bad command line).
std::optional<int> parse_hist_options(const std::vector<std::string> &args, HistOptions &o)
{
	std::vector<std::string> positional;
	po::options_description visible(kHistHelp);
	visible.add_options()
		("help,h", "this help")
		("milliseconds,m", po::bool_switch(&o.ms), "millisecond histograms (default microseconds)")
		("timestamp,T", po::bool_switch(&o.timestamp), "print the time with each histogram")
		("pids,P", po::bool_switch(&o.per_process),
		 "runq: one histogram per process (-p's, else each VM, else every process)")
		("pid,p", po::value<std::vector<int>>(&o.pids), "runq: trace this process (repeatable)")
		("cpus,C", po::bool_switch(&o.per_cpu), "runq: one histogram per CPU")
		("kind", po::value<std::string>(&o.kind)->default_value("all"),
		 "runq: all | wakeup | preempt (what the wait followed)")
		("disks,D", po::bool_switch(&o.per_disk), "bio: one histogram per disk")
		("queue,Q", po::bool_switch(&o.queue), "bio: queue time (allocation -> issue), not latency")
		("size", po::bool_switch(&o.size), "bio: request sizes in log2 KiB")
		("seek", po::bool_switch(&o.seek), "bio: seek distances in log2 sectors")
		("vms,V", po::bool_switch(&o.per_vm), "vhost: one histogram per VM instead of per virtqueue")
		("no-daemon", po::bool_switch(&o.no_daemon),
		 "load this process's own collectors even while hwsigd runs")
		("root", po::value<std::string>(&o.root)->default_value("/"), "prefix for /proc and /sys");
	po::options_description hidden;
	hidden.add_options()("positional", po::value<std::vector<std::string>>(&positional));
	po::positional_options_description pos;
	pos.add("positional", -1);
	po::variables_map vars;
	if (auto done = hwsigctl::parse_command_line({"hist", visible, hidden, kHistExamples, &pos}, args, vars))
		return done;
	if (positional.empty())
		return hwsigctl::usage_error("hist", "which histogram: runq, bio or vhost");
	o.what = positional[0];
	if (o.what != "runq" && o.what != "bio" && o.what != "vhost")
		return hwsigctl::usage_error("hist", "unknown histogram '" + o.what + "' (runq, bio or vhost)");
	if (positional.size() > 3)
		return hwsigctl::usage_error("hist", "too many arguments: [interval [count]]");
	if (auto bad = parse_interval_count(positional, o))
		return bad;
	return check_hist_options(o);
}

} // namespace

namespace hwsigctl {

int cmd_hist(const std::vector<std::string> &args)
{
	HistOptions o;
	if (auto done = parse_hist_options(args, o))
		return *done;
	// A pid that is not there would trace nothing, silently.
	for (int pid : o.pids)
		if (!hwsig::path_exists(hwsig::join_path(o.root, "proc/" + std::to_string(pid)))) {
			std::fprintf(stderr, "hwsigctl hist: no process with pid %d\n", pid);
			return 1;
		}
	if (o.root == "/" && !o.no_daemon) {
		try {
			if (auto client = hwsig::DaemonClient::connect_if_running(daemon_socket_path()))
				return hist::run_from_daemon(o, *client);
		} catch (const hwsig::Error &e) {
			std::fprintf(stderr, "hwsigctl hist: %s\n", e.what());
			return 1;
		}
	}
	try {
		if (o.what == "vhost")
			return run_vhost(o);
		return o.what == "runq" ? run_runq(o) : run_bio(o);
	} catch (const hwsig::Error &e) {
		// Not libbpf's probe text (RLIMIT_MEMLOCK, CONFIG_BPF_SYSCALL):
		// the one thing to do.
		if (e.err() == EPERM || (e.err() == EACCES && geteuid() != 0)) {
			std::fprintf(stderr, "hwsigctl hist: needs root (CAP_BPF and CAP_PERFMON)\n");
			return 1;
		}
		throw;
	}
}

} // namespace hwsigctl

#endif
