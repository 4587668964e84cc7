#include "hwsig/docs.h"
#include "hwsig/thresholds.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace hwsig {

const std::vector<ThresholdDef> &threshold_defs()
{
	// Sources are spelt out in Documentation/thresholds.rst; the short form
	// here keeps the two findable from each other.
	static const std::vector<ThresholdDef> defs = {
		{"cpu.ipc_low", 1.0, 0, 10, "insn/cycle", 1,
		 "triage playbook: IPC < 1 = likely memory-bound"},
		{"cpu.llc_mpki_high", 10, 0, 1000, "MPKI", 1,
		 "workload characterisation rule of thumb: > 10 LLC MPKI = memory-intensive"},
		{"cpu.steal_pct", 10, 0, 100, "%", 0.01, "triage playbook: steal above 10%"},
		{"cpu.runq_p99_ms", 1, 0, 60000, "ms", 1000, "triage playbook: run-queue p99 above 1 ms"},
		{"cpu.psi_some_pct", 10, 0, 100, "%", 1, "triage playbook: PSI some above 10% (first check)"},
		{"mem.psi_some_pct", 10, 0, 100, "%", 1, "triage playbook: PSI some above 10%"},
		{"mem.psi_full_pct", 5, 0, 100, "%", 1,
		 "hwsig: half the 'some' threshold, since full means no task made progress"},
		{"mem.dram_peak_gibps", 0, 0, 100000, "GiB/s", 1024.0 * 1024 * 1024,
		 "the platform's peak DRAM bandwidth (0: unknown, rule off); set it per platform"},
		{"mem.dram_busy_pct", 80, 1, 100, "%", 0.01,
		 "loaded-latency curves (Intel MLC): latency climbs steeply past ~80% of peak"},
		{"mem.hugepage_used_pct", 100, 1, 100, "%", 0.01,
		 "triage playbook: huge page pool exhausted (every page in use)"},
		{"mem.thp_fallback_pct", 10, 0, 100, "%", 0.01,
		 "hwsig: one THP fault in ten falling back means fragmented memory"},
		{"mem.numa_remote_pct", 30, 0, 100, "%", 0.01,
		 "hwsig: a third of allocations remote means placement is not NUMA-local"},
		{"disk.latency_p99_ms", 10, 0, 600000, "ms", 1000,
		 "rule of thumb: an SSD read takes well under 1 ms, a disk seek ~10 ms"},
		{"disk.queue_p99_ms", 5, 0, 600000, "ms", 1000,
		 "USE method: time waiting in the queue is saturation; 5 ms clears log2 slot noise"},
		{"disk.random_entropy", 0.8, 0, 1, "", 1,
		 "hwsig: above 0.8 the seek distances are spread like random I/O"},
		{"disk.psi_some_pct", 10, 0, 100, "%", 1, "triage playbook: PSI some above 10%"},
		{"vhost.depth_p99", 192, 0, 65536, "descriptors", 1,
		 "3/4 of the default 256-entry virtqueue: the ring is nearly full"},
		{"vhost.ring_stalls_ps", 1, 0.001, 1e9, "stalls/s", 1,
		 "USE method: any RX stall (no guest buffer) is an error signal"},
		{"thermal.headroom_c", 5, 0, 200, "degC", 1, "triage playbook: thermal headroom below 5 degC"},
	};
	return defs;
}

static const ThresholdDef *find_def(const std::string &key)
{
	for (const auto &d : threshold_defs())
		if (key == d.key)
			return &d;
	return nullptr;
}

Thresholds::Thresholds()
{
	for (const auto &d : threshold_defs())
		user_[d.key] = d.value;
}

double Thresholds::user(const std::string &key) const { return user_.at(key); }

double Thresholds::base(const std::string &key) const
{
	const ThresholdDef *d = find_def(key);
	if (!d)
		throw std::out_of_range("no threshold " + key);
	return user_.at(key) * d->to_base;
}

void Thresholds::set(const std::string &key, double user_value) { user_.at(key) = user_value; }

static std::string trim(const std::string &s)
{
	const auto b = s.find_first_not_of(" \t\r");
	if (b == std::string::npos)
		return "";
	return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

Thresholds parse_thresholds(const std::string &text, const std::string &origin)
{
	Thresholds t;
	std::set<std::string> seen;
	std::size_t lineno = 0;
	for (std::size_t at = 0; at <= text.size();) {
		std::size_t nl = text.find('\n', at);
		if (nl == std::string::npos)
			nl = text.size();
		std::string line = text.substr(at, nl - at);
		at = nl + 1;
		++lineno;
		const std::string where = origin + ":" + std::to_string(lineno) + ": ";
		if (line.find('\0') != std::string::npos)
			throw ThresholdError(where + "a NUL byte (not a text file?)");
		if (auto hash = line.find('#'); hash != std::string::npos)
			line.erase(hash);
		line = trim(line);
		if (line.empty())
			continue;
		const auto eq = line.find('=');
		if (eq == std::string::npos)
			throw ThresholdError(where + "expected 'key = value', got '" + line + "'");
		const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
		const ThresholdDef *d = find_def(key);
		if (!d)
			throw ThresholdError(where + "unknown key '" + key +
					     "' (the keys are listed in " HWSIG_DOC("thresholds.rst") ")");
		if (!seen.insert(key).second)
			throw ThresholdError(where + "key '" + key + "' set a second time");
		if (value.empty())
			throw ThresholdError(where + "key '" + key + "' has no value");
		errno = 0;
		char *end = nullptr;
		const double v = std::strtod(value.c_str(), &end);
		if (end == value.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
			throw ThresholdError(where + "key '" + key + "': '" + value + "' is not a number");
		if (v < d->min || v > d->max) {
			char range[96];
			std::snprintf(range, sizeof(range), "%g .. %g%s%s", d->min, d->max, *d->unit ? " " : "", d->unit);
			throw ThresholdError(where + "key '" + key + "': " + value + " is outside " + range);
		}
		t.set(key, v);
		if (nl == text.size())
			break;
	}
	return t;
}

} // namespace hwsig
