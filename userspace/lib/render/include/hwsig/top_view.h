// hwsigctl top: one row per VM and one for the host, from one derived
// interval; who each VM waits behind, and a verdict in words when one
// cause dominates. The rows, their order and both renderings live here so
// that they are tested without a terminal (Documentation/top.rst).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/vm.h"
#include "hwsig/vm_name_filter.h"

namespace hwsig {

struct TopRow {
	std::string name; // "host", or the VM's name
	bool host = false;
	std::optional<double> vcpus;           // vCPU threads
	std::optional<double> cpus;            // CPUs busy: the VM's vCPU threads, or the whole host
	std::optional<double> vcpu_wait;       // sched.vcpu_wait_ratio (share of vCPU time)
	std::optional<double> runq_p99_us;     // sched.runq_wait_p99_us
	bool runq_p99_bound = false;           // an upper bound (Metric::upper_bound): shown "<"

	std::string culprit;                   // top culprit of the VM's waits (not idle), "" if none
	std::optional<double> culprit_share;   // its share of all the VM's run-queue wait
	std::optional<double> preempt_ps;      // sched.involuntary_ctxsw_ps
	std::optional<double> iops;            // reads + writes per second: host: all disks; VM: its own
	std::optional<double> io_p99_us;       // host: the worst disk's p99; VM: of its own requests
	bool io_p99_bound = false;             // an upper bound: shown "<"
	std::optional<double> vhost_depth_p99; // vhost.queue_depth_p99
	std::optional<double> vhost_stalls_ps; // vhost.ring_stalls_ps
	std::optional<double> ipc;             // cpu.ipc
	std::optional<double> llc_mpki;        // cpu.llc_mpki
	// mem.mbm_total_bps (resctrl), else the estimate mem.llc_miss_bps
	std::optional<double> mem_bps;
	std::optional<double> llc_bytes;       // mem.llc_occupancy_bytes (resctrl)
	// VM rows: the CPUs the waits blamed on its culprit ended on (whose
	// run queues it waited on) in the interval; empty without a culprit
	std::vector<unsigned> on_cpus;
	std::string verdict;                   // "" when nothing dominates
};

// When a VM's row gets a verdict.
struct TopRules {
	double min_vcpu_wait = 0.05; // its vCPUs waited at least this share of their time
	double min_share = 0.50;     // and one culprit holds at least this share of the waits
	double min_io_p99_us = 10000; // its I/O p99 at least this (10 ms)
	double min_io_share = 0.50;   // and another VM issued at least this share of that disk's requests
};

// A column of the table: its header (also the --sort key, case-insensitive)
// and the JSON field of the same value.
struct TopColumn {
	enum class Kind { Text, Count, Cpus, Percent, TimeUs, Rate, Plain, Bytes, BytesPerS };
	const char *header;
	const char *json;
	std::size_t width; // 0: as wide as its widest cell (the VM's name; the verdict, last)
	Kind kind;
	std::optional<double> TopRow::*value = nullptr; // a number column
	std::string TopRow::*text = nullptr;            // a text column
	bool TopRow::*bound = nullptr;                  // the value may be an upper bound
};
const std::vector<TopColumn> &top_columns();
// The column named (header, any case, or its JSON field); nullptr if none.
const TopColumn *find_top_column(const std::string &name);

// "host" first, then one row per VM listed in vms. A wait verdict names
// the CPUs of the waits blamed on the culprit (Interval::cpus of
// series::kVmWaitBehindCpus).
std::vector<TopRow> top_rows(const Interval &iv, const std::vector<Vm> &vms, const TopRules &rules = {});
// Sorted by `sort` (descending, or ascending when `ascending`; rows
// without the value last, then by name).
void sort_top_rows(std::vector<TopRow> &rows, const TopColumn &sort, bool ascending);

// Keeps the host's row and the VM rows the filter matches (all of them for
// an empty filter), in their order.
void filter_top_rows(std::vector<TopRow> &rows, const VmNameFilter &filter);

// Human culprit text: "vm:batch7", "host processes", "kernel threads",
// "vhost workers".
std::string culprit_text(const std::string &culprit);

struct TopTableOptions {
	std::string title;        // first line
	const TopColumn *sort = nullptr;
	bool ascending = false;
	std::size_t width = 0;    // terminal columns; 0: no limit (verdict never cut)
	std::string footer;       // last line (keys), "" for none
	// At most this many VM rows: the terminal's lines (0: no limit; the
	// table then leaves the last line free so that the screen does not
	// scroll) and --rows (0: no limit). What is cut is counted on a line
	// that ends with more_hint (how to see the rest).
	std::size_t height = 0, max_vms = 0;
	std::string more_hint;
	// The line instead of VM rows when there are none because of a filter:
	// "no VM matches 'web*'".
	std::string no_rows;
};
// The table: title, header (the sort column marked), one line per row.
std::string render_top_table(const std::vector<TopRow> &rows, const TopTableOptions &o);
// One JSON object on one line: {"time":..., "interval_s":..., "rows":[...]}.
std::string render_top_json(const Interval &iv, const std::vector<TopRow> &rows);

} // namespace hwsig
