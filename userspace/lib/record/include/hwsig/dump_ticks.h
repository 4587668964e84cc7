// `hwsigctl replay FILE --ticks`: the module's ring records of a dump at
// tick resolution, one row per record and CPU, with the counts of each
// event over that tick (the records hold cumulative counts: a row is the
// difference to the record before it, scaled for multiplexing), IPC when
// the plan had cycles and instructions, and a gap line wherever records
// were lost (Documentation/hwsigctl.rst, "replay").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hwsig/dump_file.h"

namespace hwsig {

struct TickOptions {
	std::optional<std::uint32_t> cpu; // only this CPU
	bool json = false;                // JSON lines instead of a table
	// Reference for the t_s column: the trigger's snapshot when the dump
	// has one, else the oldest record.
	std::optional<std::uint64_t> triggered_mono_ns;
};

// The rendered text. The caller checks that rings exist and hold opt.cpu.
std::string render_ticks(const DumpRings &rings, const TickOptions &opt);

} // namespace hwsig
