// hwsigctl hist while hwsigd runs: the same histograms, read from the
// daemon's snapshots instead of a second copy of the BPF programs.
#pragma once

#include "hist_common.h"
#include "hwsig/daemon_client.h"

namespace hwsigctl::hist {

// Options that need collectors of this process's own (per-process
// selection, millisecond slots) are refused with the way out.
int run_from_daemon(const HistOptions &o, const hwsig::DaemonClient &daemon);

} // namespace hwsigctl::hist
