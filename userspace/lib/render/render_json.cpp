#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hwsig/render.h"
#include "hwsig/scope.h"

namespace hwsig {

static std::string number(double v)
{
	if (!std::isfinite(v))
		return "null";
	char buf[64];
	std::snprintf(buf, sizeof(buf), "%.17g", v);
	// Shortest form that still round-trips keeps lines readable.
	for (int prec = 6; prec < 17; ++prec) {
		char shorter[64];
		std::snprintf(shorter, sizeof(shorter), "%.*g", prec, v);
		if (std::strtod(shorter, nullptr) == v)
			return shorter;
	}
	return buf;
}

std::string render_json(const Interval &iv, const RenderOptions &opt)
{
	std::string out = opt.summary ? "{\"summary\":true,\"timestamp\":" : "{\"timestamp\":";
	out += number(static_cast<double>(iv.realtime_ns) / 1e9);
	out += ",\"interval_s\":" + number(iv.interval_s);
	if (!opt.vm.empty() && !opt.vm_gone.empty())
		out += ",\"vm_gone\":{\"scope\":\"" + json_escape(Scope::vm(opt.vm).str()) + "\",\"reason\":\"" +
		       json_escape(opt.vm_gone) + "\"}";
	out += ",\"metrics\":[";
	bool first = true;
	for (const auto &m : iv.metrics) {
		if (!scope_visible(m.scope, opt))
			continue;
		out += first ? "" : ",";
		first = false;
		out += "{\"id\":\"" + json_escape(m.id) + "\",\"value\":" + number(m.value) +
		       ",\"unit\":\"" + json_escape(m.unit) + "\",\"scope\":\"" + json_escape(m.scope) +
		       "\",\"source\":\"" + json_escape(m.source) + "\"";
		if (!m.note.empty())
			out += ",\"note\":\"" + json_escape(m.note) + "\"";
		// An addition to the schema, only where it holds: the value is
		// an upper bound (a percentile in its histogram's lowest slot).
		if (m.upper_bound)
			out += ",\"upper_bound\":true";
		out += "}";
	}
	out += "],\"unavailable\":[";
	first = true;
	for (const auto &u : iv.unavailable) {
		if (!scope_visible(u.scope, opt))
			continue;
		out += first ? "" : ",";
		first = false;
		out += "{\"id\":\"" + json_escape(u.id) + "\",\"scope\":\"" + json_escape(u.scope) +
		       "\",\"reason\":\"" + json_escape(u.reason) + "\",\"code\":\"" +
		       std::string(code_name(u.code)) + "\"}";
	}
	out += "]";
	// An addition to the schema: present whenever verdicts were judged,
	// empty on a quiet host; one entry per metric past its threshold.
	if (opt.verdicts) {
		out += ",\"verdicts\":[";
		first = true;
		for (const auto &f : opt.verdicts->findings) {
			out += first ? "" : ",";
			first = false;
			out += "{\"resource\":\"" + json_escape(f.resource) + "\",\"kind\":\"" + json_escape(f.kind) +
			       "\",\"metric\":\"" + json_escape(f.metric) + "\",\"scope\":\"" + json_escape(f.scope) +
			       "\",\"value\":" + number(f.value) + ",\"threshold\":" + number(f.threshold) +
			       ",\"text\":\"" + json_escape(opt.verdicts->lines.at(f.line)) + "\"}";
		}
		out += "]";
	}
	out += "}";
	return out;
}

} // namespace hwsig
