// hwsigd's main loop: owns the sampler (the one set of collectors on this
// host), takes a snapshot every interval on schedule, derives the interval,
// keeps the history, publishes the latest state for /metrics and answers
// hwsigctl's local socket. Signals arrive through a signalfd: TERM/INT stop,
// HUP re-reads the configuration.
#pragma once

#include "config.h"

namespace hwsigd {

// Returns the process exit code: 0 after SIGTERM, 1 when it cannot start.
int run_service(const Config &cfg);

} // namespace hwsigd
