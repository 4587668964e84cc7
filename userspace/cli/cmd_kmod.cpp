// hwsigctl kmod info|status|start|stop|records: control and inspection of
// hwsig.ko over generic netlink and its /dev/hwsig rings.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "commands.h"
#include "snapshot_feed.h"
#include "hwsig/daemon_client.h"
#include "hwsig/docs.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/kmod.h"
#include "hwsig/multiplex.h"
#include "hwsig/perf_open.h"
#include "hwsig/pmu_events.h"
#include "hwsig/source_pmu.h"

namespace po = boost::program_options;

namespace {

const char *kUsage = "hwsigctl kmod info|status|start|stop|records [options]\n\n"
		     "  info      module and reader ABI versions, ring geometry, limits, configured events\n"
		     "  status    running state, sampling cost and latency, ticks overrun/skipped, records written/overwritten, per-event state\n"
		     "  start     configure the events and start sampling\n"
		     "  stop      stop sampling (the configuration and rings stay)\n"
		     "  records   read the rings of /dev/hwsig once and print the newest records\n";

const char *kExamples =
	"examples:\n"
	"  hwsigctl kmod info\n"
	"  hwsigctl kmod start --interval 0.01 --ring-records 4096\n"
	"  hwsigctl kmod start --events task-clock,context-switches,cpu/event=0x3c/\n"
	"  hwsigctl kmod status --per-cpu\n"
	"  hwsigctl kmod records --last 3\n";

std::string hex(std::uint64_t v)
{
	char b[24];
	std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
	return b;
}

std::string seconds(std::uint64_t ns)
{
	char b[32];
	if (ns < 1000000)
		std::snprintf(b, sizeof(b), "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		std::snprintf(b, sizeof(b), "%.3g ms", ns / 1e6);
	else
		std::snprintf(b, sizeof(b), "%.3g s", ns / 1e9);
	return b;
}

std::string cpu_text(std::int32_t cpu)
{
	return cpu == HWSIG_EVENT_ALL_CPUS ? "all" : std::to_string(cpu);
}

// What to do about a module that is not loaded: load it when the running
// kernel has one (modules.dep lists it), else why it has none.
std::string load_hint(const std::string &root)
{
	std::string release;
	if (auto r = hwsig::read_trimmed(hwsig::join_path(root, "/proc/sys/kernel/osrelease")))
		release = *r;
	const std::string modules = hwsig::join_path(root, "/lib/modules/" + release);
	const char *load = "load the module first (modprobe hwsig, or insmod hwsig.ko)";
	if (release.empty())
		return load;
	if (auto dep = hwsig::read_file(modules + "/modules.dep", 64u << 20).data;
	    dep && dep->find("/hwsig.ko") != std::string::npos)
		return load;
	if (!hwsig::path_exists(modules + "/build"))
		return "kernel " + release + " has no hwsig.ko: DKMS cannot build it without the kernel's headers (apt "
		       "install linux-headers-" + release + ", then dkms autoinstall; " HWSIG_DOC("admin-guide.rst") ")";
	return "kernel " + release + " has no hwsig.ko ('dkms status hwsig' says why; make dkms-install from a "
	       "source tree), or insmod a hwsig.ko built for it";
}

int fail(const std::string &sub, const hwsig::Error &e, const std::string &root)
{
	std::fprintf(stderr, "hwsigctl kmod %s: %s\n", sub.c_str(), e.what());
	// records opens /dev/hwsig directly: ENOENT there is the module missing too.
	if (dynamic_cast<const hwsig::KmodNotLoaded *>(&e) || (sub == "records" && e.err() == ENOENT))
		std::fprintf(stderr, "hint: %s\n", load_hint(root).c_str());
	else if (e.err() == EPERM)
		// kmod/netlink.c checks perfmon_capable() for every command.
		std::fprintf(stderr, "hint: hwsig's netlink commands need CAP_PERFMON or CAP_SYS_ADMIN (run as root)\n");
	return 1;
}

void print_events(const std::vector<hwsig::KmodEvent> &events)
{
	if (events.empty()) {
		std::printf("events:          none configured\n");
		return;
	}
	std::printf("events:          %zu\n", events.size());
	std::printf("  %-3s %-28s %6s %-20s %-10s %-10s %s\n", "#", "name", "type", "config", "config1", "config2",
		    "cpu");
	for (std::size_t i = 0; i < events.size(); i++) {
		const auto &e = events[i];
		std::printf("  %-3zu %-28s %6u %-20s %-10s %-10s %s\n", i, e.name.c_str(), e.pmu_type,
			    hex(e.config).c_str(), hex(e.config1).c_str(), hex(e.config2).c_str(),
			    cpu_text(e.cpu).c_str());
	}
}

int do_info(const std::string &root)
{
	hwsig::KmodInfo info;
	try {
		hwsig::KmodClient client;
		info = client.get_info();
	} catch (const hwsig::Error &e) {
		return fail("info", e, root);
	}
	std::printf("module ABI:      %u (compatible back to %u)\n", info.abi_version, info.compat_version);
	std::printf("reader ABI:      %u (reads modules of ABI >= %u): compatible\n", HWSIG_ABI_VERSION,
		    HWSIG_ABI_COMPAT_VERSION);
	std::printf("state:           %s, configuration generation %llu\n", info.running ? "running" : "stopped",
		    static_cast<unsigned long long>(info.config_generation));
	std::printf("cpus:            %u online, %u ids\n", info.nr_online_cpus, info.nr_cpu_ids);
	if (info.ring_records)
		std::printf("sampling:        every %s, %u records of %u B per CPU ring, mmap %llu B\n",
			    seconds(info.sample_interval_ns).c_str(), info.ring_records, info.record_size,
			    static_cast<unsigned long long>(info.mmap_size));
	else
		std::printf("sampling:        not configured (hwsigctl kmod start)\n");
	std::printf("limits:          %u events, interval %s .. %s, ring up to %u records\n", info.max_events,
		    seconds(info.min_interval_ns).c_str(), seconds(info.max_interval_ns).c_str(),
		    info.max_ring_records);
	print_events(info.events);

	// The mapping is the other half of the ABI: check it the way the reader will.
	const std::string dev = hwsig::join_path(root, "/dev/" HWSIG_DEVICE_NAME);
	try {
		auto reader = hwsig::RingReader::open_device(dev);
		const auto &g = reader.geometry();
		if (g.configured)
			std::printf("mapping:         %s ok: %u rings of %u records, stride %llu B\n", dev.c_str(),
				    g.nr_cpu_ids, g.ring_records, static_cast<unsigned long long>(g.ring_stride));
		else
			std::printf("mapping:         %s ok: control page only (not configured)\n", dev.c_str());
	} catch (const hwsig::Error &e) {
		std::printf("mapping:         %s: %s\n", dev.c_str(), e.what());
		return 1;
	}
	return 0;
}

void print_status_counters(const hwsig::KmodStatus &st)
{
	std::printf("state:           %s, configuration generation %llu\n", st.running ? "running" : "stopped",
		    static_cast<unsigned long long>(st.config_generation));
	std::printf("sample cost:     avg %s, max %s per CPU per tick\n", seconds(st.sample_cost_avg_ns).c_str(),
		    seconds(st.sample_cost_max_ns).c_str());
	std::printf("sample latency:  avg %s, max %s per CPU per tick (timer fire -> record published)\n",
		    seconds(st.sample_latency_avg_ns).c_str(), seconds(st.sample_latency_max_ns).c_str());
	std::printf("ticks:           %llu overrun (timer late), %llu skipped (previous sample still pending)\n",
		    static_cast<unsigned long long>(st.ticks_overrun),
		    static_cast<unsigned long long>(st.ticks_skipped));
	std::printf("records:         %llu written, %llu overwritten\n",
		    static_cast<unsigned long long>(st.records_written),
		    static_cast<unsigned long long>(st.records_overwritten));
}

// One line per event: its CPUs summed, scaled for multiplexing.
void print_status_events(const hwsig::KmodInfo &info, const hwsig::KmodStatus &st)
{
	struct PerEvent {
		unsigned active = 0, total = 0;
		int first_error = 0;
		double value = 0;
		double fraction = 1.0;
	};
	std::map<std::uint32_t, PerEvent> events;
	for (const auto &e : st.entries) {
		auto &p = events[e.event_index];
		p.total++;
		if (e.error == 0) {
			p.active++;
			// Since the configuration started: one interval, scaled by
			// its own times.
			if (auto scaled = hwsig::scale_interval(e.value, e.time_enabled, e.time_running))
				p.value += *scaled;
			const double fraction = e.time_enabled ? double(e.time_running) / double(e.time_enabled) : 1.0;
			p.fraction = std::min(p.fraction, std::min(fraction, 1.0));
		} else if (!p.first_error) {
			p.first_error = -e.error;
		}
	}
	std::printf("  %-3s %-28s %-9s %-20s %-8s %s\n", "#", "event", "cpus", "value (scaled, sum)", "running",
		    "error");
	for (const auto &[idx, p] : events) {
		const std::string name = idx < info.events.size() ? info.events[idx].name : "event " + std::to_string(idx);
		char cpus[24], running[16];
		std::snprintf(cpus, sizeof(cpus), "%u/%u", p.active, p.total);
		std::snprintf(running, sizeof(running), p.active ? "%.0f%%" : "-", 100 * p.fraction);
		std::printf("  %-3u %-28s %-9s %-20.0f %-8s %s\n", idx, name.c_str(), cpus, p.value, running,
			    p.first_error ? hwsig::errno_name(p.first_error).c_str() : "");
	}
}

void print_status_per_cpu(const hwsig::KmodStatus &st)
{
	std::printf("\n  %-3s %-4s %-8s %-20s %-16s %-16s\n", "#", "cpu", "error", "value", "enabled ns",
		    "running ns");
	for (const auto &e : st.entries)
		std::printf("  %-3u %-4u %-8s %-20llu %-16llu %-16llu\n", e.event_index, e.cpu,
			    e.error ? hwsig::errno_name(-e.error).c_str() : "ok",
			    static_cast<unsigned long long>(e.value), static_cast<unsigned long long>(e.time_enabled),
			    static_cast<unsigned long long>(e.time_running));
}

int do_status(bool per_cpu, const std::string &root)
{
	hwsig::KmodInfo info;
	hwsig::KmodStatus st;
	try {
		hwsig::KmodClient client;
		info = client.get_info();
		if (info.ring_records == 0) {
			// The module refuses GET_STATUS before its first CONFIGURE;
			// that is a state to report, not an error.
			std::printf("state:           loaded, not configured (hwsigctl kmod start)\n");
			return 0;
		}
		st = client.get_status();
	} catch (const hwsig::Error &e) {
		return fail("status", e, root);
	}
	print_status_counters(st);
	print_status_events(info, st);
	if (per_cpu)
		print_status_per_cpu(st);
	return 0;
}

int do_start(const std::string &root, double interval, std::optional<std::uint32_t> ring_records,
	     const std::string &event_list, bool dry_run)
{
	hwsig::PmuDevices pmus(root);
	const auto cpu = hwsig::read_cpu_identity(root);
	hwsig::KmodConfig cfg;
	cfg.sample_interval_ns = static_cast<std::uint64_t>(std::llround(interval * 1e9));
	cfg.ring_records = ring_records;
	// Said once the configuration is shown or accepted, never after an
	// error (the module not loaded).
	bool software = false;
	const char *kSoftware = "no core PMU on this host: sampling software events instead\n";
	try {
		if (event_list.empty()) {
			cfg.events = hwsig::default_kmod_events(pmus, cpu, &software);
		} else {
			const auto names = hwsig::split_event_list(event_list);
			for (const auto &name : names)
				if (name.empty())
					return hwsigctl::usage_error("kmod", "--events has an empty entry");
			cfg.events = hwsig::kmod_events_for(pmus, cpu, names);
		}
	} catch (const hwsig::Error &e) {
		std::fprintf(stderr, "hwsigctl kmod start: %s\n", e.what());
		return 2;
	}
	if (dry_run) {
		if (software)
			std::printf("%s", kSoftware);
		std::printf("would configure: %zu events every %s, %s per CPU ring\n", cfg.events.size(),
			    seconds(cfg.sample_interval_ns).c_str(),
			    ring_records ? (std::to_string(*ring_records) + " records").c_str()
					 : "the module's ring size (default 1024 records)");
		print_events(cfg.events);
		return 0;
	}
	try {
		hwsig::KmodClient client;
		client.configure(cfg);
		if (!client.get_info().running)
			client.start();
		auto info = client.get_info();
		if (software)
			std::printf("%s", kSoftware);
		std::printf("started: %zu events every %s, %u records per CPU ring, generation %llu\n",
			    cfg.events.size(), seconds(info.sample_interval_ns).c_str(), info.ring_records,
			    static_cast<unsigned long long>(info.config_generation));
		print_events(info.events.empty() ? cfg.events : info.events);
	} catch (const hwsig::Error &e) {
		return fail("start", e, root);
	}
	return 0;
}

int do_stop(const std::string &root)
{
	try {
		hwsig::KmodClient client;
		client.stop();
	} catch (const hwsig::Error &e) {
		return fail("stop", e, root);
	}
	std::printf("stopped\n");
	return 0;
}

// One CPU's ring: its counts, then its newest `last` records.
void print_cpu_records(hwsig::RingReader &reader, unsigned cpu, unsigned last, std::vector<hwsig_record> &recs)
{
	const auto &g = reader.geometry();
	recs.clear();
	auto st = reader.read_cpu(cpu, recs);
	if (st.accepted == 0 && st.lost == 0)
		return;
	// Counted from the oldest record present when the ring was mapped.
	std::printf("cpu %u: %llu records read, %llu overwritten before they could be read\n", cpu,
		    static_cast<unsigned long long>(st.accepted), static_cast<unsigned long long>(st.lost));
	const std::size_t from = recs.size() > last ? recs.size() - last : 0;
	for (std::size_t i = from; i < recs.size(); i++) {
		const auto &r = recs[i];
		std::printf("  seq %llu t %llu gen %u flags %#x valid %#x:", static_cast<unsigned long long>(r.seq),
			    static_cast<unsigned long long>(r.time_ns), r.config_generation, r.flags, r.valid_mask);
		for (unsigned e = 0; e < g.nr_events && e < HWSIG_MAX_EVENTS; e++)
			std::printf(" %llu", static_cast<unsigned long long>(r.values[e]));
		std::printf("\n");
	}
}

int do_records(const std::string &root, unsigned last)
{
	const std::string dev = hwsig::join_path(root, "/dev/" HWSIG_DEVICE_NAME);
	try {
		auto reader = hwsig::RingReader::open_device(dev, hwsig::RingReader::Start::Oldest);
		const auto &g = reader.geometry();
		if (!g.configured) {
			std::printf("%s: not configured, no rings\n", dev.c_str());
			return 0;
		}
		std::printf("generation %llu, %u events, %u records per ring\n",
			    static_cast<unsigned long long>(g.config_generation), g.nr_events, g.ring_records);
		std::vector<hwsig_record> recs;
		for (unsigned cpu = 0; cpu < g.nr_cpu_ids; cpu++)
			print_cpu_records(reader, cpu, last, recs);
	} catch (const hwsig::Error &e) {
		return fail("records", e, root);
	}
	return 0;
}

struct KmodOptions {
	std::string sub; // info | status | start | stop | records
	double interval = HWSIG_DEFAULT_INTERVAL_NS / 1e9;
	std::optional<std::uint32_t> ring_records; // start: module default when unset
	std::string events, root = "/";
	bool per_cpu = false, dry_run = false, force = false;
	unsigned last = 5;
};

// start and stop change what hwsigd samples: refused while a daemon uses
// the module, unless forced. Returns the exit code when refused.
std::optional<int> refuse_under_daemon(const KmodOptions &o)
{
	if (o.force || o.dry_run)
		return std::nullopt;
	try {
		auto client = hwsig::DaemonClient::connect_if_running(hwsigctl::daemon_socket_path());
		if (!client)
			return std::nullopt;
		auto st = client->status();
		if (!st.owns_kmod)
			return std::nullopt;
		std::fprintf(stderr,
			     "hwsigctl kmod %s: hwsigd (pid %d) samples hwsig.ko: %s it would change what the "
			     "service exports; stop hwsigd first, or pass --force\n",
			     o.sub.c_str(), st.pid, o.sub == "stop" ? "stopping" : "reconfiguring");
		return 1;
	} catch (const hwsig::Error &e) {
		// A daemon we cannot ask: refuse rather than guess.
		std::fprintf(stderr, "hwsigctl kmod %s: %s (pass --force to go ahead anyway)\n", o.sub.c_str(),
			     e.what());
		return 1;
	}
}

// Parses the options after the subcommand into o; returns the exit code
// when the command ends here (--help, a bad command line).
// The options of every kmod action, for parsing and for --help.
po::options_description kmod_options(KmodOptions &o, std::uint32_t &ring_records)
{
	po::options_description visible(std::string(kUsage) + "\noptions");
	visible.add_options()
		("help,h", "this help")
		("interval,i", po::value<double>(&o.interval), "start: seconds between samples (0.001 .. 60, default 0.1)")
		("ring-records,r", po::value<std::uint32_t>(&ring_records),
		 "start: records per CPU ring (power of two, 8 .. 65536, default 1024)")
		("events,e", po::value<std::string>(&o.events),
		 "start: comma-separated events (perf names, pmu/alias/, pmu/event=..,umask=../; an uncore "
		 "PMU's event becomes one event per CPU of its cpumask); "
		 "default: the cpu.* set, or software events where there is no core PMU")
		("dry-run", po::bool_switch(&o.dry_run), "start: print the configuration, send nothing")
		("force", po::bool_switch(&o.force), "start, stop: even while hwsigd samples the module")
		("per-cpu,A", po::bool_switch(&o.per_cpu), "status: one line per event and CPU")
		("last,n", po::value<unsigned>(&o.last), "records: newest records shown per CPU (default 5)");
	return visible;
}

std::optional<int> parse_kmod_options(const std::vector<std::string> &rest, KmodOptions &o)
{
	std::uint32_t ring_records = 0;
	po::options_description visible = kmod_options(o, ring_records);
	po::options_description hidden;
	hidden.add_options()("root", po::value<std::string>(&o.root),
			     "prefix for /sys, /dev, /proc and /lib/modules (tests)");
	po::variables_map vars;
	if (auto done = hwsigctl::parse_command_line({"kmod", visible, hidden, kExamples}, rest, vars))
		return done;
	// Each option given to a subcommand that does not take it, by name.
	struct OnlyFor {
		const char *option;
		bool given;
		std::vector<const char *> subs;
	};
	const OnlyFor only[] = {
		{"--interval", vars.count("interval") != 0, {"start"}},
		{"--ring-records", vars.count("ring-records") != 0, {"start"}},
		{"--events", vars.count("events") != 0, {"start"}},
		{"--dry-run", o.dry_run, {"start"}},
		{"--force", o.force, {"start", "stop"}},
		{"--per-cpu", o.per_cpu, {"status"}},
		{"--last", vars.count("last") != 0, {"records"}},
	};
	for (const auto &rule : only) {
		if (!rule.given || std::find(rule.subs.begin(), rule.subs.end(), o.sub) != rule.subs.end())
			continue;
		std::string which;
		for (std::size_t i = 0; i < rule.subs.size(); ++i)
			which += std::string(i ? " and " : "") + "'kmod " + rule.subs[i] + "'";
		return hwsigctl::usage_error("kmod", std::string(rule.option) + " is only for " + which +
							     ", not for 'kmod " + o.sub + "'");
	}
	if (vars.count("ring-records"))
		o.ring_records = ring_records;
	return std::nullopt;
}

// start's limits, the module's own (<linux/hwsig.h>), checked before asking it.
std::optional<int> check_start_options(const KmodOptions &o)
{
	if (!std::isfinite(o.interval) || o.interval * 1e9 < HWSIG_MIN_INTERVAL_NS ||
	    o.interval * 1e9 > HWSIG_MAX_INTERVAL_NS)
		return hwsigctl::usage_error("kmod", "--interval must be between 0.001 and 60 seconds");
	if (const auto rr = o.ring_records;
	    rr && (*rr < HWSIG_MIN_RING_RECORDS || *rr > HWSIG_MAX_RING_RECORDS || (*rr & (*rr - 1))))
		return hwsigctl::usage_error("kmod", "--ring-records must be a power of two between " +
							     std::to_string(HWSIG_MIN_RING_RECORDS) + " and " +
							     std::to_string(HWSIG_MAX_RING_RECORDS));
	return std::nullopt;
}

} // namespace

namespace hwsigctl {

int cmd_kmod(const std::vector<std::string> &args)
{
	if (args.empty() || args[0] == "--help" || args[0] == "-h") {
		KmodOptions shown;
		std::uint32_t ring_records = 0;
		std::cout << kmod_options(shown, ring_records) << "\n" << kExamples;
		return args.empty() ? 2 : 0;
	}
	KmodOptions o;
	o.sub = args[0];
	if (auto done = parse_kmod_options({args.begin() + 1, args.end()}, o))
		return *done;
	if (o.sub == "info")
		return do_info(o.root);
	if (o.sub == "status")
		return do_status(o.per_cpu, o.root);
	if (o.sub == "stop") {
		if (auto refused = refuse_under_daemon(o))
			return *refused;
		return do_stop(o.root);
	}
	if (o.sub == "records")
		return do_records(o.root, o.last);
	if (o.sub == "start") {
		if (auto bad = check_start_options(o))
			return *bad;
		if (auto refused = refuse_under_daemon(o))
			return *refused;
		return do_start(o.root, o.interval, o.ring_records, o.events, o.dry_run);
	}
	return usage_error("kmod", "unknown subcommand '" + o.sub + "' (info, status, start, stop, records)");
}

} // namespace hwsigctl
