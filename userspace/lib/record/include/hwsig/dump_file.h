// The flight recorder's file: what hwsigd kept of the last minutes, with
// the facts needed to read it on another machine later
// (Documentation/dump-format.rst). One zstd frame holding tab-separated
// lines; each snapshot is the local socket's snapshot wire, length-framed.
// The reader refuses anything it cannot vouch for with one message naming
// the file and what is wrong: a dump is read long after, elsewhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/snapshot_wire.h"

struct ZSTD_CCtx_s;

namespace hwsig {

// 2: the module's ring records (rings, ring_event, ring_cpu, tick), the
// PMU event plan (pmu_plan) and the trigger's snapshot time (triggered).
inline constexpr int kDumpVersion = 2;
// A dump larger than this, compressed or not, is refused (a 15-minute
// dump of a 256-CPU host with per-CPU series is a few tens of MiB).
inline constexpr std::size_t kDumpMaxBytes = 512u << 20;

// One event of the module configuration that wrote the ring records; its
// position is the index of its values in every record.
struct DumpRingEvent {
	std::string name;  // as configured ("cpu-clock", "cycles", "cpu/event=0x3c/")
	std::string pmu;   // the PMU its type names in sysfs ("software", "cpu"), else the type number
	std::string state; // the module's status: "active 2/2", "refused ENOENT 2/2", "unknown"
};

// One ring record, as the module wrote it: cumulative counts since the
// configuration (or the CPU) started, with perf's enabled/running times.
struct DumpRingRecord {
	std::uint64_t seq = 0;     // idx + 1 in its ring (free-running)
	std::uint64_t time_ns = 0; // CLOCK_MONOTONIC
	std::uint32_t flags = 0;   // HWSIG_RECORD_F_*
	std::uint32_t valid_mask = 0;
	std::vector<std::uint64_t> values, enabled, running; // one per event
};

// One CPU's ring at the dump. head == lost + other_generation + records.size().
struct DumpRingCpu {
	std::uint32_t cpu = 0;
	bool online = false;
	std::uint64_t head = 0;             // records ever written to this ring
	std::uint64_t lost = 0;             // written but not in the dump: overwritten before or while copied
	std::uint64_t other_generation = 0; // still in the ring, from an earlier configuration: left out
	std::vector<DumpRingRecord> records; // oldest first, seq strictly increasing
};

// The module's rings, read without consuming them (a mapping of the
// dump's own: the daemon's reader is not disturbed).
struct DumpRings {
	std::uint64_t generation = 0;  // the configuration the records are of
	std::uint64_t interval_ns = 0; // its tick period
	std::uint32_t ring_records = 0;
	bool running = false;
	// GET_STATUS's totals, asked right before the copy (absent: not asked).
	std::optional<std::uint64_t> status_written, status_overwritten;
	std::vector<DumpRingEvent> events;
	std::vector<DumpRingCpu> cpus; // CPU ids increasing
	const DumpRingCpu *cpu(std::uint32_t id) const;
};

// One line of the PMU event plan: which event feeds a series, on which PMU,
// or why the series is unavailable on this host.
struct DumpPlanEntry {
	std::string series; // "pmu.cycles", "imc.read_cas"
	std::string event;  // "-" when there is none
	std::string pmu;    // "-" when there is none
	std::string state;  // "planned", "unavailable: REASON"
};

struct DumpContents {
	int version = kDumpVersion;
	// Host facts, in order: kernel, cpu, hwsig version, interval, ...
	std::vector<std::pair<std::string, std::string>> facts;
	std::string trigger;         // "request", "SIGUSR1", a rule's text
	std::uint64_t created_ns = 0; // wall clock when it was written
	std::vector<SharedSnapshot> snapshots; // oldest first
	// Version 2. Monotonic time of the snapshot the trigger fired at (the
	// newest one for SIGUSR1 and requests; the rule's for a rule).
	std::optional<std::uint64_t> triggered_mono_ns;
	std::vector<DumpPlanEntry> pmu_plan;
	std::optional<DumpRings> rings;
	std::string rings_absent; // why there are no rings ("hwsig.ko is not loaded"); empty: not said
	const std::string *fact(std::string_view key) const;
};

// Writes a dump a snapshot at a time: the text of one snapshot at a time
// is held, not the whole dump's (a 256-CPU host's 15 minutes are hundreds
// of MiB of text, a few tens compressed).
class DumpWriter {
public:
	DumpWriter();
	~DumpWriter();
	DumpWriter(const DumpWriter &) = delete;
	DumpWriter &operator=(const DumpWriter &) = delete;
	// The header: version, created, trigger, triggered, facts, PMU plan,
	// then the rings or why there are none (head.snapshots unused).
	void begin(const DumpContents &head);
	// One more CPU's ring section, after begin() wrote a head with rings
	// (a large host's rings are streamed a CPU at a time, never all held).
	void add_ring_cpu(const DumpRingCpu &cpu);
	void add(const Snapshot &snap, const std::vector<Vm> &vms, const std::vector<std::string> &claimed);
	// The file's bytes.
	std::string finish();

private:
	friend std::string compress_dump_text(std::string_view text);
	void feed(std::string_view text, bool last);
	ZSTD_CCtx_s *cctx_;
	std::string out_;
};

// The file's bytes (compressed).
std::string encode_dump(const DumpContents &dump);
// The container alone: text in one checksummed zstd frame (tests build
// damaged dumps with it).
std::string compress_dump_text(std::string_view text);
// name: how errors call the input (its path). Throws hwsig::Error.
DumpContents decode_dump(std::string_view bytes, const std::string &name);
// Reads and decodes a file. Throws hwsig::Error.
DumpContents read_dump_file(const std::string &path);

} // namespace hwsig
