// hwsigctl plot's model: a dump's intervals (derived by derive(), as
// replay and stat derive them) turned into one panel per metric, one
// series per scope, on a time axis in seconds from the trigger. Pure: no
// I/O. render_svg.h draws it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/dump_file.h"
#include "hwsig/thresholds.h"

namespace hwsig {

// One derived interval and the monotonic times of the two snapshots it
// lies between (Interval itself carries only the wall clock).
struct PlotInterval {
	std::uint64_t start_mono_ns = 0;
	std::uint64_t end_mono_ns = 0;
	Interval iv;
};

// Every pair of consecutive snapshots of the dump, derived with derive()
// exactly as 'hwsigctl replay' derives them; the values of scopes a plot
// never shows (cpu:N, vq:..., pid:N) are dropped.
std::vector<PlotInterval> plot_intervals(const DumpContents &dump);

// When the dump was triggered, on the snapshots' monotonic clock.
std::uint64_t trigger_time_ns(const DumpContents &dump);

// Shown when no --metrics is given: those of them with a value in the dump.
const std::vector<std::string> &default_plot_metrics();

class PlotError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

struct PlotRequest {
	std::vector<std::string> metrics; // catalog ids; empty: the defaults present in the dump
	std::string vm;                   // non-empty: the host's series and this VM's only
	std::string title;                // the heading (the file's name, ...)
	std::string trigger;              // the trigger's label: "SIGUSR1", "request", a rule
	std::uint64_t trigger_mono_ns = 0;
	const Thresholds *thresholds = nullptr; // null: no threshold lines
};

struct PlotPoint {
	double t_s = 0; // end of the interval, seconds from the trigger
	double value = 0; // base unit, as in the JSON output
};

struct PlotSeries {
	std::string scope;
	// Runs of points drawn as one line each; a missing interval (no value,
	// or a hole in the recording) starts a new run.
	std::vector<std::vector<PlotPoint>> runs;
};

struct PlotPanel {
	std::string id;
	std::string unit;
	std::string description;
	std::vector<PlotSeries> series; // in the plot's scope order
	// Non-empty when the metric has no value in the dump: why ("not in
	// this dump: no hardware PMU ...").
	std::string absent;
	std::optional<double> threshold; // base unit
};

struct Plot {
	std::string title;
	std::string trigger;
	double t_min_s = 0, t_max_s = 0; // the span the intervals cover
	// The wall clock (UTC, ns since the epoch) at the trigger, from the
	// intervals' own wall-clock stamps; 0 when they carry none.
	std::uint64_t trigger_realtime_ns = 0;
	std::vector<std::string> scopes; // every series' scope: host first, then VMs, then the rest
	std::vector<PlotPanel> panels;
};

// Throws PlotError for an unknown metric id (naming it and the ids close
// to it), a request for a VM the dump does not hold, or a dump without
// any value among the default metrics.
Plot build_plot(const std::vector<PlotInterval> &intervals, const PlotRequest &req);

// Catalog ids close to a misspelt one (same prefix, a few edits away), for
// error messages; at most five, nearest first.
std::vector<std::string> close_metric_ids(const std::string &id);

} // namespace hwsig
