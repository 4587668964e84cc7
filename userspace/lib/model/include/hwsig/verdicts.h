// USE-method verdicts (utilisation, saturation, errors per resource) from
// one interval's metrics and the thresholds (Documentation/thresholds.rst).
// Pure: the same interval and thresholds give the same verdicts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/thresholds.h"

namespace hwsig {

// One metric past its threshold.
struct Finding {
	std::string resource;  // "cpu", "memory", "disk", "vhost", "thermal"
	std::string kind;      // "utilisation", "saturation", "error"
	std::string metric;    // catalog id
	std::string scope;
	double value = 0;      // the metric's base value (as in the JSON metrics)
	double threshold = 0;  // in the same base unit
	std::string evidence;  // "p99 latency 12.0 ms"
	double severity = 0;   // > 1: how far past the threshold (for ranking)
	std::size_t line = 0;  // index into Verdicts::lines
};

struct Verdicts {
	std::vector<Finding> findings;
	// One per (resource, scope, kind), most severe first: "disk vda
	// saturated: p99 latency 12.0 ms, queue time 9.00 ms, random (entropy 0.91)".
	std::vector<std::string> lines;
	bool marked(const std::string &id, const std::string &scope) const;
};

// visible: which scopes to judge (the table's scope filter: --vm, --per-cpu).
Verdicts judge(const Interval &iv, const Thresholds &t,
	       const std::function<bool(const std::string &scope)> &visible);

} // namespace hwsig
