// hwsigctl plot: a dump's intervals as an SVG timeline, one panel per
// metric, derived by the library as replay derives them.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "hwsig/dump_file.h"
#include "hwsig/fs.h"
#include "hwsig/plot.h"
#include "hwsig/render.h"
#include "hwsig/render_svg.h"

namespace po = boost::program_options;

namespace {

// After the options: what a plot shows, the defaults (from the library's
// list, so the help cannot go stale) and examples.
std::string examples()
{
	std::string ids;
	for (const auto &id : hwsig::default_plot_metrics())
		ids += (ids.empty() ? "" : ", ") + id;
	return std::string("One panel per metric on a shared time axis in seconds from the trigger\n"
			   "(a red line through every panel), with the UTC wall clock under the last\n"
			   "panel; one coloured series per scope: the host, each VM, each disk. A\n"
			   "dashed line marks the verdicts' threshold. Without --metrics: those of\n") +
	       "  " + hwsig::wrap(ids, 2, 2, 78) +
	       "\nthat have values in the dump.\n\n"
	       "examples:\n"
	       "  hwsigctl plot stall.hwsd -o stall.svg        the default panels\n"
	       "  hwsigctl plot stall.hwsd -o - --vm web01     the host and one VM, to stdout\n"
	       "  hwsigctl plot stall.hwsd -o io.svg --metrics io.latency_p99_us,io.iops_read\n";
}

// "a,b" "c" -> a, b, c (the option may be given several times).
std::vector<std::string> split_ids(const std::vector<std::string> &values)
{
	std::vector<std::string> ids;
	for (const auto &v : values) {
		std::size_t start = 0;
		while (start <= v.size()) {
			const std::size_t comma = std::min(v.find(',', start), v.size());
			if (comma > start)
				ids.push_back(v.substr(start, comma - start));
			start = comma + 1;
		}
	}
	return ids;
}

std::string base_name(const std::string &path)
{
	const auto slash = path.find_last_of('/');
	return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

namespace hwsigctl {

int cmd_plot(const std::vector<std::string> &args)
{
	std::string file, out, vm, thresholds_file;
	std::vector<std::string> metric_args;
	po::options_description visible("hwsigctl plot FILE -o OUT.svg [options]\n\n"
					"Draws the intervals recorded in a dump ('hwsigctl dump') as one\n"
					"self-contained SVG timeline to open in a browser.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("output,o", po::value<std::string>(&out)->value_name("FILE"), "the SVG file ('-': standard output)")
		("metrics,m", po::value<std::vector<std::string>>(&metric_args)->value_name("ID,..."),
		 "catalog ids, one panel each, in this order")
		("vm", po::value<std::string>(&vm)->value_name("NAME"), "of the VMs, show only this one")
		("thresholds", po::value<std::string>(&thresholds_file)->value_name("FILE"),
		 "thresholds file for the dashed lines (default: the built-in thresholds)");
	po::options_description hidden;
	hidden.add_options()("file", po::value<std::string>(&file), "the dump");
	po::positional_options_description pos;
	pos.add("file", 1);
	po::variables_map vars;
	const std::string help_tail = examples();
	if (auto done = parse_command_line({"plot", visible, hidden, help_tail.c_str(), &pos}, args, vars))
		return *done;
	if (file.empty())
		return usage_error("plot", "which dump? hwsigctl plot FILE -o OUT.svg");
	if (out.empty())
		return usage_error("plot", "where to? -o OUT.svg (or -o - for standard output)");

	hwsig::Thresholds thresholds;
	if (!thresholds_file.empty())
		if (auto bad = load_thresholds("plot", thresholds_file, false, thresholds))
			return *bad;
	hwsig::DumpContents dump;
	try {
		dump = hwsig::read_dump_file(file);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hwsigctl plot: %s\n", e.what());
		return 1;
	}
	if (dump.snapshots.size() < 2) {
		std::fprintf(stderr, "hwsigctl plot: %s holds %zu snapshot(s): no interval to draw\n", file.c_str(),
			     dump.snapshots.size());
		return 1;
	}
	hwsig::PlotRequest req;
	req.metrics = split_ids(metric_args);
	req.vm = vm;
	// The file's name, not its path: the same dump plots to the same bytes
	// wherever it lies.
	req.title = base_name(file);
	// Which host, briefly: the kernel's release without its build string.
	if (const std::string *host = dump.fact("hostname"))
		req.title += "  host " + *host;
	if (const std::string *kernel = dump.fact("kernel"))
		req.title += "  kernel " + kernel->substr(0, kernel->find(' '));
	req.trigger = dump.trigger;
	req.trigger_mono_ns = hwsig::trigger_time_ns(dump);
	req.thresholds = &thresholds;
	hwsig::Plot plot;
	try {
		plot = hwsig::build_plot(hwsig::plot_intervals(dump), req);
	} catch (const hwsig::PlotError &e) {
		std::fprintf(stderr, "hwsigctl plot: %s: %s\n", file.c_str(), e.what());
		return 1;
	}
	const std::string svg = hwsig::render_svg(plot);
	if (out == "-") {
		if (std::fwrite(svg.data(), 1, svg.size(), stdout) != svg.size() || std::fflush(stdout) != 0) {
			std::fprintf(stderr, "hwsigctl plot: writing to standard output: %s\n", std::strerror(errno));
			return 1;
		}
		return 0;
	}
	try {
		hwsig::write_file_atomically(out, svg, 0644);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hwsigctl plot: %s\n", e.what());
		return 1;
	}
	std::fprintf(stderr, "hwsigctl plot: %s written (%zu panels)\n", out.c_str(), plot.panels.size());
	return 0;
}

} // namespace hwsigctl
