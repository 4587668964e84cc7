// hwsigctl top: a live view of the VMs of this host, one line per VM and
// one for the host, redrawn every interval like top; who each VM waits
// behind and a verdict when one cause dominates. Keys on a terminal:
// < and > move the sort column, r reverses it, / types a filter, q quits.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "hwsig/derive.h"
#include "hwsig/docs.h"
#include "hwsig/error.h"
#include "hwsig/top_view.h"
#include "interrupt.h"
#include "snapshot_feed.h"
#include "terminal.h"

namespace po = boost::program_options;

namespace {

struct TopOptions {
	double interval = 1.0;
	long long count = 0; // 0: until q or Ctrl-C
	std::string sort = "WAIT%", format = "table", root = "/";
	bool ascending = false;
	long long rows = 0; // --rows: VM rows at most; 0: what the terminal fits (a pipe: all)
	hwsig::VmNameFilter filter;
	hwsigctl::CollectorSwitches collectors;
	const hwsig::TopColumn *sort_column = nullptr;
};

const char *kExamples =
	"examples:\n"
	"  hwsigctl top                          redraw every second; keys: < > sort, r reverse, q quit\n"
	"  hwsigctl top --sort CPUS -i 2         busiest VMs first, every 2 s\n"
	"  hwsigctl top -c 5 --format json       five JSON lines, fields in\n"
	"                                        " HWSIG_DOC("top.rst") "\n"
	"  hwsigctl top -c 1 | cat               one plain table, for a script or a ticket\n"
	"  hwsigctl top --filter 'web*,db01'     only these VMs (shell globs, comma-separated)\n"
	"  hwsigctl top -s CPUS --rows 10 -c 1   the ten busiest VMs, once\n";

std::optional<int> parse_top_options(const std::vector<std::string> &args, TopOptions &o)
{
	std::string columns, filter;
	for (const auto &c : hwsig::top_columns())
		columns += std::string(columns.empty() ? "" : " ") + c.header;
	const std::string description =
		"hwsigctl top [options]\n\n"
		      "One line per VM and one for the host, redrawn every interval: vCPUs,\n"
		      "CPUs busy, vCPU wait, run-queue p99, the top culprit of the VM's\n"
		      "run-queue waits (another VM, host processes, kernel threads, vhost\n"
		      "workers) and its share, preemptions, I/O, vhost and PMU figures where\n"
		      "measured ('-' where not), and a verdict when one cause dominates.\n"
		      "Reads hwsigd's collectors while it runs. On a terminal: < and > move\n"
		      "the sort column, r reverses it, / types a filter (Enter applies it,\n"
		      "Esc clears it), q quits; as many VMs as fit the terminal are shown and\n"
		      "a last line counts the others. Columns (" HWSIG_DOC("top.rst") "):\n  " +
		      columns + "\n\noptions";
	po::options_description visible(description);
	visible.add_options()
		("help,h", "this help")
		("interval,i", po::value<double>(&o.interval)->default_value(1.0), "seconds between refreshes (0.1 .. 3600)")
		("count,c", po::value<long long>(&o.count), "stop after this many refreshes")
		("sort,s", po::value<std::string>(&o.sort)->default_value("WAIT%"), "sort by this column (any case)")
		("asc", po::bool_switch(&o.ascending), "ascending (default: descending)")
		("rows", po::value<long long>(&o.rows)->value_name("N"),
		 "show the first N VMs (default: as many as fit the terminal; piped: all; not with json)")
		("filter", po::value<std::string>(&filter)->value_name("GLOB"),
		 "only VMs whose name matches: shell globs, comma-separated ('web*,db01')")
		("format,f", po::value<std::string>(&o.format)->default_value("table"), "table | json (one object per line)");
	hwsigctl::add_collector_options(visible, o.collectors);
	po::options_description hidden;
	hidden.add_options()("root", po::value<std::string>(&o.root), "prefix for /proc and /sys (tests)");
	po::variables_map vars;
	if (auto done = hwsigctl::parse_command_line({"top", visible, hidden, kExamples}, args, vars))
		return done;
	if (!std::isfinite(o.interval) || o.interval < 0.1 || o.interval > 3600)
		return hwsigctl::usage_error("top", "--interval must be between 0.1 and 3600 seconds");
	if (vars.count("count") && o.count < 1)
		return hwsigctl::usage_error("top", "--count must be at least 1");
	if (vars.count("rows") && o.rows < 1)
		return hwsigctl::usage_error("top", "--rows must be at least 1");
	if (vars.count("filter")) {
		auto f = hwsig::VmNameFilter::parse(filter);
		if (!f)
			return hwsigctl::usage_error("top", "--filter needs VM names or globs, comma-separated, none "
						     "empty ('web*,db01'), not '" + filter + "'");
		o.filter = std::move(*f);
	}
	if (o.format != "table" && o.format != "json")
		return hwsigctl::usage_error("top", "--format must be 'table' or 'json', not '" + o.format + "'");
	o.sort_column = hwsig::find_top_column(o.sort);
	if (!o.sort_column)
		return hwsigctl::usage_error("top", "no column '" + o.sort + "' to sort by (columns: " + columns + ")");
	return std::nullopt;
}

std::string clock_text(std::uint64_t realtime_ns)
{
	std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
	struct tm tm;
	char buf[32] = "";
	if (localtime_r(&t, &tm))
		std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
	return buf;
}

// The sort column moved by step (wrapping).
const hwsig::TopColumn *next_column(const hwsig::TopColumn *c, int step)
{
	const auto &all = hwsig::top_columns();
	const long n = static_cast<long>(all.size());
	long i = (c - all.data() + step + n) % n;
	return &all[static_cast<std::size_t>(i)];
}

class TopScreen {
public:
	TopScreen(TopOptions &o, hwsigctl::RawTerminal &term) : o_(o), term_(term) {}

	void show(const hwsig::Interval &iv, std::vector<hwsig::TopRow> rows, std::size_t vms)
	{
		iv_ = iv;
		rows_ = std::move(rows);
		vms_ = vms;
		draw();
	}

	// A key: true when it asks to quit.
	bool key(char c)
	{
		if (typing_)
			return type(c);
		if (c == 'q' || c == 'Q')
			return true;
		if (c == '/') {
			typing_ = true;
			typed_.clear();
		} else if (c == '<' || c == ',')
			o_.sort_column = next_column(o_.sort_column, -1);
		else if (c == '>' || c == '.')
			o_.sort_column = next_column(o_.sort_column, 1);
		else if (c == 'r' || c == 'R')
			o_.ascending = !o_.ascending;
		else
			return false;
		redraw();
		return false;
	}

private:
	static constexpr char kEscape = 0x1b, kBackspace = 0x7f, kCtrlH = 0x08;

	// A key of the filter being typed after '/': Enter applies it (empty:
	// no filter), Esc drops it and any filter, Backspace erases.
	bool type(char c)
	{
		if (c == '\n' || c == '\r') {
			typing_ = false;
			complaint_.clear();
			if (typed_.empty()) {
				o_.filter = {};
			} else if (auto f = hwsig::VmNameFilter::parse(typed_)) {
				o_.filter = std::move(*f);
			} else {
				complaint_ = "not a filter: '" + typed_ + "' (globs, comma-separated, none empty)";
			}
		} else if (c == kEscape) {
			typing_ = false;
			o_.filter = {};
			complaint_.clear();
		} else if (c == kBackspace || c == kCtrlH) {
			if (!typed_.empty())
				typed_.pop_back();
		} else if (static_cast<unsigned char>(c) >= 0x20) {
			typed_ += c;
		}
		redraw();
		return false;
	}

	void redraw()
	{
		if (!rows_.empty())
			draw();
	}

	std::string footer() const
	{
		if (typing_)
			return "filter (globs, comma-separated; Enter applies, Esc clears): " + typed_;
		std::string keys = "keys: < > sort column  r reverse  / filter  q quit";
		if (!complaint_.empty())
			return complaint_ + "  " + keys;
		if (!o_.filter.empty())
			return "filter '" + o_.filter.text() + "'  " + keys;
		return keys;
	}

	void draw()
	{
		hwsig::sort_top_rows(rows_, *o_.sort_column, o_.ascending);
		std::vector<hwsig::TopRow> rows = rows_;
		hwsig::filter_top_rows(rows, o_.filter);
		if (o_.format == "json") {
			std::fputs(hwsig::render_top_json(iv_, rows).c_str(), stdout);
			std::fflush(stdout);
			return;
		}
		char interval[32];
		std::snprintf(interval, sizeof interval, "%.3g", iv_.interval_s);
		const std::size_t matched = rows.size() - (rows_.size() - vms_);
		const std::string count = o_.filter.empty() ? std::to_string(vms_) + (vms_ == 1 ? " VM" : " VMs")
							    : std::to_string(matched) + " of " + std::to_string(vms_) +
								      " VMs match '" + o_.filter.text() + "'";
		hwsig::TopTableOptions t;
		t.title = "hwsig top  " + clock_text(iv_.realtime_ns) + "  " + count + "  interval " + interval +
			  " s  sort " + o_.sort_column->header + (o_.ascending ? " ascending" : "");
		t.sort = o_.sort_column;
		t.ascending = o_.ascending;
		t.max_vms = static_cast<std::size_t>(o_.rows);
		if (!o_.filter.empty())
			t.no_rows = "no VM matches '" + o_.filter.text() + "' ('hwsigctl vms' lists them)";
		if (term_.active()) {
			t.width = hwsigctl::RawTerminal::columns();
			t.height = hwsigctl::RawTerminal::lines();
			t.footer = footer();
			t.more_hint = "/ filters, < > sort, a taller terminal shows more";
			hwsigctl::RawTerminal::redraw(hwsig::render_top_table(rows, t));
		} else {
			t.more_hint = "--rows N or --filter GLOB shows others";
			std::fputs((hwsig::render_top_table(rows, t) + "\n").c_str(), stdout);
			std::fflush(stdout);
		}
	}

	TopOptions &o_;
	hwsigctl::RawTerminal &term_;
	hwsig::Interval iv_;
	std::vector<hwsig::TopRow> rows_;
	std::size_t vms_ = 0;
	bool typing_ = false;   // after '/', until Enter or Esc
	std::string typed_;     // the filter being typed
	std::string complaint_; // why the last typed filter was refused
};

int run_top(TopOptions &o)
{
	const hwsigctl::FeedOptions feed = hwsigctl::feed_options(o.collectors, o.root);
	std::unique_ptr<hwsigctl::SnapshotFeed> source = hwsigctl::open_feed(feed);
	hwsigctl::SnapshotFeed &sampler = *source;
	const auto claimed = sampler.claimed_ids();
	hwsigctl::install_stop_handlers();
	// The first collect sets the sources up (BPF load and attach): keep it
	// out of the first interval, as stat does.
	(void)sampler.take();
	hwsig::Snapshot prev = sampler.take();

	// Keys where a person types them (stdin and stdout terminals; q also
	// ends a JSON stream there); elsewhere a plain sleep.
	hwsigctl::RawTerminal term;
	TopScreen screen(o, term);
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	long long shown = 0;
	while (!hwsigctl::stop_requested() && (o.count == 0 || shown < o.count)) {
		deadline = hwsigctl::deadline_after(deadline, o.interval);
		bool quit = false, due = false;
		while (!quit && !due && !hwsigctl::stop_requested()) {
			auto k = term.key_before(deadline);
			if (k)
				quit = screen.key(*k);
			else
				due = true;
		}
		if (quit || hwsigctl::stop_requested())
			break;
		hwsig::Snapshot cur = sampler.take();
		hwsig::Interval iv = hwsig::derive(prev, cur, claimed);
		const auto &vms = sampler.vms();
		screen.show(iv, hwsig::top_rows(iv, vms), vms.size());
		prev = std::move(cur);
		++shown;
	}
	return 0;
}

} // namespace

namespace hwsigctl {

int cmd_top(const std::vector<std::string> &args)
{
	TopOptions o;
	if (auto done = parse_top_options(args, o))
		return *done;
	try {
		return run_top(o);
	} catch (const hwsig::Error &e) {
		std::fprintf(stderr, "hwsigctl top: %s\n", e.what());
		return 1;
	}
}

} // namespace hwsigctl
