// The PMU Source (see source_pmu.h). Two backends for the core counters,
// chosen once on the first collect: hwsig.ko's rings, or perf_event_open
// groups per CPU. Uncore DRAM counters always come from perf_event_open:
// they are per socket, cheap to read at snapshot time, and would not fit
// beside the core events in the module's HWSIG_MAX_EVENTS.

#include "hwsig/source_pmu.h"

#include <algorithm>
#include <cerrno>
#include <linux/perf_event.h>
#include <map>
#include <optional>

#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/perf_open.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

// Raw series that is never derived into a catalog metric yet: amd_df DRAM
// beats, reads and writes together (64 B each).
constexpr const char *kImcCasReadWrite = "imc.cas_rw";

struct MetricNeeds {
	const char *id;
	const char *a;
	const char *b;
};

const MetricNeeds kCoreMetrics[] = {
	{"cpu.ipc", series::kPmuInstructions, series::kPmuCycles},
	{"cpu.stall_ratio", series::kPmuStallCycles, series::kPmuCycles},
	{"cpu.l1d_mpki", series::kPmuL1dMisses, series::kPmuInstructions},
	{"cpu.l2_mpki", series::kPmuL2Misses, series::kPmuInstructions},
	{"cpu.llc_mpki", series::kPmuLlcMisses, series::kPmuInstructions},
	{"cpu.llc_miss_ratio", series::kPmuLlcMisses, series::kPmuLlcReferences},
	{"cpu.branch_miss_ratio", series::kPmuBranchMisses, series::kPmuBranches},
	{"cpu.dtlb_mpki", series::kPmuDtlbMisses, series::kPmuInstructions},
	{"cpu.itlb_mpki", series::kPmuItlbMisses, series::kPmuInstructions},
};

// Events that are compared with each other share a group, so that their
// ratio is exact even when the PMU multiplexes.
const std::vector<std::vector<const char *>> kGroups = {
	{series::kPmuCycles, series::kPmuInstructions, series::kPmuStallCycles},
	{series::kPmuL1dMisses, series::kPmuL2Misses},
	{series::kPmuLlcReferences, series::kPmuLlcMisses},
	{series::kPmuBranches, series::kPmuBranchMisses},
	{series::kPmuDtlbMisses, series::kPmuItlbMisses},
};

std::string cpu_scope(unsigned cpu)
{
	return "cpu:" + std::to_string(cpu);
}

// Sums of one series over CPUs/boxes, with the worst running fraction.
struct Sum {
	double value = 0;
	double fraction = 1.0;
	bool any = false;
	void add(double v, double f)
	{
		value += v;
		fraction = std::min(fraction, f);
		any = true;
	}
};

struct PerCpuGroup {
	unsigned cpu;
	std::vector<const char *> series; // per member
	PerfGroup group;
};

struct UncoreCounter {
	UncoreDramEvent event;
	PerfGroup group;
};

class PmuSource final : public Source {
public:
	explicit PmuSource(PmuSourceOptions opt) : opt_(opt) {}
	~PmuSource() override
	{
		if (kmod_started_ && client_) {
			try {
				client_->stop();
			} catch (const Error &) {
				// Nothing to do at teardown: the module keeps running.
			}
		}
	}

	std::string_view name() const override { return "pmu"; }
	std::vector<std::string> provides() const override { return pmu_metric_ids(); }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (!initialized_ || ctx.root != root_)
			init(ctx.root);
		if (reader_)
			collect_kmod(snap);
		else
			collect_perf(snap);
		collect_uncore(snap);
		for (const auto &[id, scope, reason] : notes_)
			snap.add_unavailable(id, scope, reason);
	}

private:
	struct Note {
		std::string id, scope, reason;
	};

	void note(const std::string &id, const std::string &reason, const std::string &scope = "system")
	{
		for (const auto &n : notes_)
			if (n.id == id && n.scope == scope)
				return;
		notes_.push_back({id, scope, reason});
	}

	// One reason for every cpu.* metric, replacing the per-event ones: used
	// when there is no core PMU at all.
	void replace_core_notes(const std::string &reason)
	{
		notes_.erase(std::remove_if(notes_.begin(), notes_.end(),
					    [](const Note &n) { return n.id.rfind("cpu.", 0) == 0; }),
			     notes_.end());
		for (const auto &m : kCoreMetrics)
			note(m.id, reason);
	}

	void note_series_missing(const char *series, const std::string &reason)
	{
		for (const auto &m : kCoreMetrics)
			if (series == std::string_view(m.a) || series == std::string_view(m.b))
				note(m.id, reason);
	}

	void init(const std::string &root)
	{
		root_ = root;
		initialized_ = true;
		notes_.clear();
		groups_.clear();
		chosen_.clear();
		uncore_.clear();
		reader_.reset();
		kmod_series_.clear();
		pmus_ = std::make_unique<PmuDevices>(root);
		cpu_ = read_cpu_identity(root);
		plan_ = plan_core_events(*pmus_, cpu_);
		for (const auto &[id, why] : plan_.unavailable)
			note(id, why);
		if (auto online = read_file(join_path(root, "/sys/devices/system/cpu/online")); online.data)
			if (auto cpus = parse_cpu_list(trim(*online.data)))
				cpus_ = *cpus;
		if (cpus_.empty()) {
			for (const auto &m : kCoreMetrics)
				note(m.id, "cannot read the online CPU list");
		} else {
			bool kmod_ok = false;
			if (opt_.use_kmod && path_exists(join_path(root, "/dev/hwsig")))
				kmod_ok = init_kmod(join_path(root, "/dev/hwsig"));
			if (!kmod_ok)
				init_perf();
		}
		init_uncore();
	}

	// ---- hwsig.ko backend ----

	bool init_kmod(const std::string &device)
	{
		try {
			client_ = std::make_unique<KmodClient>();
			KmodInfo info = client_->get_info();
			if (!info.running || info.events.empty()) {
				if (!opt_.start_kmod || !pmus_->core_pmu()) {
					kmod_problem_ = "hwsig.ko is idle";
					return false;
				}
				bool software_only = false;
				KmodConfig cfg;
				cfg.events = default_kmod_events(*pmus_, cpu_, &software_only);
				client_->configure(cfg);
				client_->start();
				kmod_started_ = true;
				info = client_->get_info();
			}
			// Records say values[i]; the configured names say which series.
			std::map<std::string, const char *> by_name;
			for (const auto &s : plan_.series)
				for (const auto &alt : s.alternatives)
					by_name.emplace(alt.name, s.series.c_str());
			bool has_cycles = false;
			for (const auto &e : info.events) {
				auto it = by_name.find(e.name);
				kmod_series_.push_back(it == by_name.end() ? std::string() : std::string(it->second));
				has_cycles |= it != by_name.end() && it->second == std::string_view(series::kPmuCycles);
			}
			if (!has_cycles) {
				// Someone else's configuration (e.g. software events only):
				// leave it running and count with perf_event_open instead.
				kmod_series_.clear();
				kmod_problem_ = "hwsig.ko runs a configuration without cycles";
				return false;
			}
			reader_ = std::make_unique<RingReader>(RingReader::open_device(device, RingReader::Start::Newest));
			kmod_status_checked_ = false;
			return true;
		} catch (const Error &e) {
			kmod_problem_ = e.what();
			reader_.reset();
			return false;
		}
	}

	// Per-event errors (e.g. -ENOENT for cycles without a PMU) come from
	// GET_STATUS; checked once, because the event set is fixed until the
	// next configuration.
	void check_kmod_status()
	{
		kmod_status_checked_ = true;
		try {
			KmodStatus st = client_->get_status();
			std::map<std::uint32_t, int> first_error;
			std::map<std::uint32_t, bool> any_ok;
			for (const auto &e : st.entries) {
				if (e.error == 0)
					any_ok[e.event_index] = true;
				else
					first_error.emplace(e.event_index, -e.error);
			}
			bool cycles_ok = false;
			int cycles_err = ENOENT;
			for (std::uint32_t i = 0; i < kmod_series_.size(); i++) {
				if (kmod_series_[i].empty())
					continue;
				if (kmod_series_[i] == series::kPmuCycles) {
					cycles_ok = any_ok[i];
					if (first_error.count(i))
						cycles_err = first_error[i];
				}
				if (!any_ok[i] && first_error.count(i))
					note_series_missing(kmod_series_[i].c_str(), "hwsig.ko: " +
											errno_name(first_error[i]) +
											" opening the event for " +
											kmod_series_[i]);
			}
			if (!cycles_ok)
				replace_core_notes(no_pmu_reason(cpu_, cycles_err, "hwsig.ko"));
		} catch (const Error &e) {
			for (const auto &m : kCoreMetrics)
				note(m.id, std::string("hwsig.ko status: ") + e.what());
		}
	}

	void collect_kmod(Snapshot &snap)
	{
		try {
			if (reader_->refresh()) {
				// A new configuration: reread which series each slot feeds.
				init(root_);
				if (!reader_)
					return collect_perf(snap);
			}
		} catch (const Error &e) {
			for (const auto &m : kCoreMetrics)
				note(m.id, std::string("hwsig.ko ring: ") + e.what());
			return;
		}
		if (!kmod_status_checked_)
			check_kmod_status();
		add_ring_counters(*reader_, kmod_series_, snap);
	}

	// ---- perf_event_open backend ----

	void init_perf()
	{
		// Pick, on the first online CPU, the first alternative of each series
		// the kernel accepts.
		const unsigned probe_cpu = cpus_.front();
		int cycles_err = 0;
		for (const auto &s : plan_.series) {
			int first_err = 0;
			std::string first_what;
			for (const auto &alt : s.alternatives) {
				try {
					PerfGroup::open({alt}, static_cast<int>(probe_cpu));
					chosen_.emplace(s.series, alt);
					first_err = 0;
					break;
				} catch (const Error &e) {
					if (!first_err) {
						first_err = e.err();
						first_what = alt.name;
					}
				}
			}
			if (first_err) {
				if (s.series == series::kPmuCycles)
					cycles_err = first_err;
				note_series_missing(s.series.c_str(), "perf " + first_what + ": " + errno_name(first_err));
			}
		}
		if (cycles_err) {
			// Without cycles there is no core PMU to speak of: one reason
			// for every metric, replacing the per-event ones.
			std::string why = cycles_err == EACCES || cycles_err == EPERM
						  ? "perf_event_open not permitted (perf cycles: " + errno_name(cycles_err) +
							    "; needs CAP_PERFMON or kernel.perf_event_paranoid <= 0)"
						  : no_pmu_reason(cpu_, cycles_err);
			if (!kmod_problem_.empty() && kmod_problem_ != "hwsig.ko is idle")
				why += "; " + kmod_problem_;
			replace_core_notes(why);
			return;
		}
		for (unsigned cpu : cpus_) {
			for (const auto &members : kGroups) {
				std::vector<PerfEventSpec> events;
				std::vector<const char *> names;
				for (const char *s : members) {
					auto it = chosen_.find(s);
					if (it == chosen_.end())
						continue;
					events.push_back(it->second);
					names.push_back(s);
				}
				if (events.empty())
					continue;
				try {
					groups_.push_back(PerCpuGroup{cpu, names, PerfGroup::open(events, static_cast<int>(cpu))});
				} catch (const Error &e) {
					for (const char *s : names)
						for (const auto &m : kCoreMetrics)
							if (s == std::string_view(m.a) || s == std::string_view(m.b))
								note(m.id, std::string("perf: ") + e.what(), cpu_scope(cpu));
				}
			}
		}
	}

	void collect_perf(Snapshot &snap)
	{
		std::map<const char *, Sum> system;
		for (const auto &g : groups_) {
			std::vector<PerfCount> counts;
			try {
				counts = g.group.read();
			} catch (const Error &) {
				continue; // e.g. the CPU went offline: no point this time
			}
			for (std::size_t i = 0; i < counts.size(); i++) {
				if (counts[i].time_running == 0)
					continue; // never scheduled: no count, not a zero
				snap.add_counter(g.series[i], cpu_scope(g.cpu), counts[i].scaled, "perf",
						 counts[i].running_fraction);
				system[g.series[i]].add(counts[i].scaled, counts[i].running_fraction);
			}
		}
		for (const auto &[s, sum] : system)
			snap.add_counter(s, "system", sum.value, "perf", sum.fraction);
	}

	// ---- uncore DRAM ----

	void init_uncore()
	{
		UncoreDramPlan plan = plan_uncore_dram(*pmus_, cpu_);
		if (plan.events.empty()) {
			note("mem.imc_read_bps", plan.unavailable_reason);
			note("mem.imc_write_bps", plan.unavailable_reason);
			return;
		}
		if (plan.kind == "amd_df") {
			const char *why = "amd_df counts DRAM reads and writes together (no read/write split)";
			note("mem.imc_read_bps", why);
			note("mem.imc_write_bps", why);
		}
		std::string first_error;
		for (auto &e : plan.events) {
			try {
				PerfGroup g = PerfGroup::open({e.spec}, static_cast<int>(e.cpu));
				uncore_.push_back(UncoreCounter{std::move(e), std::move(g)});
			} catch (const Error &x) {
				if (first_error.empty())
					first_error = x.what();
			}
		}
		if (uncore_.empty()) {
			note("mem.imc_read_bps", "uncore " + plan.kind + ": " + first_error);
			note("mem.imc_write_bps", "uncore " + plan.kind + ": " + first_error);
		}
	}

	void collect_uncore(Snapshot &snap)
	{
		std::map<std::pair<const char *, unsigned>, Sum> per_socket;
		std::map<const char *, Sum> system;
		for (const auto &u : uncore_) {
			std::vector<PerfCount> c;
			try {
				c = u.group.read();
			} catch (const Error &) {
				continue;
			}
			if (c.empty() || c[0].time_running == 0)
				continue;
			const char *s = u.event.direction == DramDirection::Read    ? series::kImcCasReads
					: u.event.direction == DramDirection::Write ? series::kImcCasWrites
										    : kImcCasReadWrite;
			// CAS commands as counted: the 64-byte factor is the catalog's,
			// and the sysfs .scale (MiB) is never applied on top of it.
			per_socket[{s, u.event.socket}].add(c[0].scaled, c[0].running_fraction);
			system[s].add(c[0].scaled, c[0].running_fraction);
		}
		for (const auto &[key, sum] : per_socket)
			snap.add_counter(key.first, "socket:" + std::to_string(key.second), sum.value, "perf",
					 sum.fraction);
		for (const auto &[s, sum] : system)
			snap.add_counter(s, "system", sum.value, "perf", sum.fraction);
	}

	PmuSourceOptions opt_;
	bool initialized_ = false;
	std::string root_;
	std::unique_ptr<PmuDevices> pmus_;
	CpuIdentity cpu_;
	CorePlan plan_;
	std::vector<unsigned> cpus_;
	std::vector<Note> notes_;

	std::map<std::string, PerfEventSpec> chosen_;
	std::vector<PerCpuGroup> groups_;
	std::vector<UncoreCounter> uncore_;

	std::unique_ptr<KmodClient> client_;
	std::unique_ptr<RingReader> reader_;
	std::vector<std::string> kmod_series_; // per configured event; empty: not a pmu.* series
	std::string kmod_problem_;
	bool kmod_started_ = false;
	bool kmod_status_checked_ = false;
};

} // namespace

void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event, Snapshot &snap)
{
	const auto &g = reader.geometry();
	const std::uint32_t gen = static_cast<std::uint32_t>(g.config_generation);
	std::map<std::string, Sum> system;
	for (unsigned cpu = 0; cpu < g.nr_cpu_ids; cpu++) {
		auto rec = reader.latest(cpu);
		// Counts restart with every configuration: never mix generations.
		if (!rec || rec->config_generation != gen)
			continue;
		for (unsigned i = 0; i < series_of_event.size() && i < HWSIG_MAX_EVENTS; i++) {
			const std::string &s = series_of_event[i];
			if (s.empty() || !(rec->valid_mask & (1u << i)))
				continue;
			PerfCount c = scale_count(rec->values[i], rec->time_enabled[i], rec->time_running[i]);
			if (c.time_running == 0)
				continue;
			snap.add_counter(s, cpu_scope(cpu), c.scaled, "kmod", c.running_fraction);
			system[s].add(c.scaled, c.running_fraction);
		}
	}
	for (const auto &[s, sum] : system)
		snap.add_counter(s, "system", sum.value, "kmod", sum.fraction);
}

std::vector<std::string> pmu_metric_ids()
{
	std::vector<std::string> ids;
	for (const auto &m : kCoreMetrics)
		ids.emplace_back(m.id);
	ids.emplace_back("mem.imc_read_bps");
	ids.emplace_back("mem.imc_write_bps");
	return ids;
}

SourcePtr make_pmu_source(PmuSourceOptions opt)
{
	return std::make_unique<PmuSource>(opt);
}

std::string no_pmu_reason(const CpuIdentity &cpu, int err, std::string_view via)
{
	return std::string("no hardware PMU") + (cpu.hypervisor ? ": running under a hypervisor" : "") + " (" +
	       std::string(via) + " cycles: " + errno_name(err) + ")";
}

std::vector<KmodEvent> default_kmod_events(const PmuDevices &pmus, const CpuIdentity &cpu, bool *software_only)
{
	std::vector<KmodEvent> out;
	auto add = [&](const PerfEventSpec &s) {
		KmodEvent e;
		e.name = s.name;
		e.pmu_type = s.type;
		e.config = s.config;
		e.config1 = s.config1;
		e.config2 = s.config2;
		out.push_back(std::move(e));
	};
	const bool software = pmus.core_pmu() == nullptr;
	if (software_only)
		*software_only = software;
	if (software) {
		for (const auto &n : default_software_event_names())
			add(pmus.resolve(n));
		return out;
	}
	for (const auto &s : plan_core_events(pmus, cpu).series)
		if (!s.alternatives.empty() && out.size() < HWSIG_MAX_EVENTS)
			add(s.alternatives.front());
	return out;
}

std::vector<std::string> split_event_list(std::string_view list)
{
	// Commas separate events, but "pmu/event=1,umask=2/" has its own commas.
	std::vector<std::string> out;
	std::string cur;
	bool in_pmu = false;
	for (char c : list) {
		if (c == '/')
			in_pmu = !in_pmu;
		if (c == ',' && !in_pmu) {
			out.push_back(cur);
			cur.clear();
			continue;
		}
		cur.push_back(c);
	}
	out.push_back(cur);
	return out;
}

// Names the default set uses ("stall-cycles", "l2-misses") are plan names,
// not perf names: look them up in this CPU's plan first.
static KmodEvent resolve_kmod_event(const PmuDevices &pmus, const CorePlan &plan, const std::string &name)
{
	PerfEventSpec spec;
	bool found = false;
	for (const auto &s : plan.series)
		if (!s.alternatives.empty() && s.alternatives.front().name == name) {
			spec = s.alternatives.front();
			found = true;
		}
	if (!found)
		spec = pmus.resolve(name);
	KmodEvent e;
	e.name = name;
	e.pmu_type = spec.type;
	e.config = spec.config;
	e.config1 = spec.config1;
	e.config2 = spec.config2;
	return e;
}

std::vector<KmodEvent> kmod_events_for(const PmuDevices &pmus, const CpuIdentity &cpu,
				       const std::vector<std::string> &names)
{
	const auto plan = plan_core_events(pmus, cpu);
	std::vector<KmodEvent> events;
	for (const auto &name : names) {
		KmodEvent e = resolve_kmod_event(pmus, plan, name);
		// An uncore PMU counts per socket/die on the CPUs of its
		// cpumask: one event per such CPU, named "<event>@<cpu>".
		const auto slash = name.find('/');
		const PmuDevice *pmu = slash == std::string::npos ? nullptr : pmus.find(std::string_view(name).substr(0, slash));
		if (!pmu || pmu->cpumask.empty()) {
			events.push_back(std::move(e));
			continue;
		}
		for (unsigned c : pmu->cpumask) {
			KmodEvent per_cpu = e;
			per_cpu.name = name + "@" + std::to_string(c);
			per_cpu.cpu = static_cast<std::int32_t>(c);
			events.push_back(std::move(per_cpu));
		}
	}
	return events;
}

} // namespace hwsig
