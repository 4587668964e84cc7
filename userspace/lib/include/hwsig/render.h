// Output of intervals: a table grouped by layer, or one JSON object per line.
#pragma once

#include <string>

#include "hwsig/derive.h"

namespace hwsig {

struct RenderOptions {
	bool per_cpu = false; // show cpu:N scopes (hidden by default)
	std::string vm;       // non-empty: only vm:<vm> scopes plus system-wide context
	bool verbose = false; // show source and notes
	std::string title;    // e.g. "interval 3" or "summary of 5 intervals"
	bool summary = false; // JSON: the line covers the whole run ("summary":true first)
	// Non-empty: the VM of `vm` exited, and why we say so ("QEMU pid 4321
	// exited"): one line saying it is gone instead of its scopes.
	std::string vm_gone;
};

bool scope_visible(const std::string &scope, const RenderOptions &opt);
std::string render_table(const Interval &iv, const RenderOptions &opt);
// One line, no trailing newline. Schema: Documentation/output.rst.
std::string render_json(const Interval &iv, const RenderOptions &opt);
std::string json_escape(const std::string &s);

} // namespace hwsig
