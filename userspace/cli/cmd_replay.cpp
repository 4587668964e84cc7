// hwsigctl replay: a dump's intervals, derived and rendered exactly as
// 'hwsigctl stat' derives and renders live ones.
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "hwsig/derive.h"
#include "hwsig/dump_file.h"
#include "hwsig/dump_ticks.h"
#include "hwsig/fs.h"
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
	"  hwsigctl replay stall.hwsd --vm web01      one VM's scopes and the host's\n"
	"  hwsigctl replay stall.hwsd --info          what the file says of its host\n"
	"  hwsigctl replay stall.hwsd --ticks         hwsig.ko's ring records, per tick and CPU\n"
	"  hwsigctl replay stall.hwsd --ticks --cpu 3 --format json\n\n"
	"--ticks: one row per ring record: seq, t_s (seconds from the trigger's\n"
	"snapshot; negative before it), dt_ms, then each configured event's count\n"
	"over that tick (named as configured; scaled when multiplexed), and ipc\n"
	"when the events include cycles and instructions. '-- gap' lines show\n"
	"records lost (overwritten before the dump read them) and ticks without\n"
	"a record. A dump written without hwsigd holds only these.\n";

std::string cpu_list(const hwsig::DumpRings &r)
{
	std::string s;
	for (const auto &c : r.cpus)
		s += (s.empty() ? "" : ", ") + std::to_string(c.cpu);
	return s.empty() ? "none" : s;
}

bool has_vm(const hwsig::DumpContents &d, const std::string &name)
{
	for (const auto &s : d.snapshots)
		for (const auto &vm : s.vms)
			if (vm.name == name)
				return true;
	return false;
}

} // namespace

namespace hwsigctl {

int cmd_replay(const std::vector<std::string> &args)
{
	std::string file, format = "table", thresholds_file;
	bool info = false, ticks = false;
	std::uint32_t tick_cpu = 0;
	hwsig::RenderOptions render;
	po::options_description visible("hwsigctl replay FILE [options]\n\n"
					"Shows the intervals recorded in a dump ('hwsigctl dump') with\n"
					"the renderers and options of 'hwsigctl stat', or with --ticks\n"
					"the records of hwsig.ko's rings, tick by tick.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("format,f", po::value<std::string>(&format)->default_value("table"), "table | json")
		("per-cpu,A", po::bool_switch(&render.per_cpu), "also show cpu:N scopes")
		("vm", po::value<std::string>(&render.vm), "show this VM's scopes and the host's")
		("verbose,v", po::bool_switch(&render.verbose), "show sources, notes and every unavailable scope")
		("thresholds", po::value<std::string>(&thresholds_file)->value_name("FILE"),
		 "verdict thresholds file (default: the built-in thresholds)")
		("info", po::bool_switch(&info), "print the file's host facts, trigger, PMU plan and rings, not its intervals")
		("ticks", po::bool_switch(&ticks), "show hwsig.ko's ring records at tick resolution instead of the intervals")
		("cpu", po::value<std::uint32_t>(&tick_cpu)->value_name("N"), "with --ticks: only CPU N");
	po::options_description hidden;
	hidden.add_options()("file", po::value<std::string>(&file), "the dump");
	po::positional_options_description pos;
	pos.add("file", 1);
	po::variables_map vars;
	if (auto done = parse_command_line({"replay", visible, hidden, kExamples, &pos}, args, vars))
		return *done;
	if (file.empty())
		return usage_error("replay", "which dump? hwsigctl replay FILE");
	if (format != "table" && format != "json")
		return usage_error("replay", "--format must be 'table' or 'json', not '" + format + "'");
	if (vars.count("cpu") && !ticks)
		return usage_error("replay", "--cpu is for --ticks (the intervals' cpu:N scopes: --per-cpu)");
	if (ticks && (render.per_cpu || !render.vm.empty() || !thresholds_file.empty() || info))
		return usage_error("replay", "--ticks shows ring records: --per-cpu, --vm, --thresholds and --info are not for it");
	hwsig::DumpContents dump;
	try {
		dump = hwsig::read_dump_file(file);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hwsigctl replay: %s\n", e.what());
		return 1;
	}
	if (info) {
		std::printf("format\t%d\ntrigger\t%s\ncreated_ns\t%llu\nsnapshots\t%zu\n", dump.version,
			    dump.trigger.c_str(), static_cast<unsigned long long>(dump.created_ns), dump.snapshots.size());
		if (!dump.snapshots.empty())
			std::printf("first_snapshot_mono_ns\t%llu\nlast_snapshot_mono_ns\t%llu\n",
				    static_cast<unsigned long long>(dump.snapshots.front().snapshot.mono_ns),
				    static_cast<unsigned long long>(dump.snapshots.back().snapshot.mono_ns));
		if (dump.triggered_mono_ns)
			std::printf("triggered_mono_ns\t%llu\n", static_cast<unsigned long long>(*dump.triggered_mono_ns));
		for (const auto &[k, v] : dump.facts)
			std::printf("%s\t%s\n", k.c_str(), v.c_str());
		for (const auto &p : dump.pmu_plan)
			std::printf("pmu_plan\t%s\t%s\t%s\t%s\n", p.series.c_str(), p.event.c_str(), p.pmu.c_str(),
				    p.state.c_str());
		if (dump.rings) {
			const auto &r = *dump.rings;
			std::uint64_t records = 0, lost = 0, head = 0;
			for (const auto &c : r.cpus) {
				records += c.records.size();
				lost += c.lost;
				head += c.head;
			}
			std::printf("rings\tconfiguration %llu, every %llu ns, %u records per ring, %s\n",
				    static_cast<unsigned long long>(r.generation), static_cast<unsigned long long>(r.interval_ns),
				    r.ring_records, r.running ? "running" : "stopped");
			for (std::size_t i = 0; i < r.events.size(); ++i)
				std::printf("ring_event\t%zu\t%s\t%s\t%s\n", i, r.events[i].name.c_str(), r.events[i].pmu.c_str(),
					    r.events[i].state.c_str());
			std::printf("ring_records\t%llu records of %zu CPUs (%s), %llu lost of %llu written\n",
				    static_cast<unsigned long long>(records), r.cpus.size(), cpu_list(r).c_str(),
				    static_cast<unsigned long long>(lost), static_cast<unsigned long long>(head));
			if (r.status_written && r.status_overwritten)
				std::printf("module_status\t%llu written, %llu overwritten\n",
					    static_cast<unsigned long long>(*r.status_written),
					    static_cast<unsigned long long>(*r.status_overwritten));
		} else {
			std::printf("rings\tnone: %s\n",
				    dump.rings_absent.empty() ? "this dump does not hold them" : dump.rings_absent.c_str());
		}
		return 0;
	}
	if (ticks) {
		if (!dump.rings) {
			std::fprintf(stderr, "hwsigctl replay: %s holds no ring records for --ticks: %s\n", file.c_str(),
				     !dump.rings_absent.empty() ? dump.rings_absent.c_str()
				     : dump.version < 2	     ? "a version 1 dump (written before rings were dumped)"
							     : "the dump does not say why");
			return 1;
		}
		hwsig::TickOptions t;
		t.json = format == "json";
		t.triggered_mono_ns = dump.triggered_mono_ns;
		if (vars.count("cpu")) {
			if (!dump.rings->cpu(tick_cpu)) {
				std::fprintf(stderr, "hwsigctl replay: %s has no ring of cpu %u (it has cpu %s)\n", file.c_str(),
					     tick_cpu, cpu_list(*dump.rings).c_str());
				return 1;
			}
			t.cpu = tick_cpu;
		}
		std::fputs(hwsig::render_ticks(*dump.rings, t).c_str(), stdout);
		return 0;
	}
	if (dump.snapshots.size() < 2) {
		std::fprintf(stderr, "hwsigctl replay: %s holds %zu snapshot(s): no interval to show%s\n", file.c_str(),
			     dump.snapshots.size(),
			     dump.rings ? " (it holds hwsig.ko's ring records: hwsigctl replay FILE --ticks)" : "");
		return 1;
	}
	if (!render.vm.empty() && !has_vm(dump, render.vm)) {
		std::fprintf(stderr, "hwsigctl replay: no VM named '%s' in %s\n", render.vm.c_str(), file.c_str());
		return 1;
	}
	hwsig::Thresholds thresholds;
	if (!thresholds_file.empty()) {
		auto text = hwsig::read_file(thresholds_file);
		if (!text.data) {
			std::fprintf(stderr, "hwsigctl replay: cannot read thresholds file %s: %s\n", thresholds_file.c_str(),
				     std::strerror(text.err));
			return 2;
		}
		try {
			thresholds = hwsig::parse_thresholds(*text.data, thresholds_file);
		} catch (const std::exception &e) {
			std::fprintf(stderr, "hwsigctl replay: %s\n", e.what());
			return 2;
		}
	}
	hwsig::UnavailableSaid said;
	render.said = &said;
	for (std::size_t i = 1; i < dump.snapshots.size(); ++i) {
		const auto &prev = dump.snapshots[i - 1];
		const auto &cur = dump.snapshots[i];
		auto iv = hwsig::derive(prev.snapshot, cur.snapshot, cur.claimed_ids);
		render.title = "interval " + std::to_string(i) + " of " + std::to_string(dump.snapshots.size() - 1);
		std::fputs(hwsig::render_stat_interval(iv, render, thresholds,
						       format == "json" ? hwsig::StatForm::Json : hwsig::StatForm::Table)
				   .c_str(),
			   stdout);
	}
	return 0;
}

} // namespace hwsigctl
