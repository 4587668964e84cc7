// hwsigctl hist runq|bio|vhost: the full in-kernel histograms, printed the
// way libbpf-tools' runqlat and biolatency print them (vhost queue depths:
// exact rows below 64, log2 rows above). Each interval shows what happened
// during that interval (the difference of two cumulative reads).
#include <boost/program_options.hpp>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "hist_common.h"
#include "hist_view.h"
#include "snapshot_feed.h"

#ifdef HWSIG_HAVE_BPF
#include <linux/types.h>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/scope.h"
#include "hwsig/source_bpf.h"
#include "hwsig/vm_discovery.h"
#include "hwsig_sched.h" // HWSIG_SCHED_MAX_PROCS: processes the sched collector selects at once
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

using namespace hwsigctl::hist;

// -P without -p: none when there are QEMU/KVM guests (the sampler follows
// those, as vm:NAME), else every process (up to the table's size).
std::vector<int> processes_unless_guests(const std::string &root)
{
	if (!hwsig::discover_vms(root).empty())
		return {};
	std::vector<int> pids;
	for (const auto &name : hwsig::list_dir(hwsig::join_path(root, "proc"))) {
		if (name.find_first_not_of("0123456789") != std::string::npos)
			continue;
		pids.push_back(std::stoi(name));
	}
	return pids;
}

// The one BPF source o's histogram comes from, in this process.
hwsig::SourcePtr local_source(const HistOptions &o)
{
	if (o.what == "vhost")
		return hwsig::make_bpf_vhost_source();
	if (o.what == "bio")
		return hwsig::make_bpf_block_source(o.ms);
	std::vector<int> pids = o.pids;
	if (o.per_process && pids.empty())
		pids = processes_unless_guests(o.root);
	return hwsig::make_bpf_sched_source(std::move(pids), o.ms);
}

// Why this process's source has nothing to show (it could not attach:
// privileges, no vhost_net): it then says why for every one of its ids at
// system, not for some of them or at some scopes.
std::optional<std::string> local_failure(const hwsig::Snapshot &s, const std::vector<std::string> &ids)
{
	std::map<std::string, std::string> why; // id -> its reason at system
	for (const auto &note : s.unavailable())
		if (note.scope == "system")
			why.emplace(note.id, note.reason);
	for (const auto &id : ids)
		if (!why.count(id))
			return std::nullopt;
	return ids.empty() ? std::nullopt : std::optional<std::string>(why[ids.front()]);
}

// The processes (-p, -P) and guests the scheduler program had no room for:
// the source says so at their scopes.
std::size_t processes_not_selected(const hwsig::Snapshot &s, const std::vector<std::string> &ids)
{
	std::set<std::string> scopes;
	for (const auto &note : s.unavailable()) {
		const auto kind = hwsig::Scope::parse(note.scope).kind();
		if (!ids.empty() && note.id == ids.front() &&
		    (kind == hwsig::Scope::Kind::Pid || kind == hwsig::Scope::Kind::Vm))
			scopes.insert(note.scope);
	}
	return scopes.size();
}

const char *banner_of(const HistOptions &o)
{
	if (o.what == "runq")
		return "Tracing run queue latency";
	return o.what == "bio" ? "Tracing block device I/O" : "Tracing vhost-net virtqueue depths";
}

// What an interval without a row says.
const char *empty_note(const HistOptions &o, bool through_daemon)
{
	if (o.what == "vhost")
		return "no vhost-net virtqueue has been handled yet";
	if (!through_daemon || (o.what == "bio" && !o.per_disk))
		return "";
	return o.per_process ? "no QEMU/KVM guest followed by hwsigd" : "no samples";
}

// An option that needs collectors of this process's own (per-process
// selection): refused with the way out. -m is not: over hwsigd's
// microsecond slots it only changes how the bounds print.
std::optional<int> refused_by_daemon(const HistOptions &o)
{
	if (o.pids.empty())
		return std::nullopt;
	std::fprintf(stderr,
		     "hwsigctl hist: hwsigd runs: -p selects processes in the scheduler program, which hwsigd "
		     "shares; pass --no-daemon to load a second copy of the programs for this run\n");
	return 1;
}

// The interval loop: each interval is printed as the difference from the
// snapshot before it, the first one from `first` (taken before the banner:
// the collectors attached).
int run(const HistOptions &o, hwsigctl::SnapshotFeed &feed, const hwsig::Snapshot &first, const std::string &banner,
	bool through_daemon)
{
	HistView view(o, empty_note(o, through_daemon), through_daemon && o.ms);
	view.start(first, feed.vms());
	return interval_loop(o, banner.c_str(), [&] { view.print(feed.take(), feed.vms()); });
}

int run_local(const HistOptions &o)
{
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(local_source(o));
	auto feed = hwsigctl::sampler_feed(std::move(sources), o.root);
	const hwsig::Snapshot first = feed->take();
	const auto ids = feed->claimed_ids();
	if (auto why = local_failure(first, ids)) {
		std::fprintf(stderr, "hwsigctl hist: %s\n", why->c_str());
		return 1;
	}
	if (std::size_t skipped = processes_not_selected(first, ids))
		std::fprintf(stderr, "hwsigctl hist: %zu processes not shown (at most %d at once)\n", skipped,
			     HWSIG_SCHED_MAX_PROCS);
	return run(o, *feed, first, banner_of(o), false);
}

int run_through_daemon(const HistOptions &o, std::unique_ptr<hwsig::DaemonClient> client)
{
	if (auto refused = refused_by_daemon(o))
		return *refused;
	const std::string banner = std::string(banner_of(o)) + " (through hwsigd at " + client->path() + ")";
	auto feed = hwsigctl::daemon_feed(std::move(client));
	const hwsig::Snapshot first = feed->take();
	return run(o, *feed, first, banner, true);
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
		("milliseconds,m", po::bool_switch(&o.ms), "millisecond histograms (default microseconds; through hwsigd its microsecond slots, bounds in ms)")
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
	try {
		if (o.root == "/" && !o.no_daemon)
			if (auto client = hwsig::DaemonClient::connect_if_running(daemon_socket_path()))
				return run_through_daemon(o, std::move(client));
		return run_local(o);
	} catch (const hwsig::Error &e) {
		std::fprintf(stderr, "hwsigctl hist: %s\n", e.what());
		return 1;
	}
}

} // namespace hwsigctl

#endif
