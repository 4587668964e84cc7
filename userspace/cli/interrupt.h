// Ctrl-C / SIGTERM for the interval loops of stat and hist: the first
// signal ends the loop (which then prints its summary), it never kills.
#pragma once

#include <ctime>

namespace hwsigctl {

void install_stop_handlers();
bool stop_requested();
// Deadline `seconds` after `from` on CLOCK_MONOTONIC.
struct timespec deadline_after(const struct timespec &from, double seconds);
// Sleeps until the absolute CLOCK_MONOTONIC deadline; false when a stop was
// requested (or the clock failed) instead.
bool sleep_until(const struct timespec &deadline);

} // namespace hwsigctl
