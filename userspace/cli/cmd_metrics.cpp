// hwsigctl metrics: the catalog (every metric id stat, top and the JSON
// output can show) or, with --prometheus, every family hwsigd can export.
// Both are listed from the tables the program itself uses, so they are
// true of this build whatever the documentation says.
#include <boost/program_options.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "columns.h"
#include "commands.h"
#include "hwsig/catalog.h"
#include "hwsig/docs.h"
#include "hwsig/family_listing.h"
#include "hwsig/render.h"

namespace po = boost::program_options;

namespace {

const char *kExamples =
	"output:\n"
	"  table: one metric per row: ID UNIT LAYER SOURCE DEFINITION; with\n"
	"    --prometheus one family per row: FAMILY TYPE LABELS COUNT SWITCH\n"
	"    SERIES SCALE IDS (COUNT its series with the default switches, SWITCH\n"
	"    the hwsigd key that exports it when it is off by default, SERIES the\n"
	"    raw series it exports, SCALE from its unit to the family's, IDS the\n"
	"    catalog metrics computed from it). A cpu label is exported only with\n"
	"    per-cpu = true, vm and queue of a vhost family only with per-queue\n"
	"    = true (" HWSIG_DOC("hwsigd.rst") ").\n"
	"  json: one JSON object per row per line, with each family's HELP text.\n\n"
	"examples:\n"
	"  hwsigctl metrics                         every metric id and its definition\n"
	"  hwsigctl metrics | grep '^sched\\.'       the scheduler's\n"
	"  hwsigctl metrics --prometheus            every family hwsigd can export\n"
	"  hwsigctl metrics --prometheus -f json    the same, with HELP, for tooling\n";

std::string join(const std::vector<std::string> &items)
{
	std::string out;
	for (const auto &s : items)
		out += (out.empty() ? "" : ",") + s;
	return out;
}

void print_metrics(bool json)
{
	std::vector<std::vector<std::string>> rows = {{"ID", "UNIT", "LAYER", "SOURCE", "DEFINITION"}};
	for (const auto &m : hwsig::catalog()) {
		const std::string layer(hwsig::layer_name(m.layer));
		if (json)
			std::printf("{\"id\":\"%s\",\"unit\":\"%s\",\"layer\":\"%s\",\"source\":\"%s\","
				    "\"definition\":\"%s\"}\n",
				    hwsig::json_escape(m.id).c_str(), hwsig::json_escape(m.unit).c_str(),
				    hwsig::json_escape(layer).c_str(), hwsig::json_escape(m.source).c_str(),
				    hwsig::json_escape(m.description).c_str());
		rows.push_back({m.id, m.unit, layer, m.source, m.description});
	}
	if (!json)
		std::fputs(hwsigctl::format_columns(rows).c_str(), stdout);
}

void print_families(bool json)
{
	std::vector<std::vector<std::string>> rows = {
		{"FAMILY", "TYPE", "LABELS", "COUNT", "SWITCH", "SERIES", "SCALE", "IDS"}};
	for (const auto &f : hwsig::prometheus_families()) {
		if (json)
			std::printf("{\"family\":\"%s\",\"type\":\"%s\",\"labels\":%s,\"count\":\"%s\","
				    "\"switch\":\"%s\",\"series\":\"%s\",\"scale\":\"%s\",\"ids\":%s,\"help\":\"%s\"}\n",
				    f.family.c_str(), f.type.c_str(), hwsig::json_strings(f.labels).c_str(),
				    hwsig::json_escape(hwsig::count_text(f)).c_str(), f.needs.c_str(),
				    hwsig::json_escape(f.source).c_str(), hwsig::json_escape(f.scale).c_str(),
				    hwsig::json_strings(f.ids).c_str(), hwsig::json_escape(f.help).c_str());
		rows.push_back({f.family, f.type, f.labels.empty() ? "-" : join(f.labels), hwsig::count_text(f),
				f.needs.empty() ? "-" : f.needs, f.source.empty() ? "-" : f.source,
				f.scale.empty() ? "-" : f.scale, f.ids.empty() ? "-" : join(f.ids)});
	}
	if (!json)
		std::fputs(hwsigctl::format_columns(rows).c_str(), stdout);
}

} // namespace

namespace hwsigctl {

int cmd_metrics(const std::vector<std::string> &args)
{
	std::string format = "table";
	po::options_description visible("hwsigctl metrics [options]\n\n"
					"Lists the catalog's metrics (the ids of 'hwsigctl stat', its JSON\n"
					"and the recording rules) or, with --prometheus, the families hwsigd\n"
					"exports: the tables this build of hwsig itself uses.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("prometheus", "the Prometheus families instead of the catalog")
		("format,f", po::value<std::string>(&format)->default_value("table"),
		 "table | json (one JSON object per row per line)");
	po::options_description hidden;
	po::variables_map vars;
	if (auto done = parse_command_line({"metrics", visible, hidden, kExamples}, args, vars))
		return *done;
	if (format != "table" && format != "json")
		return usage_error("metrics", "--format must be 'table' or 'json', not '" + format + "'");
	if (vars.count("prometheus"))
		print_families(format == "json");
	else
		print_metrics(format == "json");
	return 0;
}

} // namespace hwsigctl
