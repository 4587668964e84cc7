// hwsigd logs to stderr, one line per event: under journald (JOURNAL_STREAM
// names stderr) with the sd-daemon level prefix ("<3>" error ... "<7>"
// debug) that journald turns into a priority; anywhere else with a UTC
// timestamp and the level's word ("2026-11-28T23:50:01.123Z warning: ").
#pragma once

#include <string_view>

namespace hwsigd {

enum class Level { Error = 3, Warning = 4, Info = 6, Debug = 7 };

// "error" | "warning" | "info" | "debug"; anything else leaves it as is.
void set_log_level(std::string_view name);
bool log_enabled(Level l);
void log(Level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

} // namespace hwsigd
