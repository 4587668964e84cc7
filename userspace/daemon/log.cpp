#include "log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace hwsigd {

static std::atomic<int> g_level{static_cast<int>(Level::Info)};

void set_log_level(std::string_view name)
{
	if (name == "error")
		g_level = static_cast<int>(Level::Error);
	else if (name == "warning")
		g_level = static_cast<int>(Level::Warning);
	else if (name == "info")
		g_level = static_cast<int>(Level::Info);
	else if (name == "debug")
		g_level = static_cast<int>(Level::Debug);
}

bool log_enabled(Level l)
{
	return static_cast<int>(l) <= g_level.load(std::memory_order_relaxed);
}

void log(Level l, const char *fmt, ...)
{
	if (!log_enabled(l))
		return;
	char line[1024];
	int n = std::snprintf(line, sizeof(line), "<%d>", static_cast<int>(l));
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(line + n, sizeof(line) - static_cast<std::size_t>(n) - 1, fmt, ap);
	va_end(ap);
	// One write per line so that threads' lines never interleave.
	std::fprintf(stderr, "%s\n", line);
}

} // namespace hwsigd
