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
	"  hwsigctl replay stall.hwsd --info          what the file says of its host\n";

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
	bool info = false;
	hwsig::RenderOptions render;
	po::options_description visible("hwsigctl replay FILE [options]\n\n"
					"Shows the intervals recorded in a dump ('hwsigctl dump') with\n"
					"the renderers and options of 'hwsigctl stat'.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("format,f", po::value<std::string>(&format)->default_value("table"), "table | json")
		("per-cpu,A", po::bool_switch(&render.per_cpu), "also show cpu:N scopes")
		("vm", po::value<std::string>(&render.vm), "show this VM's scopes and the host's")
		("verbose,v", po::bool_switch(&render.verbose), "show sources, notes and every unavailable scope")
		("thresholds", po::value<std::string>(&thresholds_file)->value_name("FILE"),
		 "verdict thresholds file (default: the built-in thresholds)")
		("info", po::bool_switch(&info), "print the file's host facts and trigger, not its intervals");
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
		for (const auto &[k, v] : dump.facts)
			std::printf("%s\t%s\n", k.c_str(), v.c_str());
		return 0;
	}
	if (dump.snapshots.size() < 2) {
		std::fprintf(stderr, "hwsigctl replay: %s holds %zu snapshot(s): no interval to show\n", file.c_str(),
			     dump.snapshots.size());
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
