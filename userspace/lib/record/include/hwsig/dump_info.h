// What `hwsigctl replay --info` says of a dump: its format, trigger and
// snapshot span, the host's facts, the PMU plan and hwsig.ko's rings, one
// tab-separated line each (Documentation/dump-format.rst).
#pragma once

#include <string>

#include "hwsig/dump_file.h"

namespace hwsig {

std::string render_dump_info(const DumpContents &dump);

// "0, 1, 3" (the CPUs whose rings the dump holds), or "none".
std::string dump_ring_cpus(const DumpRings &rings);

} // namespace hwsig
