// Event resolution from sysfs, the way perf does it, and the choice of events
// behind the cpu.* and mem.imc_* metrics (Documentation/pmu.rst).

#include "hwsig/pmu_events.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <linux/perf_event.h>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

void set_why(std::string *why, std::string text)
{
	if (why)
		*why = std::move(text);
}

// "0x1f" or "31": the whole string, no sign, no overflow.
std::optional<std::uint64_t> parse_number(std::string_view s)
{
	if (s.empty())
		return std::nullopt;
	int base = 10;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s.remove_prefix(2);
	}
	std::uint64_t v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

std::optional<unsigned> parse_bit(std::string_view s)
{
	if (s.empty() || s.size() > 2 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
		return std::nullopt;
	unsigned v = 0;
	std::from_chars(s.data(), s.data() + s.size(), v);
	if (v > 63)
		return std::nullopt;
	return v;
}

bool valid_term_name(std::string_view s)
{
	return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
	});
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
	std::vector<std::string_view> out;
	for (;;) {
		auto pos = s.find(sep);
		out.push_back(s.substr(0, pos));
		if (pos == std::string_view::npos)
			return out;
		s.remove_prefix(pos + 1);
	}
}

} // namespace

unsigned FormatField::width() const
{
	unsigned w = 0;
	for (auto [lo, hi] : ranges)
		w += hi - lo + 1;
	return w;
}

std::optional<FormatField> parse_format_spec(std::string_view spec, std::string *why)
{
	spec = trim(spec);
	auto colon = spec.find(':');
	if (colon == std::string_view::npos) {
		set_why(why, "no ':' in format \"" + std::string(spec) + "\"");
		return std::nullopt;
	}
	FormatField f;
	std::string_view word = spec.substr(0, colon);
	if (word == "config")
		f.word = 0;
	else if (word == "config1")
		f.word = 1;
	else if (word == "config2")
		f.word = 2;
	else {
		set_why(why, "unknown config word \"" + std::string(word) + "\"");
		return std::nullopt;
	}
	std::uint64_t used = 0;
	for (std::string_view part : split(spec.substr(colon + 1), ',')) {
		auto dash = part.find('-');
		auto lo = parse_bit(part.substr(0, dash));
		auto hi = dash == std::string_view::npos ? lo : parse_bit(part.substr(dash + 1));
		if (!lo || !hi || *lo > *hi) {
			set_why(why, "bad bit range \"" + std::string(part) + "\" (bits are 0..63, low-high)");
			return std::nullopt;
		}
		const std::uint64_t mask = (*hi == 63 ? ~0ull : ((1ull << (*hi + 1)) - 1)) & ~((1ull << *lo) - 1);
		if (used & mask) {
			set_why(why, "overlapping bit range \"" + std::string(part) + "\"");
			return std::nullopt;
		}
		used |= mask;
		f.ranges.emplace_back(*lo, *hi);
	}
	return f;
}

std::optional<std::vector<EventTerm>> parse_event_terms(std::string_view s, std::string *why)
{
	s = trim(s);
	std::vector<EventTerm> terms;
	if (s.empty()) {
		set_why(why, "empty event");
		return std::nullopt;
	}
	for (std::string_view part : split(s, ',')) {
		part = trim(part);
		auto eq = part.find('=');
		EventTerm t;
		std::string_view name = part.substr(0, eq);
		if (!valid_term_name(name)) {
			set_why(why, "bad term name \"" + std::string(name) + "\"");
			return std::nullopt;
		}
		t.name = std::string(name);
		if (eq != std::string_view::npos) {
			std::string_view value = part.substr(eq + 1);
			auto v = parse_number(value);
			if (!v) {
				set_why(why, "bad value \"" + std::string(value) + "\" for term " + t.name);
				return std::nullopt;
			}
			t.value = *v;
		}
		terms.push_back(std::move(t));
	}
	return terms;
}

bool apply_format(const FormatField &f, std::uint64_t value, PerfEventSpec &spec)
{
	const unsigned w = f.width();
	if (w < 64 && (value >> w) != 0)
		return false;
	std::uint64_t *word = f.word == 0 ? &spec.config : f.word == 1 ? &spec.config1 : &spec.config2;
	for (auto [lo, hi] : f.ranges) {
		const unsigned n = hi - lo + 1;
		const std::uint64_t part = n == 64 ? value : value & ((1ull << n) - 1);
		*word |= part << lo;
		value = n == 64 ? 0 : value >> n;
	}
	return true;
}

// ---- host identity ----

CpuIdentity read_cpu_identity(const std::string &root)
{
	CpuIdentity id;
	auto r = read_file(join_path(root, "/proc/cpuinfo"));
	if (!r.data)
		return id;
	for (std::string_view line : split_lines(*r.data)) {
		auto colon = line.find(':');
		if (colon == std::string_view::npos) {
			if (trim(line).empty() && id.vendor != CpuVendor::Unknown)
				break; // end of the first processor
			continue;
		}
		std::string_view key = trim(line.substr(0, colon));
		std::string_view val = trim(line.substr(colon + 1));
		if (key == "vendor_id")
			id.vendor = val == "GenuineIntel" ? CpuVendor::Intel
				    : val == "AuthenticAMD" || val == "HygonGenuine" ? CpuVendor::Amd
										      : CpuVendor::Unknown;
		else if (key == "cpu family")
			id.family = static_cast<unsigned>(parse_u64(val).value_or(0));
		else if (key == "model")
			id.model = static_cast<unsigned>(parse_u64(val).value_or(0));
		else if (key == "flags") {
			for (auto flag : split_ws(val))
				if (flag == "hypervisor")
					id.hypervisor = true;
		}
	}
	return id;
}

std::optional<unsigned> cpu_socket(const std::string &root, unsigned cpu)
{
	auto s = read_trimmed(join_path(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
						      "/topology/physical_package_id"));
	if (!s)
		return std::nullopt;
	auto v = parse_u64(*s);
	if (!v || *v > 1u << 20)
		return std::nullopt;
	return static_cast<unsigned>(*v);
}

// ---- the catalog of PMUs ----

PmuDevices::PmuDevices(std::string root) : root_(std::move(root))
{
	const std::string base = join_path(root_, "/sys/bus/event_source/devices");
	for (const std::string &name : list_dir(base)) {
		const std::string dir = base + "/" + name;
		PmuDevice d;
		d.name = name;
		auto type = read_trimmed(dir + "/type");
		auto tv = type ? parse_u64(*type) : std::nullopt;
		if (!tv || *tv > 0xffffffffu) {
			problems_.push_back(name + ": unreadable or malformed type");
			continue;
		}
		d.type = static_cast<std::uint32_t>(*tv);
		for (const std::string &f : list_dir(dir + "/format")) {
			auto spec = read_trimmed(dir + "/format/" + f);
			std::string why;
			auto parsed = spec ? parse_format_spec(*spec, &why) : std::nullopt;
			if (!parsed) {
				problems_.push_back(name + ": format/" + f + ": " + (spec ? why : "unreadable"));
				continue;
			}
			d.format.emplace(f, std::move(*parsed));
		}
		for (const std::string &e : list_dir(dir + "/events")) {
			if (e.find('.') != std::string::npos)
				continue; // .scale, .unit, .per-pkg, .snapshot: metadata
			if (auto terms = read_trimmed(dir + "/events/" + e))
				d.events.emplace(e, std::move(*terms));
		}
		if (auto mask = read_trimmed(dir + "/cpumask")) {
			if (auto cpus = parse_cpu_list(*mask))
				d.cpumask = std::move(*cpus);
			else
				problems_.push_back(name + ": malformed cpumask \"" + *mask + "\"");
		}
		devices_.push_back(std::move(d));
	}
}

const PmuDevice *PmuDevices::find(std::string_view name) const
{
	for (const auto &d : devices_)
		if (d.name == name)
			return &d;
	return nullptr;
}

const PmuDevice *PmuDevices::core_pmu() const
{
	if (const PmuDevice *p = find("cpu"))
		return p;
	return find("cpu_core");
}

PerfEventSpec PmuDevices::encode(const PmuDevice &pmu, std::string_view terms, std::string name) const
{
	std::string why;
	auto parsed = parse_event_terms(terms, &why);
	if (!parsed)
		throw Error("encoding event \"" + std::string(terms) + "\" for PMU " + pmu.name + ": " + why, EINVAL);
	PerfEventSpec spec;
	spec.name = name.empty() ? pmu.name + "/" + std::string(terms) + "/" : std::move(name);
	spec.type = pmu.type;
	for (const EventTerm &t : *parsed) {
		if (t.name == "config" || t.name == "config1" || t.name == "config2") {
			(t.name == "config" ? spec.config : t.name == "config1" ? spec.config1 : spec.config2) |= t.value;
			continue;
		}
		auto f = pmu.format.find(t.name);
		if (f == pmu.format.end())
			throw Error("encoding event \"" + std::string(terms) + "\": PMU " + pmu.name +
					    " has no format term \"" + t.name + "\"",
				    EINVAL);
		if (!apply_format(f->second, t.value, spec))
			throw Error("encoding event \"" + std::string(terms) + "\": value " + std::to_string(t.value) +
					    " does not fit the " + std::to_string(f->second.width()) +
					    "-bit term \"" + t.name + "\" of PMU " + pmu.name,
				    EINVAL);
	}
	return spec;
}

namespace {

struct NamedConfig {
	const char *name;
	std::uint64_t config;
};

constexpr NamedConfig kHardware[] = {
	{"cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
	{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
	{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES},
	{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES},
};

constexpr NamedConfig kSoftware[] = {
	{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
	{"task-clock", PERF_COUNT_SW_TASK_CLOCK},
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"faults", PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
	{"dummy", PERF_COUNT_SW_DUMMY},
};

constexpr NamedConfig kCaches[] = {
	{"L1-dcache", PERF_COUNT_HW_CACHE_L1D}, {"L1-icache", PERF_COUNT_HW_CACHE_L1I},
	{"LLC", PERF_COUNT_HW_CACHE_LL},        {"dTLB", PERF_COUNT_HW_CACHE_DTLB},
	{"iTLB", PERF_COUNT_HW_CACHE_ITLB},     {"branch", PERF_COUNT_HW_CACHE_BPU},
	{"node", PERF_COUNT_HW_CACHE_NODE},
};

constexpr NamedConfig kCacheOps[] = {
	{"load", PERF_COUNT_HW_CACHE_OP_READ},      {"loads", PERF_COUNT_HW_CACHE_OP_READ},
	{"store", PERF_COUNT_HW_CACHE_OP_WRITE},    {"stores", PERF_COUNT_HW_CACHE_OP_WRITE},
	{"prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH}, {"prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH},
};

std::optional<std::uint64_t> lookup(const NamedConfig *table, std::size_t n, std::string_view name)
{
	for (std::size_t i = 0; i < n; i++)
		if (name == table[i].name)
			return table[i].config;
	return std::nullopt;
}

std::uint64_t cache_config(std::uint64_t cache, std::uint64_t op, std::uint64_t result)
{
	return cache | (op << 8) | (result << 16);
}

// "L1-dcache-load-misses", "LLC-loads", "dTLB-store-misses", "branch-loads"...
std::optional<std::uint64_t> parse_cache_event(std::string_view name)
{
	for (const auto &c : kCaches) {
		std::string_view prefix = c.name;
		if (name.substr(0, prefix.size()) != prefix || name.size() <= prefix.size() ||
		    name[prefix.size()] != '-')
			continue;
		std::string_view rest = name.substr(prefix.size() + 1);
		std::uint64_t result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
		if (rest.size() > 7 && rest.substr(rest.size() - 7) == "-misses") {
			result = PERF_COUNT_HW_CACHE_RESULT_MISS;
			rest.remove_suffix(7);
		}
		auto op = lookup(kCacheOps, std::size(kCacheOps), rest);
		if (!op)
			return std::nullopt;
		// "L1-dcache-load-misses" uses the singular, "L1-dcache-loads" the plural.
		if (result == PERF_COUNT_HW_CACHE_RESULT_MISS && rest.back() == 's')
			return std::nullopt;
		if (result == PERF_COUNT_HW_CACHE_RESULT_ACCESS && rest.back() != 's')
			return std::nullopt;
		return cache_config(c.config, *op, result);
	}
	return std::nullopt;
}

} // namespace

PerfEventSpec PmuDevices::resolve(std::string_view name) const
{
	const std::string n(trim(name));
	PerfEventSpec spec;
	spec.name = n;
	if (n.empty())
		throw Error("resolving an event: empty name", EINVAL);
	if (auto slash = n.find('/'); slash != std::string::npos) {
		std::string_view pmu_name = std::string_view(n).substr(0, slash);
		std::string_view body = std::string_view(n).substr(slash + 1);
		if (body.empty() || body.back() != '/')
			throw Error("resolving event \"" + n + "\": expected pmu/event/", EINVAL);
		body.remove_suffix(1);
		const PmuDevice *pmu = find(pmu_name);
		if (!pmu)
			throw Error("resolving event \"" + n + "\": no PMU named \"" + std::string(pmu_name) +
					    "\" in " + join_path(root_, "/sys/bus/event_source/devices"),
				    ENOENT);
		if (body.find('=') == std::string_view::npos && body.find(',') == std::string_view::npos) {
			auto alias = pmu->events.find(body);
			if (alias == pmu->events.end())
				throw Error("resolving event \"" + n + "\": PMU " + pmu->name + " has no event \"" +
						    std::string(body) + "\"",
					    ENOENT);
			return encode(*pmu, alias->second, n);
		}
		return encode(*pmu, body, n);
	}
	if (auto v = lookup(kHardware, std::size(kHardware), n)) {
		spec.type = PERF_TYPE_HARDWARE;
		spec.config = *v;
		return spec;
	}
	if (auto v = lookup(kSoftware, std::size(kSoftware), n)) {
		spec.type = PERF_TYPE_SOFTWARE;
		spec.config = *v;
		return spec;
	}
	if (auto v = parse_cache_event(n)) {
		spec.type = PERF_TYPE_HW_CACHE;
		spec.config = *v;
		return spec;
	}
	if (n.size() > 1 && n[0] == 'r') {
		auto v = parse_number("0x" + n.substr(1));
		if (!v)
			throw Error("resolving event \"" + n + "\": raw events are r<hex>", EINVAL);
		const PmuDevice *core = core_pmu();
		spec.type = core ? core->type : std::uint32_t(PERF_TYPE_RAW);
		spec.config = *v;
		return spec;
	}
	throw Error("resolving event \"" + n + "\": unknown event (try cycles, task-clock, "
					   "L1-dcache-load-misses, pmu/event=0x..,umask=0x../)",
		    ENOENT);
}

// ---- the metric plans ----

namespace {

PerfEventSpec hw(const char *name, std::uint64_t config)
{
	return PerfEventSpec{name, PERF_TYPE_HARDWARE, config, 0, 0};
}

PerfEventSpec hw_cache(const char *name, std::uint64_t cache, std::uint64_t op, std::uint64_t result)
{
	return PerfEventSpec{name, PERF_TYPE_HW_CACHE, cache_config(cache, op, result), 0, 0};
}

// A raw core event through the core PMU's format, when that PMU exists and
// knows every term; nullopt otherwise.
std::optional<PerfEventSpec> raw_core(const PmuDevices &pmus, const char *name, const char *terms)
{
	const PmuDevice *core = pmus.core_pmu();
	if (!core)
		return std::nullopt;
	try {
		return pmus.encode(*core, terms, name);
	} catch (const Error &) {
		return std::nullopt;
	}
}

} // namespace

std::vector<std::string> default_core_event_names()
{
	return {"cycles",        "instructions",     "stall-cycles",     "L1-dcache-load-misses",
		"l2-misses",     "cache-references", "cache-misses",     "branches",
		"branch-misses", "dTLB-load-misses", "iTLB-load-misses"};
}

std::vector<std::string> default_software_event_names()
{
	return {"task-clock", "context-switches", "cpu-migrations", "page-faults"};
}

CorePlan plan_core_events(const PmuDevices &pmus, const CpuIdentity &cpu)
{
	using namespace series;
	CorePlan plan;
	auto add = [&](const char *s, std::vector<PerfEventSpec> alts) {
		plan.series.push_back(CoreSeriesPlan{s, std::move(alts)});
	};
	add(kPmuCycles, {hw("cycles", PERF_COUNT_HW_CPU_CYCLES)});
	add(kPmuInstructions, {hw("instructions", PERF_COUNT_HW_INSTRUCTIONS)});

	std::vector<PerfEventSpec> stall;
	if (cpu.vendor == CpuVendor::Intel) {
		// CYCLE_ACTIVITY.STALLS_TOTAL (Skylake and later): cycles with no
		// uop executed; Intel never mapped the generic stalled-cycles events.
		if (auto e = raw_core(pmus, "stall-cycles", "event=0xa3,umask=0x04,cmask=0x04"))
			stall.push_back(*e);
	}
	// AMD maps the generic events per family; backend first, frontend (uop
	// queue empty) where backend is not mapped (Zen 2 and later).
	stall.push_back(hw("stall-cycles", PERF_COUNT_HW_STALLED_CYCLES_BACKEND));
	stall.push_back(hw("stall-cycles", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND));
	add(kPmuStallCycles, std::move(stall));

	add(kPmuL1dMisses, {hw_cache("L1-dcache-load-misses", PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
				     PERF_COUNT_HW_CACHE_RESULT_MISS)});

	std::optional<PerfEventSpec> l2;
	if (cpu.vendor == CpuVendor::Intel)
		l2 = raw_core(pmus, "l2-misses", "event=0x24,umask=0x3f"); // L2_RQSTS.MISS
	else if (cpu.vendor == CpuVendor::Amd && cpu.family >= 0x17)
		l2 = raw_core(pmus, "l2-misses", "event=0x64,umask=0x09"); // L2_CACHE_REQ_STAT.IC_DC_MISS_IN_L2
	if (l2)
		add(kPmuL2Misses, {*l2});
	else
		plan.unavailable.emplace_back("cpu.l2_mpki", pmus.core_pmu()
								    ? "no known L2-miss event for this CPU model"
								    : "no core PMU to program the L2-miss event");

	if (cpu.vendor == CpuVendor::Amd) {
		// The kernel maps the generic cache-references/misses to L2 events
		// on Zen; the L3 is counted by the per-CCX amd_l3 PMU instead.
		const char *why = "AMD: the L3 is counted by the per-CCX amd_l3 PMU, which hwsig does not program";
		plan.unavailable.emplace_back("cpu.llc_mpki", why);
		plan.unavailable.emplace_back("cpu.llc_miss_ratio", why);
	} else {
		add(kPmuLlcReferences, {hw("cache-references", PERF_COUNT_HW_CACHE_REFERENCES)});
		add(kPmuLlcMisses, {hw("cache-misses", PERF_COUNT_HW_CACHE_MISSES)});
	}
	add(kPmuBranches, {hw("branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS)});
	add(kPmuBranchMisses, {hw("branch-misses", PERF_COUNT_HW_BRANCH_MISSES)});
	add(kPmuDtlbMisses, {hw_cache("dTLB-load-misses", PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
				      PERF_COUNT_HW_CACHE_RESULT_MISS)});
	add(kPmuItlbMisses, {hw_cache("iTLB-load-misses", PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ,
				      PERF_COUNT_HW_CACHE_RESULT_MISS)});
	return plan;
}

namespace {

bool numbered(std::string_view name, std::string_view prefix)
{
	if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size())
		return false;
	name.remove_prefix(prefix.size());
	return std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Adds one event per CPU of the PMU's cpumask (one CPU per socket/die).
void add_per_socket(const PmuDevices &pmus, const PmuDevice &pmu, const PerfEventSpec &spec,
		    DramDirection dir, UncoreDramPlan &plan)
{
	if (pmu.cpumask.empty()) {
		plan.notes.push_back(pmu.name + ": no cpumask; skipped");
		return;
	}
	for (unsigned c : pmu.cpumask) {
		auto socket = cpu_socket(pmus.root(), c);
		if (!socket) {
			plan.notes.push_back(pmu.name + ": no physical_package_id for cpu" + std::to_string(c) +
					     "; skipped");
			continue;
		}
		plan.events.push_back(UncoreDramEvent{pmu.name, c, *socket, dir, spec});
	}
}

bool plan_intel(const PmuDevices &pmus, std::string_view prefix, const char *read_alias,
		const char *write_alias, UncoreDramPlan &plan)
{
	bool any = false;
	// "uncore_imc_free_running_0".. per controller; a part with a single box
	// (Snow Ridge) names it without the number.
	const std::string_view single = prefix.substr(0, prefix.size() - 1);
	for (const PmuDevice &d : pmus.devices()) {
		if (!numbered(d.name, prefix) && d.name != single)
			continue;
		auto r = d.events.find(read_alias);
		auto w = d.events.find(write_alias);
		if (r == d.events.end() || w == d.events.end())
			continue;
		try {
			add_per_socket(pmus, d, pmus.encode(d, r->second, d.name + "/" + read_alias + "/"),
				       DramDirection::Read, plan);
			add_per_socket(pmus, d, pmus.encode(d, w->second, d.name + "/" + write_alias + "/"),
				       DramDirection::Write, plan);
			any = true;
		} catch (const Error &e) {
			plan.notes.push_back(e.what());
		}
	}
	return any;
}

bool is_zen4(unsigned model)
{
	return (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0xaf);
}

// Zen 2/3 (families 17h/19h): the data fabric's DRAM channel controller
// events, one per channel; each counts 64-byte beats, reads and writes together.
bool plan_amd_df(const PmuDevices &pmus, const PmuDevice &df, UncoreDramPlan &plan)
{
	static constexpr unsigned kChannelEvents[] = {0x07, 0x47, 0x87, 0xc7, 0x107, 0x147, 0x187, 0x1c7};
	try {
		for (unsigned ch = 0; ch < std::size(kChannelEvents); ch++) {
			const std::string terms = "event=" + std::to_string(kChannelEvents[ch]) + ",umask=0x38";
			add_per_socket(pmus, df, pmus.encode(df, terms, "amd_df/dram_channel_" + std::to_string(ch) + "/"),
				       DramDirection::ReadWrite, plan);
		}
		return true;
	} catch (const Error &e) {
		plan.notes.push_back(e.what());
		return false;
	}
}

} // namespace

UncoreDramPlan plan_uncore_dram(const PmuDevices &pmus, const CpuIdentity &cpu)
{
	UncoreDramPlan plan;
	// Free-running counters cost no programmable counter; only Ice Lake-SP
	// style boxes count DDR reads/writes there (Sapphire Rapids' have only
	// dclk and queue cycles), so they are used only when both events exist.
	// Either family covers every channel: never both, or traffic counts twice.
	if (plan_intel(pmus, "uncore_imc_free_running_", "read", "write", plan)) {
		plan.kind = "uncore_imc_free_running";
		return plan;
	}
	plan.events.clear();
	if (plan_intel(pmus, "uncore_imc_", "cas_count_read", "cas_count_write", plan)) {
		plan.kind = "uncore_imc";
		return plan;
	}
	plan.events.clear();

	bool umc = false;
	for (const PmuDevice &d : pmus.devices()) {
		if (!numbered(d.name, "amd_umc_"))
			continue;
		try {
			// UMC_CAS_CMD (event 0x0a) with rdwrmask 1 = reads, 2 = writes.
			add_per_socket(pmus, d, pmus.encode(d, "event=0x0a,rdwrmask=1", d.name + "/cas_rd/"),
				       DramDirection::Read, plan);
			add_per_socket(pmus, d, pmus.encode(d, "event=0x0a,rdwrmask=2", d.name + "/cas_wr/"),
				       DramDirection::Write, plan);
			umc = true;
		} catch (const Error &e) {
			plan.notes.push_back(e.what());
		}
	}
	if (umc) {
		plan.kind = "amd_umc";
		return plan;
	}
	plan.events.clear();

	const PmuDevice *df = pmus.find("amd_df");
	if (df && cpu.vendor == CpuVendor::Amd && cpu.family == 0x19 && is_zen4(cpu.model)) {
		plan.unavailable_reason = "AMD Zen 4: DRAM traffic needs the amd_umc PMU (Linux 6.8 or later)";
		return plan;
	}
	if (df && cpu.vendor == CpuVendor::Amd && (cpu.family == 0x17 || cpu.family == 0x19)) {
		if (plan_amd_df(pmus, *df, plan)) {
			plan.kind = "amd_df";
			plan.notes.push_back("amd_df counts DRAM reads and writes together: no read/write split");
			return plan;
		}
		plan.events.clear();
	}
	plan.unavailable_reason = "no uncore memory-controller PMU (uncore_imc/amd_umc/amd_df) on this host";
	return plan;
}

} // namespace hwsig
