// Output of intervals: a table grouped by layer, a compact one-line-per-
// interval form, or one JSON object per line.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/verdicts.h"
#include "hwsig/vm_name_filter.h"

namespace hwsig {

// What the table has already said about unavailable metrics in this run:
// id -> reason. Reasons that hold for one interval only ("... in this
// interval") are not kept, so an idle disk does not make every interval
// announce a change.
struct UnavailableSaid {
	bool started = false;
	std::map<std::string, std::string> reason;
};

struct RenderOptions {
	bool per_cpu = false; // show cpu:N scopes (hidden by default)
	std::string vm;       // non-empty: only vm:<vm> scopes plus system-wide context
	// Non-empty (instead of vm): the scopes of the VMs it matches plus
	// the system-wide context.
	VmNameFilter vm_filter;
	// Table: the scopes of at most this many VMs (the first by name; 0: all),
	// and a line saying how to see the others.
	std::size_t table_vms = 0;
	bool verbose = false; // show source and notes, every unavailable scope every interval
	std::string title;    // e.g. "interval 3" or "summary of 5 intervals"
	bool summary = false; // JSON: the line covers the whole run ("summary":true first)
	// Non-empty: the VM of `vm` exited, and why we say so ("QEMU pid 4321
	// exited"): one line saying it is gone instead of its scopes.
	std::string vm_gone;
	bool color = false; // ANSI colour (the caller decides: a terminal, no NO_COLOR)
	// Table and JSON: the interval's verdicts (marks, verdict lines, the
	// JSON "verdicts" array). Null: none computed, nothing said.
	const Verdicts *verdicts = nullptr;
	// Table: null or a summary -> every unavailable metric, grouped by
	// reason; else only what changed since the last interval (updated).
	UnavailableSaid *said = nullptr;
	// Compact: interval lines printed since the header (updated; the
	// header is repeated every kCompactHeaderEvery lines).
	unsigned *compact_lines = nullptr;
	// Compact: where the unavailable notes go instead of before the line
	// (the caller prints them to stderr), so that the output stays one
	// line per interval for a pipe. Null: before the line, as a table's.
	std::string *compact_notes = nullptr;
};

inline constexpr unsigned kCompactHeaderEvery = 20;

bool scope_visible(const std::string &scope, const RenderOptions &opt);
std::string render_table(const Interval &iv, const RenderOptions &opt);
// One line per interval under a header repeated like vmstat's.
std::string render_compact(const Interval &iv, const RenderOptions &opt);
// The table's "Unavailable" section (empty when there is nothing to say).
std::string render_unavailable(const Interval &iv, const RenderOptions &opt);
// The verdict lines, at most three, each wrapped to 80 columns.
std::string render_verdict_lines(const RenderOptions &opt);
// One line, no trailing newline. Schema: Documentation/output.rst.
std::string render_json(const Interval &iv, const RenderOptions &opt);
std::string json_escape(const std::string &s);
// ["a","b"]: a JSON array of the strings, each escaped.
std::string json_strings(const std::vector<std::string> &v);
// Words of text wrapped to width columns; continuation lines start with
// indent. The first line is not indented (the caller wrote its start).
std::string wrap(const std::string &text, std::size_t first_used, std::size_t indent, std::size_t width = 80);

inline constexpr std::size_t kMaxVerdictLines = 3;

// The largest of several values, some of them upper bounds
// (Metric::upper_bound): a bound when a bound is the largest (the worst
// disk's p99 in top and the compact line).
struct LargestValue {
	bool any = false;
	double value = 0;
	bool upper_bound = false;
	void add(double v, bool bound)
	{
		if (!any || v > value || (v == value && bound)) {
			value = v;
			upper_bound = bound;
		}
		any = true;
	}
};

} // namespace hwsig
