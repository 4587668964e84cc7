#include "log.h"

#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sys/stat.h>

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

namespace {

// systemd sets JOURNAL_STREAM to "DEV:INODE" of the stream it connected
// to stderr: the same file means journald reads the lines, and takes
// their "<N>" prefixes as priorities and stamps them itself.
bool stderr_is_journal()
{
	const char *env = std::getenv("JOURNAL_STREAM");
	std::uintmax_t dev = 0, ino = 0;
	struct stat st {};
	if (!env || std::sscanf(env, "%ju:%ju", &dev, &ino) != 2 || fstat(2, &st) != 0)
		return false;
	return static_cast<std::uintmax_t>(st.st_dev) == dev && static_cast<std::uintmax_t>(st.st_ino) == ino;
}

const char *level_word(Level l)
{
	switch (l) {
	case Level::Error:
		return "error";
	case Level::Warning:
		return "warning";
	case Level::Info:
		return "info";
	default:
		return "debug";
	}
}

// Anywhere else (by hand, another supervisor, a file): when and how bad,
// "2026-11-28T23:50:01.123Z warning: ", in UTC as every output of hwsig.
int stamp(char *out, std::size_t size, Level l)
{
	struct timespec now {};
	clock_gettime(CLOCK_REALTIME, &now);
	struct tm tm {};
	char when[32] = "?";
	if (gmtime_r(&now.tv_sec, &tm))
		std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	return std::snprintf(out, size, "%s.%03ldZ %s: ", when, now.tv_nsec / 1000000, level_word(l));
}

} // namespace

void log(Level l, const char *fmt, ...)
{
	if (!log_enabled(l))
		return;
	static const bool journal = stderr_is_journal();
	char line[1024];
	int n = journal ? std::snprintf(line, sizeof(line), "<%d>", static_cast<int>(l))
			: stamp(line, sizeof(line), l);
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(line + n, sizeof(line) - static_cast<std::size_t>(n) - 1, fmt, ap);
	va_end(ap);
	// One write per line so that threads' lines never interleave.
	std::fprintf(stderr, "%s\n", line);
}

} // namespace hwsigd
