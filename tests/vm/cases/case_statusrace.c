/* GET_STATUS (one message) while a CPU comes and goes (big boot, 65
 * CPUs). 16 events on every CPU; CPU 62 stays offline, so with CPU 64
 * offline too 63 CPUs x 16 = 1008 entries fit one message (1023 at most:
 * Documentation/abi.rst) and with CPU 64 online 64 x 16 = 1024 do not.
 * One process takes CPU 64, the highest, online and offline for
 * STATUSRACE_S seconds (VMTEST_STATUSRACE_S) while another asks for the
 * single-message GET_STATUS in a loop. Every answer is either EMSGSIZE
 * saying to dump, or a whole message: 16 entries (events 0..15) for each
 * of the 63 CPUs other than 62 and 64, and no other entry. Counting the entries from one snapshot
 * of the online CPUs and filling from another let a CPU that came online
 * in between grow the nest to 1024 entries, whose 16-bit length wrapped:
 * the reply then held no entry at all. */
#include "cases.h"
#include "common.h"

#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define RACE_CPU 64
#define OFF_CPU 62

static int set_online(int cpu, int on)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return write_file_str(path, on ? "1" : "0");
}

static int check_reply(const struct hw_status *st, int n)
{
	static int per_cpu[VM_MAX_CPUS];
	static uint32_t events[VM_MAX_CPUS];
	int cpus = 0;

	memset(per_cpu, 0, sizeof(per_cpu));
	memset(events, 0, sizeof(events));
	for (int k = 0; k < st->nr_entries; k++) {
		const struct hw_status_entry *e = &st->entry[k];
		CHECK(e->cpu < VM_MAX_CPUS && e->event_index < HWSIG_MAX_EVENTS && e->cpu != OFF_CPU,
		      "reply %d: entry %d names event %u on CPU %u", n, k, e->event_index, e->cpu);
		CHECK(!(events[e->cpu] & (1u << e->event_index)), "reply %d: event %u on CPU %u twice", n,
		      e->event_index, e->cpu);
		events[e->cpu] |= 1u << e->event_index;
		cpus += !per_cpu[e->cpu]++;
	}
	CHECK(cpus == 63 && !per_cpu[64], "reply %d: %d entries for %d CPUs%s: want 16 for each of 63 CPUs, "
	      "CPU 64 not among them (the nest's length wrapped?)", n, st->nr_entries, cpus,
	      per_cpu[64] ? ", CPU 64 among them" : "");
	for (int c = 0; c < VM_MAX_CPUS; c++)
		CHECK(!per_cpu[c] || events[c] == 0xffff, "reply %d: CPU %d has events %#x, want all 16", n, c,
		      events[c]);
	CHECK(st->nr_entries <= 1023, "reply %d: %d entries in one nest (1023 at most)", n, st->nr_entries);
	return 0;
}

int case_statusrace(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	static struct hw_status st;
	static char names[HWSIG_MAX_EVENTS][16];
	struct hw_event_spec ev[HWSIG_MAX_EVENTS];
	struct genl_sock s;

	CHECK(possible_cpus() == 65 && cpu_online(RACE_CPU) && cpu_online(OFF_CPU), "%d possible CPUs: want 65 (big boot)",
	      possible_cpus());
	for (int i = 0; i < HWSIG_MAX_EVENTS; i++) {
		snprintf(names[i], sizeof(names[i]), "sw%d", i);
		ev[i] = (struct hw_event_spec){ names[i], PERF_TYPE_SOFTWARE,
						i % 2 ? PERF_COUNT_SW_CONTEXT_SWITCHES : PERF_COUNT_SW_CPU_CLOCK,
						HWSIG_EVENT_ALL_CPUS };
	}
	if (setup_running(&s, 100000000, 64, ev, HWSIG_MAX_EVENTS))
		return 1;
	CHECK_OK(set_online(OFF_CPU, 0), "offlining CPU 62");
	int err = hw_get_status_doit(&s, &st, &r);
	if (err != -EMSGSIZE || !strstr(r.extack, "dump")) {
		vm_fail(__FILE__, __LINE__, "GET_STATUS with 64 CPUs x 16 events: %s \"%s\", want EMSGSIZE", strerror(-err),
			r.extack);
		goto err_online;
	}
	if (set_online(RACE_CPU, 0)) {
		vm_fail(__FILE__, __LINE__, "offlining CPU %d", RACE_CPU);
		goto err_online;
	}
	err = hw_get_status_doit(&s, &st, &r);
	if (err) {
		vm_fail(__FILE__, __LINE__, "GET_STATUS with 63 CPUs x 16 events: %s \"%s\"", strerror(-err), r.extack);
		goto err_online;
	}
	if (check_reply(&st, 0))
		goto err_online;

	long seconds = env_count("VMTEST_STATUSRACE_S", 20);
	pid_t child = fork();
	if (child == 0) {
		uint64_t end = now_ns() + (uint64_t)seconds * 1000000000ull;
		int flips = 0;
		while (now_ns() < end) {
			if (set_online(RACE_CPU, 1) || set_online(RACE_CPU, 0))
				_exit(1);
			flips++;
		}
		printf("    CPU %d went offline and online %d times\n", RACE_CPU, flips);
		_exit(0);
	}
	CHECK(child > 0, "fork: %s", strerror(errno));
	int replies = 0, refused = 0, status = 0, rc = 0;
	while (waitpid(child, &status, WNOHANG) == 0) {
		err = hw_get_status_doit(&s, &st, &r);
		if (err == -EMSGSIZE && strstr(r.extack, "dump")) {
			refused++;
			continue;
		}
		if (err) {
			vm_fail(__FILE__, __LINE__, "GET_STATUS %d: %s \"%s\"%s", replies + refused, strerror(-err), r.extack,
				err == -ENODATA ? " (a reply that does not parse: the nest's length wrapped?)" : "");
			rc = 1;
			break;
		}
		replies++;
		if (check_reply(&st, replies + refused)) {
			rc = 1;
			break;
		}
	}
	if (rc) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		goto err_online;
	}
	vm_note("%d whole replies, %d EMSGSIZE refusals while CPU %d came and went", replies, refused, RACE_CPU);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the hotplug process failed (status %#x)", status);
	CHECK(replies > 10 && refused > 0, "%d replies and %d refusals: the race was not run", replies, refused);
	set_online(RACE_CPU, 1);
	set_online(OFF_CPU, 1);
	genl_close(&s);
	CHECK_OK(hw_stop_and_unload(), "unloading");
	return 0;

err_online:
	set_online(RACE_CPU, 1);
	set_online(OFF_CPU, 1);
	hw_stop_and_unload();
	return 1;
}
