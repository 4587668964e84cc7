// What every hist variant shares: its options, the interval loop, the
// difference of two cumulative histograms.
#pragma once

#include <cstdio>
#include <ctime>
#include <string>
#include <unistd.h>
#include <vector>

#include "hwsig/histogram.h"
#include "interrupt.h"

namespace hwsigctl::hist {

using hwsig::Histogram;

struct HistOptions {
	std::string what; // runq | bio | vhost
	double interval = 0;
	unsigned long count = 0;
	bool ms = false, per_process = false, per_cpu = false, per_disk = false, timestamp = false;
	bool queue = false, size = false, seek = false;
	bool per_vm = false; // vhost
	std::vector<int> pids;
	std::string kind = "all"; // runq: all | wakeup | preempt
	std::string root = "/";
	bool no_daemon = false; // load our own collectors even while hwsigd runs
};

inline Histogram diff(const Histogram &prev, const Histogram &cur)
{
	if (auto d = Histogram::delta(prev, cur))
		return *d;
	return cur; // first interval, or the process was re-selected
}

// Waits one interval; forever (until Ctrl-C) when seconds <= 0. False when
// the wait ended with a stop request.
inline bool wait_interval(double seconds)
{
	if (seconds <= 0) {
		while (!hwsigctl::stop_requested())
			pause();
		return false;
	}
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return hwsigctl::sleep_until(hwsigctl::deadline_after(now, seconds));
}

inline void print_time()
{
	char buf[32];
	std::time_t t = std::time(nullptr);
	std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&t));
	std::printf("%-8s\n", buf);
}

// Runs the interval loop; print(first) prints one interval.
template <typename Print> int interval_loop(const HistOptions &o, const char *banner, Print print)
{
	hwsigctl::install_stop_handlers();
	std::printf("%s... Hit Ctrl-C to end.\n", banner);
	std::fflush(stdout);
	for (unsigned long done = 0;;) {
		bool more = wait_interval(o.interval);
		std::printf("\n");
		if (o.timestamp)
			print_time();
		print();
		std::fflush(stdout);
		++done;
		if (!more || (o.count && done >= o.count) || o.interval <= 0)
			break;
	}
	return 0;
}


} // namespace hwsigctl::hist
