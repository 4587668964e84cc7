// hwsigctl stat: snapshots every --interval, prints each interval's metrics,
// and on exit (end of --count/--duration, or Ctrl-C) the summary over the
// whole run, like perf stat.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "commands.h"
#include "interrupt.h"
#include "hwsig/derive.h"
#include "hwsig/render.h"
#include "hwsig/sampler.h"

namespace po = boost::program_options;

namespace {

void print_interval(const hwsig::Interval &iv, const hwsig::RenderOptions &opt, bool json, bool summary)
{
	if (json) {
		std::string line = hwsig::render_json(iv, opt);
		if (summary)
			line.insert(1, "\"summary\":true,");
		std::printf("%s\n", line.c_str());
	} else {
		std::printf("%s\n", hwsig::render_table(iv, opt).c_str());
	}
	std::fflush(stdout);
}

const char *kExamples =
	"examples:\n"
	"  hwsigctl stat                               a table every second until Ctrl-C\n"
	"  hwsigctl stat -d 10 --interval 2            five tables, then the 10 s summary\n"
	"  hwsigctl stat --count 2 --interval 0.5 --format json\n"
	"                                              two JSON lines (schema: Documentation/output.rst)\n"
	"  hwsigctl stat --per-cpu                     add cpu:N scopes\n"
	"  hwsigctl stat --vm web01                    one VM's scopes next to the host's\n";

} // namespace

namespace hwsigctl {

int cmd_stat(const std::vector<std::string> &args)
{
	double interval = 1.0, duration = 0;
	unsigned long count = 0;
	std::string format = "table", vm, root = "/";
	bool per_cpu = false, verbose = false, no_bpf = false, no_kmod = false, no_pmu = false;

	po::options_description visible("hwsigctl stat [options]\n\n"
					"Samples every layer each interval and prints the metrics of the\n"
					"catalog (Documentation/metrics.rst); what cannot be measured here\n"
					"is listed as unavailable with the reason. Ctrl-C prints the summary\n"
					"so far.\n\noptions");
	visible.add_options()
		("help,h", "this help")
		("interval,i", po::value<double>(&interval)->default_value(1.0), "seconds between snapshots (0.01 .. 3600)")
		("duration,d", po::value<double>(&duration), "stop after this many seconds")
		("count,c", po::value<unsigned long>(&count), "stop after this many intervals")
		("format,f", po::value<std::string>(&format)->default_value("table"), "table | json (one object per line)")
		("per-cpu,A", po::bool_switch(&per_cpu), "also show cpu:N scopes")
		("vm", po::value<std::string>(&vm), "show this VM's scopes (name from 'hwsigctl vms') and the host's")
		("verbose,v", po::bool_switch(&verbose), "show sources, notes and every unavailable scope")
		("no-bpf", po::bool_switch(&no_bpf), "do not attach BPF collectors")
		("no-kmod", po::bool_switch(&no_kmod), "do not use /dev/hwsig (use perf_event_open)")
		("no-pmu", po::bool_switch(&no_pmu), "do not program hardware counters at all");
	po::options_description hidden;
	hidden.add_options()("root", po::value<std::string>(&root), "prefix for /proc and /sys (tests)");
	po::options_description all;
	all.add(visible).add(hidden);

	po::variables_map vars;
	if (!parse_command_line("stat", args, all, vars))
		return 2;
	if (vars.count("help")) {
		std::cout << visible << "\n" << kExamples;
		return 0;
	}
	if (!std::isfinite(interval) || interval < 0.01 || interval > 3600)
		return usage_error("stat", "--interval must be between 0.01 and 3600 seconds");
	if (vars.count("duration") && (!std::isfinite(duration) || duration <= 0))
		return usage_error("stat", "--duration must be a positive number of seconds");
	if (vars.count("count") && count == 0)
		return usage_error("stat", "--count must be at least 1");
	if (format != "table" && format != "json")
		return usage_error("stat", "--format must be 'table' or 'json', not '" + format + "'");
	if (vars.count("duration") && !vars.count("count"))
		count = static_cast<unsigned long>(std::max(1.0, std::round(duration / interval)));
	const bool json = format == "json";

	hwsig::RenderOptions opt;
	opt.per_cpu = per_cpu;
	opt.vm = vm;
	opt.verbose = verbose;

	hwsig::SourceOptions src;
	src.root = root;
	src.bpf = !no_bpf;
	src.kmod = !no_kmod;
	src.pmu = !no_pmu;
	hwsig::Sampler sampler(hwsig::default_sources(src), root);
	const auto claimed = sampler.claimed_ids();

	install_stop_handlers();

	// Sources set up lazily (BPF load and attach, perf_event_open) on their
	// first collect, which can take most of a second: a warm-up snapshot
	// keeps that out of the first interval.
	(void)sampler.take();
	hwsig::Snapshot first = sampler.take();
	if (!vm.empty()) {
		bool found = false;
		for (const auto &v : sampler.vms())
			found = found || v.name == vm;
		if (!found) {
			std::fprintf(stderr, "hwsigctl stat: no VM named '%s' on this host ('hwsigctl vms' lists them)\n",
				     vm.c_str());
			return 1;
		}
	}
	hwsig::Snapshot prev = first;
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	unsigned long done = 0;
	while (!stop_requested() && (count == 0 || done < count)) {
		deadline = deadline_after(deadline, interval);
		if (!sleep_until(deadline))
			break;
		hwsig::Snapshot cur = sampler.take();
		auto iv = hwsig::derive(prev, cur, claimed);
		++done;
		opt.title = "interval " + std::to_string(done);
		print_interval(iv, opt, json, false);
		prev = std::move(cur);
	}
	// Summary over the whole run when it adds something: several intervals
	// in a table, or an interrupted run (perf stat's Ctrl-C behaviour).
	bool interrupted = stop_requested();
	if (interrupted && done == 0) {
		hwsig::Snapshot cur = sampler.take();
		prev = std::move(cur);
	}
	if ((interrupted || (!json && done > 1)) && prev.mono_ns > first.mono_ns) {
		auto iv = hwsig::derive(first, prev, claimed);
		opt.title = "summary of " + std::to_string(done) + " intervals";
		print_interval(iv, opt, json, true);
	}
	return 0;
}

} // namespace hwsigctl
