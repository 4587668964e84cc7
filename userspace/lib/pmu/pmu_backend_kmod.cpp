// The PMU source's hwsig.ko backend (pmu_backend.h): core counters from the
// module's per-CPU rings, the module started with the default events when
// it is idle, and stopped again by whoever started it.

#include <cerrno>

#include "hwsig/error.h"
#include "hwsig/series.h"
#include "hwsig/source_pmu.h"
#include "hwsig/pmu_backend.h"

namespace hwsig {

void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event,
		       ScaledCounters &counters, Snapshot &snap)
{
	add_ring_counters(reader, series_of_event, reader.geometry().config_generation, counters, snap);
}

void add_ring_counters(const RingReader &reader, const std::vector<std::string> &series_of_event,
		       std::uint64_t generation, ScaledCounters &counters, Snapshot &snap)
{
	const auto &g = reader.geometry();
	const std::uint32_t gen = static_cast<std::uint32_t>(generation);
	for (unsigned cpu = 0; cpu < g.nr_cpu_ids; cpu++) {
		auto rec = reader.latest(cpu);
		// Counts restart with every configuration: never mix generations.
		if (!rec || rec->config_generation != gen)
			continue;
		for (unsigned i = 0; i < series_of_event.size() && i < HWSIG_MAX_EVENTS; i++) {
			const std::string &s = series_of_event[i];
			if (s.empty() || !(rec->valid_mask & (1u << i)))
				continue;
			// Each event is its own perf event in the module, not a
			// group: each has its own times, and is scaled by them.
			counters.read({cpu, i}, s, pmu::cpu_scope(cpu),
				      CounterReading{rec->values[i], rec->time_enabled[i], rec->time_running[i]});
		}
	}
	counters.add_to(snap, "kmod");
}

namespace pmu {

KmodBackend::~KmodBackend()
{
	if (started_ && client_) {
		try {
			client_->stop();
		} catch (const Error &) {
			// Nothing to do at teardown: the module keeps running.
		}
	}
}

void KmodBackend::reset()
{
	reader_.reset();
	series_.clear();
	counters_.clear();
}

bool KmodBackend::init(const std::string &device, const PmuDevices &pmus, const CpuIdentity &cpu,
		       const CorePlan &plan, bool start)
{
	cpu_ = cpu;
	try {
		client_ = std::make_unique<KmodClient>();
		KmodInfo info = client_->get_info();
		if (!info.running || info.events.empty()) {
			if (!start || !pmus.core_pmu()) {
				problem_ = "hwsig.ko is idle";
				return false;
			}
			KmodConfig cfg;
			cfg.events = default_kmod_events(pmus, cpu, nullptr);
			client_->configure(cfg);
			client_->start();
			started_ = true;
			info = client_->get_info();
		}
		// The event list labels records of its own generation only: open
		// the rings, then make sure the configuration did not change
		// between GET_INFO and the mapping (else ask again).
		for (int attempt = 1;; attempt++) {
			reader_ = std::make_unique<RingReader>(
				RingReader::open_device(device, RingReader::Start::Newest));
			if (reader_->geometry().config_generation == info.config_generation)
				break;
			if (attempt == 5)
				throw Error("hwsig.ko: the configuration kept changing while it was read", EAGAIN);
			info = client_->get_info();
		}
		series_generation_ = info.config_generation;
		counters_.clear(); // a configuration's counts start from zero
		// Records say values[i]; the configured names say which series.
		std::map<std::string, const char *> by_name;
		for (const auto &s : plan.series)
			by_name.emplace(s.event.name, s.series.c_str());
		bool has_cycles = false;
		for (const auto &e : info.events) {
			auto it = by_name.find(e.name);
			series_.push_back(it == by_name.end() ? std::string() : std::string(it->second));
			has_cycles |= it != by_name.end() && it->second == std::string_view(series::kPmuCycles);
		}
		if (!has_cycles) {
			// Someone else's configuration (e.g. software events only):
			// leave it running and count with perf_event_open instead.
			series_.clear();
			reader_.reset();
			problem_ = "hwsig.ko runs a configuration without cycles";
			return false;
		}
		status_checked_ = false;
		return true;
	} catch (const Error &e) {
		problem_ = e.what();
		reader_.reset();
		return false;
	}
}

// Per-event errors (e.g. -ENOENT for cycles without a PMU) come from
// GET_STATUS; checked once, because the event set is fixed until the next
// configuration.
void KmodBackend::check_status(PmuNotes &notes)
{
	status_checked_ = true;
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
		for (std::uint32_t i = 0; i < series_.size(); i++) {
			if (series_[i].empty())
				continue;
			if (series_[i] == series::kPmuCycles) {
				cycles_ok = any_ok[i];
				if (first_error.count(i))
					cycles_err = first_error[i];
			}
			if (!any_ok[i] && first_error.count(i))
				notes.series_missing({series_[i]}, errno_code(first_error[i]), "hwsig.ko: " + errno_name(first_error[i]) +
									   " opening the event for " + series_[i]);
		}
		if (!cycles_ok)
			notes.replace_core(UnavailableCode::unsupported, no_pmu_reason(cpu_, cycles_err, "hwsig.ko"));
	} catch (const Error &e) {
		notes.core_missing(UnavailableCode::read_error, std::string("hwsig.ko status: ") + e.what());
	}
}

KmodBackend::Refresh KmodBackend::refresh(PmuNotes &notes)
{
	try {
		return reader_->refresh() ? Refresh::Reconfigured : Refresh::Same;
	} catch (const Error &e) {
		notes.core_missing(UnavailableCode::read_error, std::string("hwsig.ko ring: ") + e.what());
		return Refresh::Failed;
	}
}

void KmodBackend::collect(Snapshot &snap, PmuNotes &notes)
{
	if (!status_checked_)
		check_status(notes);
	// Only records of the generation series_ was built from (a
	// reconfiguration since shows in refresh(), which has the caller init
	// again).
	add_ring_counters(*reader_, series_, series_generation_, counters_, snap);
}

} // namespace pmu

} // namespace hwsig
