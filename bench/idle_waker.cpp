// The floor of an always-on sampler on this machine: a process that wakes
// once per interval on an absolute schedule, as hwsigd's loop does, and does
// nothing else. scripts/bench-daemon measures it beside hwsigd: what hwsigd
// costs above it is its own work, the rest is the wakeup (a timer interrupt,
// a context switch in and out), which on a paravirtualised guest is far from
// free.
//
// usage: idle_waker [INTERVAL_S]   (default 1; runs until killed)
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

int main(int argc, char **argv)
{
	const double interval = argc > 1 ? std::strtod(argv[1], nullptr) : 1.0;
	if (!(interval >= 0.001 && interval <= 3600)) {
		std::fprintf(stderr, "idle_waker: interval must be 0.001 .. 3600 s, not '%s'\n", argv[1]);
		return 2;
	}
	const long long step = static_cast<long long>(interval * 1e9);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		long long ns = next.tv_nsec + step;
		next.tv_sec += static_cast<time_t>(ns / 1000000000);
		next.tv_nsec = static_cast<long>(ns % 1000000000);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
		}
	}
}
