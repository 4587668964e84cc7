// hwsigctl replay: a dump's intervals, derived and rendered exactly as
// 'hwsigctl stat' derives and renders live ones.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "dump_window.h"
#include "stat_print.h"
#include "hwsig/derive.h"
#include "hwsig/dump_file.h"
#include "hwsig/dump_info.h"
#include "hwsig/dump_ticks.h"
#include "hwsig/render.h"
#include "hwsig/render_stat.h"

namespace po = boost::program_options;

namespace {

const char *kExamples =
	"Each pair of consecutive snapshots in the file is one interval. --per-cpu\n"
	"shows cpu:N scopes only if hwsigd kept them (its per-cpu option).\n\n"
	"examples:\n"
	"  hwsigctl replay stall.hwsd                 tables, one per interval\n"
	"  hwsigctl replay stall.hwsd --format json   JSON lines, as 'stat --format json'\n"
	"  hwsigctl replay stall.hwsd --compact       one line per interval, as 'stat --compact'\n"
	"  hwsigctl replay stall.hwsd --vm web01      one VM's scopes and the host's\n"
	"  hwsigctl replay stall.hwsd --since -30s    from 30 s before the trigger on\n"
	"  hwsigctl replay stall.hwsd --since 18:03:00 --until 18:04:00   a UTC minute\n"
	"  hwsigctl replay stall.hwsd --info          what the file says of its host\n"
	"  hwsigctl replay stall.hwsd --ticks         hwsig.ko's ring records, per tick and CPU\n"
	"  hwsigctl replay stall.hwsd --ticks --cpu 3 --format json\n\n"
	"--ticks: one row per ring record: seq, t_s (seconds from the trigger's\n"
	"snapshot; negative before it), dt_ms, then each configured event's count\n"
	"over that tick (named as configured; scaled when multiplexed), and ipc\n"
	"when the events include cycles and instructions. '-- gap' lines show\n"
	"records lost (overwritten before the dump read them) and ticks without\n"
	"a record. A dump written without hwsigd holds only these.\n\n"
	"--since/--until TIME: the intervals that overlap the window. TIME is an\n"
	"offset from the trigger (-90s, +30s, -2m; the sign is required) or the UTC\n"
	"wall clock (18:03:20 on the trigger's day, 2026-11-28 18:03:20, as --info\n"
	"prints; 18:03:20.25 for a fraction). Intervals keep their numbers in the\n"
	"whole file.\n";

bool has_vm(const hwsig::DumpContents &d, const std::string &name)
{
	for (const auto &s : d.snapshots)
		for (const auto &vm : s.vms)
			if (vm.name == name)
				return true;
	return false;
}

struct ReplayOptions {
	std::string file, format = "table", thresholds_file;
	std::string since, until; // TIME, as given
	bool info = false, ticks = false, compact = false;
	std::optional<std::uint32_t> tick_cpu; // --cpu N
	hwsig::RenderOptions render;
};

// Fills o from args; returns the exit code when the command ends here
// (--help, a bad command line).
std::optional<int> parse_replay_options(const std::vector<std::string> &args, ReplayOptions &o)
{
	using hwsigctl::usage_error;
	std::uint32_t tick_cpu = 0;
	po::options_description visible("hwsigctl replay FILE [options]\n\n"
					"Shows the intervals recorded in a dump ('hwsigctl dump') with\n"
					"the renderers and options of 'hwsigctl stat', or with --ticks\n"
					"the records of hwsig.ko's rings, tick by tick.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("format,f", po::value<std::string>(&o.format)->default_value("table"), "table | json")
		("compact", po::bool_switch(&o.compact), "one line per interval, as 'stat --compact'")
		("per-cpu,A", po::bool_switch(&o.render.per_cpu), "also show cpu:N scopes")
		("vm", po::value<std::string>(&o.render.vm), "show this VM's scopes and the host's")
		("verbose,v", po::bool_switch(&o.render.verbose), "show sources, notes and every unavailable scope")
		("since", po::value<std::string>(&o.since)->value_name("TIME"),
		 "only the intervals from TIME on (an offset from the trigger or a UTC time)")
		("until", po::value<std::string>(&o.until)->value_name("TIME"), "only the intervals up to TIME")
		("thresholds", po::value<std::string>(&o.thresholds_file)->value_name("FILE"),
		 "verdict thresholds file (default: the built-in thresholds)")
		("info", po::bool_switch(&o.info), "print the file's host facts, trigger, PMU plan and rings, not its intervals")
		("ticks", po::bool_switch(&o.ticks), "show hwsig.ko's ring records at tick resolution instead of the intervals")
		("cpu", po::value<std::uint32_t>(&tick_cpu)->value_name("N"), "with --ticks: only CPU N");
	po::options_description hidden;
	hidden.add_options()("file", po::value<std::string>(&o.file), "the dump");
	po::positional_options_description pos;
	pos.add("file", 1);
	po::variables_map vars;
	if (auto done = hwsigctl::parse_command_line({"replay", visible, hidden, kExamples, &pos}, args, vars))
		return done;
	if (vars.count("cpu"))
		o.tick_cpu = tick_cpu;
	if (o.file.empty())
		return usage_error("replay", "which dump? hwsigctl replay FILE");
	if (o.format != "table" && o.format != "json")
		return usage_error("replay", "--format must be 'table' or 'json', not '" + o.format + "'");
	if (o.compact && (o.format == "json" || o.info || o.ticks))
		return usage_error("replay", "--compact is a table form of the intervals: not with --format json, --info "
					     "or --ticks");
	if ((!o.since.empty() || !o.until.empty()) && (o.info || o.ticks))
		return usage_error("replay", "--since and --until select intervals: not with --info or --ticks");
	if (o.tick_cpu && !o.ticks)
		return usage_error("replay", "--cpu is for --ticks (the intervals' cpu:N scopes: --per-cpu)");
	if (o.ticks && (o.render.per_cpu || !o.render.vm.empty() || !o.thresholds_file.empty() || o.info))
		return usage_error("replay", "--ticks shows ring records: --per-cpu, --vm, --thresholds and --info are not for it");
	return std::nullopt;
}

// --ticks: the ring records, every CPU's or one.
int replay_ticks(const hwsig::DumpContents &dump, const ReplayOptions &o)
{
	if (!dump.rings) {
		std::fprintf(stderr, "hwsigctl replay: %s holds no ring records for --ticks: %s\n", o.file.c_str(),
			     !dump.rings_absent.empty() ? dump.rings_absent.c_str()
			     : dump.version < 2	     ? "a version 1 dump (written before rings were dumped)"
						     : "the dump does not say why");
		return 1;
	}
	hwsig::TickOptions t;
	t.json = o.format == "json";
	t.triggered_mono_ns = dump.triggered_mono_ns;
	if (o.tick_cpu) {
		if (!dump.rings->cpu(*o.tick_cpu)) {
			std::fprintf(stderr, "hwsigctl replay: %s has no ring of cpu %u (it has cpu %s)\n", o.file.c_str(),
				     *o.tick_cpu, hwsig::dump_ring_cpus(*dump.rings).c_str());
			return 1;
		}
		t.cpu = *o.tick_cpu;
	}
	std::fputs(hwsig::render_ticks(*dump.rings, t).c_str(), stdout);
	return 0;
}

// "-120.0 s to +3.0 s from the trigger (18:01:49 to 18:03:52 UTC)".
std::string span_of(const hwsig::DumpContents &dump, const hwsigctl::DumpClock &clock)
{
	const auto at = [&](const hwsig::SharedSnapshot &s) {
		return (static_cast<double>(s.snapshot.mono_ns) - static_cast<double>(clock.trigger_mono_ns)) / 1e9;
	};
	const double first = at(dump.snapshots.front()), last = at(dump.snapshots.back());
	char buf[160];
	std::snprintf(buf, sizeof(buf), "%+.1f s to %+.1f s from the trigger", first, last);
	std::string out = buf;
	if (clock.trigger_realtime_ns) {
		const auto wall = [&](double t) {
			const auto secs = static_cast<std::time_t>(
				std::llround(static_cast<double>(clock.trigger_realtime_ns) / 1e9 + t));
			struct tm tm {};
			char w[32];
			if (!gmtime_r(&secs, &tm) || !std::strftime(w, sizeof(w), "%H:%M:%S", &tm))
				return std::string("?");
			return std::string(w);
		};
		out += " (" + wall(first) + " to " + wall(last) + " UTC)";
	}
	return out;
}

// --since/--until as seconds from the trigger; nullopt after saying what
// is wrong with them (a usage error: exit 2).
std::optional<hwsigctl::DumpWindow> window_of(const hwsigctl::DumpClock &clock, const ReplayOptions &o)
{
	hwsigctl::DumpWindow w;
	for (auto [text, bound, name] : {std::tuple{&o.since, &w.since_s, "--since"},
					 std::tuple{&o.until, &w.until_s, "--until"}}) {
		if (text->empty())
			continue;
		std::string error;
		auto t = hwsigctl::parse_dump_time(*text, clock, &error);
		if (!t) {
			hwsigctl::usage_error("replay", std::string(name) + ": " + error);
			return std::nullopt;
		}
		*bound = *t;
	}
	if (w.since_s >= w.until_s) {
		hwsigctl::usage_error("replay", "--since must come before --until");
		return std::nullopt;
	}
	return w;
}

// Each pair of consecutive snapshots, derived and rendered as stat would.
int replay_intervals(const hwsig::DumpContents &dump, ReplayOptions &o)
{
	if (dump.snapshots.size() < 2) {
		std::fprintf(stderr, "hwsigctl replay: %s holds %zu snapshot(s): no interval to show%s\n", o.file.c_str(),
			     dump.snapshots.size(),
			     dump.rings ? " (it holds hwsig.ko's ring records: hwsigctl replay FILE --ticks)" : "");
		return 1;
	}
	if (!o.render.vm.empty() && !has_vm(dump, o.render.vm)) {
		std::fprintf(stderr, "hwsigctl replay: no VM named '%s' in %s\n", o.render.vm.c_str(), o.file.c_str());
		return 1;
	}
	const hwsigctl::DumpClock clock = hwsigctl::dump_clock(dump);
	const auto window = window_of(clock, o);
	if (!window)
		return 2;
	const auto shown = hwsigctl::intervals_in(dump, clock, *window);
	if (shown.empty()) {
		std::fprintf(stderr, "hwsigctl replay: no interval of %s lies in that window: it covers %s\n",
			     o.file.c_str(), span_of(dump, clock).c_str());
		return 1;
	}
	hwsig::Thresholds thresholds;
	if (!o.thresholds_file.empty())
		if (auto bad = hwsigctl::load_thresholds("replay", o.thresholds_file, false, thresholds))
			return *bad;
	const auto form = o.format == "json" ? hwsig::StatForm::Json
			  : o.compact		? hwsig::StatForm::Compact
						: hwsig::StatForm::Table;
	hwsig::UnavailableSaid said;
	o.render.said = &said;
	unsigned compact_lines = 0;
	o.render.compact_lines = &compact_lines;
	for (const std::size_t i : shown) {
		const auto &prev = dump.snapshots[i - 1];
		const auto &cur = dump.snapshots[i];
		auto iv = hwsig::derive(prev.snapshot, cur.snapshot, cur.claimed_ids);
		o.render.title = "interval " + std::to_string(i) + " of " + std::to_string(dump.snapshots.size() - 1);
		hwsigctl::print_stat_interval(iv, o.render, thresholds, form);
	}
	return 0;
}

} // namespace

namespace hwsigctl {

int cmd_replay(const std::vector<std::string> &args)
{
	ReplayOptions o;
	if (auto done = parse_replay_options(args, o))
		return *done;
	hwsig::DumpContents dump;
	try {
		dump = hwsig::read_dump_file(o.file);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hwsigctl replay: %s\n", e.what());
		return 1;
	}
	if (o.info) {
		std::fputs(hwsig::render_dump_info(dump).c_str(), stdout);
		return 0;
	}
	return o.ticks ? replay_ticks(dump, o) : replay_intervals(dump, o);
}

} // namespace hwsigctl
