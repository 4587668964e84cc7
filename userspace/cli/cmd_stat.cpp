// hwsigctl stat: snapshots every --interval, prints each interval's metrics,
// and on exit (end of --count/--duration, or Ctrl-C) the summary over the
// whole run, like perf stat.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <cstring>
#include <string_view>
#include <unistd.h>

#include "commands.h"
#include "stat_print.h"
#include "interrupt.h"
#include "hwsig/derive.h"
#include "hwsig/docs.h"
#include "hwsig/render.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/proc_alive.h"
#include "hwsig/thresholds.h"
#include "hwsig/render_stat.h"
#include "snapshot_feed.h"

namespace po = boost::program_options;

namespace {

struct StatOptions {
	double interval = 1.0, duration = 0;
	unsigned long count = 0; // 0: until Ctrl-C
	long long count_arg = 0; // as typed: a negative count is refused, not wrapped
	std::string format = "table", root = "/";
	bool json = false, compact = false;
	std::string thresholds_file; // --thresholds; else <root>/etc/hwsig/thresholds.conf if present
	hwsig::Thresholds thresholds;
	hwsig::UnavailableSaid said;  // what the table has said about unavailable metrics
	unsigned compact_lines = 0;
	hwsigctl::CollectorSwitches collectors;
	hwsig::RenderOptions render;
	std::string vm; // --vm as typed: a name, or globs
};

// Without --vm, the table shows the scopes of this many VMs: a host with
// 200 VMs of 8 vCPUs has 3,600 lines of them (hwsigctl top is the view of
// every VM).
constexpr std::size_t kTableVms = 8;

// HWSIG_CHECK_INTERVALS=1 (set by every test harness that runs hwsigctl):
// an interval that names an id and scope twice, or both as a value and as
// unavailable, is a bug in derive or a source; fail loudly instead of
// printing it.
void check_interval(const hwsig::Interval &iv)
{
	static const bool enabled = [] {
		const char *env = std::getenv("HWSIG_CHECK_INTERVALS");
		return env && *env && std::string_view(env) != "0";
	}();
	if (!enabled)
		return;
	auto conflicts = hwsig::interval_conflicts(iv);
	if (conflicts.empty())
		return;
	for (const auto &c : conflicts)
		std::fprintf(stderr, "hwsigctl stat: internal error: %s\n", c.c_str());
	std::exit(70); // EX_SOFTWARE
}

void print_interval(const hwsig::Interval &iv, StatOptions &o)
{
	check_interval(iv);
	o.render.said = &o.said;
	o.render.compact_lines = &o.compact_lines;
	const auto form = o.json ? hwsig::StatForm::Json : o.compact ? hwsig::StatForm::Compact : hwsig::StatForm::Table;
	hwsigctl::print_stat_interval(iv, o.render, o.thresholds, form);
}

// Colour only for a person at a terminal: not when piped, not with NO_COLOR
// set to anything (no-color.org), not on a dumb terminal.
bool want_color()
{
	const char *no = std::getenv("NO_COLOR"), *term = std::getenv("TERM");
	return isatty(STDOUT_FILENO) && !(no && *no) && !(term && std::strcmp(term, "dumb") == 0);
}

// --thresholds FILE must exist; the default file may be absent (the
// built-in defaults then). Either one with a bad line ends the command
// (exit 2) naming the file, line and key.
std::optional<int> load_thresholds(StatOptions &o, bool given)
{
	const std::string path = given ? o.thresholds_file : hwsig::join_path(o.root, "/etc/hwsig/thresholds.conf");
	return hwsigctl::load_thresholds("stat", path, !given, o.thresholds);
}

const char *kExamples =
	"examples:\n"
	"  hwsigctl stat                               a table every second until Ctrl-C\n"
	"  hwsigctl stat -d 10 --interval 2            five tables, then the 10 s summary\n"
	"  hwsigctl stat --count 2 --interval 0.5 --format json\n"
	"                                              two JSON lines, schema in\n"
	"                                              " HWSIG_DOC("output.rst") "\n"
	"  hwsigctl stat --per-cpu                     add cpu:N scopes\n"
	"  hwsigctl stat --vm web01                    one VM's scopes next to the host's\n"
	"  hwsigctl stat --vm 'web*,db01'              the scopes of these VMs (shell globs)\n"
	"  hwsigctl stat --compact -i 5                one line per 5 s, a header every 20\n"
	"  hwsigctl stat --thresholds ./my.conf        verdicts with other thresholds,\n"
	"                                              keys in " HWSIG_DOC("thresholds.rst") "\n";

// Fills o from args; returns the exit code when the command ends here
// (--help, or a bad command line).
std::optional<int> parse_stat_options(const std::vector<std::string> &args, StatOptions &o)
{
	po::options_description visible("hwsigctl stat [options]\n\n"
					"Samples every layer each interval and prints the metrics of the\n"
					"catalog (" HWSIG_DOC("metrics.rst") "); what cannot be measured here\n"
					"is listed as unavailable with the reason. Ctrl-C prints the summary\n"
					"so far. While hwsigd runs, its collectors are read (no second copy\n"
					"of any BPF program is loaded, hwsig.ko is left as it is); --no-bpf,\n"
					"--no-kmod, --no-pmu and --no-daemon sample in this process instead,\n"
					"and so does --resctrl unless hwsigd has resctrl on\n"
					"(" HWSIG_DOC("resctrl.rst") ").\n"
					"Values are in human units; values past a threshold are marked '!'\n"
					"and each interval ends with at most three verdicts (USE method:\n"
					"the saturated resource and the evidence). Unavailable metrics are\n"
					"listed once, grouped by reason, and again when that changes.\n"
					"The table shows the scopes of at most 8 VMs (--vm chooses).\n"
					"Colour on a terminal unless NO_COLOR is set.\n\noptions");
	visible.add_options()
		("help,h", "this help")
		("interval,i", po::value<double>(&o.interval)->default_value(1.0), "seconds between snapshots (0.01 .. 3600)")
		("duration,d", po::value<double>(&o.duration), "stop after this many seconds")
		("count,c", po::value<long long>(&o.count_arg), "stop after this many intervals")
		("format,f", po::value<std::string>(&o.format)->default_value("table"), "table | json (one object per line)")
		("per-cpu,A", po::bool_switch(&o.render.per_cpu), "also show cpu:N scopes")
		("vm", po::value<std::string>(&o.vm)->value_name("NAME"),
		 "show this VM's scopes (name from 'hwsigctl vms') and the host's; shell globs, "
		 "comma-separated, for several ('web*,db01')")
		("verbose,v", po::bool_switch(&o.render.verbose),
		 "show sources, notes and every unavailable scope every interval")
		("compact", po::bool_switch(&o.compact), "one line per interval, a header every 20 lines")
		("thresholds", po::value<std::string>(&o.thresholds_file)->value_name("FILE"),
		 "verdict thresholds file (default /etc/hwsig/thresholds.conf if present)");
	hwsigctl::add_collector_options(visible, o.collectors);
	po::options_description hidden;
	hidden.add_options()("root", po::value<std::string>(&o.root), "prefix for /proc and /sys (tests)");

	po::variables_map vars;
	if (auto done = hwsigctl::parse_command_line({"stat", visible, hidden, kExamples}, args, vars))
		return done;
	if (!std::isfinite(o.interval) || o.interval < 0.01 || o.interval > 3600)
		return hwsigctl::usage_error("stat", "--interval must be between 0.01 and 3600 seconds");
	if (vars.count("duration") && (!std::isfinite(o.duration) || o.duration <= 0))
		return hwsigctl::usage_error("stat", "--duration must be a positive number of seconds");
	if (vars.count("count") && o.count_arg < 1)
		return hwsigctl::usage_error("stat", "--count must be at least 1");
	if (vars.count("count"))
		o.count = static_cast<unsigned long>(o.count_arg);
	if (o.format != "table" && o.format != "json")
		return hwsigctl::usage_error("stat", "--format must be 'table' or 'json', not '" + o.format + "'");
	// A run shorter than one interval is one interval of that length.
	if (vars.count("duration") && o.duration < o.interval) {
		if (o.duration < 0.01)
			return hwsigctl::usage_error("stat", "--duration must be at least 0.01 seconds");
		o.interval = o.duration;
	}
	if (vars.count("duration") && !vars.count("count"))
		o.count = static_cast<unsigned long>(std::max(1.0, std::round(o.duration / o.interval)));
	o.json = o.format == "json";
	if (o.json && o.compact)
		return hwsigctl::usage_error("stat", "--compact is a table form: not with --format json");
	if (vars.count("vm")) {
		auto f = hwsig::VmNameFilter::parse(o.vm);
		if (!f)
			return hwsigctl::usage_error("stat", "--vm needs a VM name, or globs, comma-separated, none empty "
						     "('web*,db01'), not '" + o.vm + "'");
		// One exact name keeps the one-VM view (it says when the VM is gone).
		if (f->one_name())
			o.render.vm = o.vm;
		else
			o.render.vm_filter = std::move(*f);
	} else {
		o.render.table_vms = kTableVms;
	}
	if (vars.count("thresholds") && o.thresholds_file.empty())
		return hwsigctl::usage_error("stat", "--thresholds needs a file name");
	if (auto bad = load_thresholds(o, vars.count("thresholds") > 0))
		return bad;
	o.render.color = !o.json && want_color();
	return std::nullopt;
}

bool has_vm(const hwsigctl::SnapshotFeed &sampler, const hwsig::VmNameFilter &filter)
{
	for (const auto &v : sampler.vms())
		if (filter.matches(v.name))
			return true;
	return false;
}

// Under --vm: once the VM's QEMU has exited (the VM list is rediscovered
// only every few seconds: look at the process), say so instead of
// showing no or zero values for it.
void check_vm_gone(const hwsigctl::SnapshotFeed &sampler, StatOptions &o, int pid)
{
	if (o.render.vm.empty() || !o.render.vm_gone.empty())
		return;
	bool listed = false;
	for (const auto &v : sampler.vms())
		listed = listed || (v.name == o.render.vm && v.pid == pid);
	if (!listed || !hwsig::process_alive(o.root, pid))
		o.render.vm_gone = "its QEMU (pid " + std::to_string(pid) + ") exited";
}

int vm_pid(const hwsigctl::SnapshotFeed &sampler, const std::string &name)
{
	for (const auto &v : sampler.vms())
		if (v.name == name)
			return v.pid;
	return 0;
}

// Prints an interval every o.interval until o.count or Ctrl-C; returns
// how many it printed, prev the last snapshot taken.
unsigned long interval_loop(hwsigctl::SnapshotFeed &sampler, const std::vector<std::string> &claimed, StatOptions &o,
			    hwsig::Snapshot &prev, hwsig::RunStart &run, int pid)
{
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	unsigned long done = 0;
	while (!hwsigctl::stop_requested() && (o.count == 0 || done < o.count)) {
		deadline = hwsigctl::deadline_after(deadline, o.interval);
		if (!hwsigctl::sleep_until(deadline))
			break;
		hwsig::Snapshot cur = sampler.take();
		run.observe(cur);
		check_vm_gone(sampler, o, pid);
		auto iv = hwsig::derive(prev, cur, claimed);
		++done;
		o.render.title = "interval " + std::to_string(done);
		print_interval(iv, o);
		prev = std::move(cur);
	}
	return done;
}

} // namespace

namespace hwsigctl {

static int cmd_stat_run(const std::vector<std::string> &args)
{
	StatOptions o;
	if (auto done = parse_stat_options(args, o))
		return *done;

	FeedOptions feed = feed_options(o.collectors, o.root);
	std::unique_ptr<SnapshotFeed> source;
	try {
		source = open_feed(feed);
	} catch (const hwsig::Error &e) {
		std::fprintf(stderr, "hwsigctl stat: %s\n", e.what());
		return 1;
	}
	SnapshotFeed &sampler = *source;
	if (o.render.verbose)
		std::fprintf(stderr, "hwsigctl stat: snapshots from %s\n", sampler.origin().c_str());
	const auto claimed = sampler.claimed_ids();

	install_stop_handlers();

	// Sources set up lazily (BPF load and attach, perf_event_open) on their
	// first collect, which can take most of a second: a warm-up snapshot
	// keeps that out of the first interval.
	(void)sampler.take();
	hwsig::Snapshot first = sampler.take();
	if (!o.vm.empty() && !has_vm(sampler, *hwsig::VmNameFilter::parse(o.vm))) {
		std::fprintf(stderr, "hwsigctl stat: no VM %s '%s' on this host ('hwsigctl vms' lists them)\n",
			     o.render.vm.empty() ? "matches" : "named", o.vm.c_str());
		return 1;
	}
	hwsig::Snapshot prev = first;
	// The summary's start: first, and each scope that appears later from
	// the snapshot it appears in.
	hwsig::RunStart run;
	run.observe(first);
	const int pid = o.render.vm.empty() ? 0 : vm_pid(sampler, o.render.vm);
	const unsigned long done = interval_loop(sampler, claimed, o, prev, run, pid);
	// Summary over the whole run when it adds something: several intervals
	// in a table, or an interrupted run (perf stat's Ctrl-C behaviour).
	bool interrupted = stop_requested();
	if (interrupted && done == 0) {
		prev = sampler.take();
		run.observe(prev);
	}
	if ((interrupted || (!o.json && done > 1)) && prev.mono_ns > first.mono_ns) {
		auto iv = hwsig::derive_summary(run, prev, claimed);
		o.render.title = "summary of " + std::to_string(done) + (done == 1 ? " interval" : " intervals");
		o.render.summary = true;
		print_interval(iv, o);
	}
	return 0;
}

int cmd_stat(const std::vector<std::string> &args)
{
	try {
		return cmd_stat_run(args);
	} catch (const hwsig::Error &e) {
		// The daemon went away mid-run, or its answer was malformed.
		std::fprintf(stderr, "hwsigctl stat: %s\n", e.what());
		return 1;
	}
}

} // namespace hwsigctl
