/* The reconcile work never runs on a CPU that just came online, nor on a
 * nohz_full or isolated one (big boot: isolcpus=63 nohz_full=64). With
 * sampling running, CPUs 64 and 63 go offline and come back, three times
 * each; tracefs's workqueue_execute_start names the CPU every run of
 * hwsig_reconcile_work executed on: none is 63 or 64, and it ran at all
 * (at least 3 times). (It was queued on system_wq from the online
 * callback, which runs on the CPU coming up: the work ran right there.) */
#include "cases.h"
#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#define TRACING "/sys/kernel/tracing/"

static int set_online(int cpu, int on)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return write_file_str(path, on ? "1" : "0");
}

int case_reconcilecpu(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct genl_sock s;
	int runs[VM_MAX_CPUS] = { 0 };

	CHECK(possible_cpus() == 65, "%d possible CPUs: want 65 (big boot)", possible_cpus());
	CHECK_OK(write_file_str(TRACING "tracing_on", "0"), "tracefs (mounted by init)");
	CHECK_OK(write_file_str(TRACING "buffer_size_kb", "64"), "trace buffer size");
	CHECK_OK(write_file_flags(TRACING "trace", "", O_TRUNC), "clearing the trace");
	CHECK_OK(write_file_str(TRACING "events/workqueue/workqueue_execute_start/enable", "1"),
		 "enabling workqueue_execute_start");
	if (setup_running(&s, 100000000, 64, hw_sw_events, 3))
		return 1;
	sleep_ms(300);
	CHECK_OK(write_file_str(TRACING "tracing_on", "1"), "tracing on");
	int steps = 0;
	for (int i = 0; i < 3; i++) {
		for (int cpu = 64; cpu >= 63; cpu--) {
			CHECK_OK(set_online(cpu, 0), "offlining");
			CHECK_OK(set_online(cpu, 1), "onlining");
			steps += 2;
			sleep_ms(200);
		}
	}
	sleep_ms(500);
	CHECK_OK(write_file_str(TRACING "tracing_on", "0"), "tracing off");
	write_file_str(TRACING "events/workqueue/workqueue_execute_start/enable", "0");

	FILE *f = fopen(TRACING "trace", "r");
	CHECK(f, "opening the trace: %s", strerror(errno));
	char line[512];
	int total = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "hwsig_reconcile_work"))
			continue;
		char *b = strchr(line, '[');
		int cpu = b ? atoi(b + 1) : -1;
		if (cpu >= 0 && cpu < VM_MAX_CPUS)
			runs[cpu]++;
		total++;
	}
	fclose(f);
	char where[256] = "";
	for (int c = 0; c < VM_MAX_CPUS; c++)
		if (runs[c])
			snprintf(where + strlen(where), sizeof(where) - strlen(where), " cpu%d:%d", c, runs[c]);
	vm_note("%d hotplug steps; hwsig_reconcile_work ran %d times:%s", steps, total, where);
	genl_close(&s);
	CHECK_OK(hw_stop_and_unload(), "unloading");
	CHECK(total >= 3, "hwsig_reconcile_work ran %d times for %d hotplug steps", total, steps);
	CHECK(!runs[63] && !runs[64], "hwsig_reconcile_work ran %d times on isolated CPU 63 and %d on nohz_full CPU 64",
	      runs[63], runs[64]);
	return 0;
}
