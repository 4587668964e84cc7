#include "interrupt.h"

#include <cerrno>
#include <csignal>

namespace hwsigctl {

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int)
{
	g_stop = 1;
}

} // namespace

void install_stop_handlers()
{
	struct sigaction sa = {};
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	// No SA_RESTART: the sleep must return at once.
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested()
{
	return g_stop != 0;
}

struct timespec deadline_after(const struct timespec &from, double seconds)
{
	auto ns = static_cast<long long>(seconds * 1e9) + from.tv_nsec;
	struct timespec d = from;
	d.tv_sec += static_cast<time_t>(ns / 1000000000);
	d.tv_nsec = static_cast<long>(ns % 1000000000);
	return d;
}

bool sleep_until(const struct timespec &deadline)
{
	while (!g_stop) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
		if (rc == 0)
			return true;
		if (rc != EINTR)
			return false;
	}
	return false;
}

} // namespace hwsigctl
