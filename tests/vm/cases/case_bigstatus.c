/* GET_STATUS past one nest's 1023 entries (big boot: 65 vCPUs x 16
 * events = 1040 entries). The dump answers with the summary and one
 * message per CPU; checked entry by entry: exactly one entry per (event,
 * online CPU), each active, its time_enabled growing between two dumps and
 * cpu-clock's value too; the summary agrees with the ring heads. The
 * single-message GET_STATUS refuses with EMSGSIZE and says to dump
 * instead (it used to wrap the nest length and send garbage). */
#include "cases.h"
#include "common.h"

#include <linux/perf_event.h>
#include <stdio.h>

int case_bigstatus(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	static struct hw_status st, st2;
	static char names[HWSIG_MAX_EVENTS][16];
	struct hw_event_spec ev[HWSIG_MAX_EVENTS];
	struct genl_sock s;
	static const uint64_t cfgs[] = { PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
					 PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS };

	int ncpu = possible_cpus(), online = 0;
	for (int c = 0; c < ncpu; c++)
		online += cpu_online(c);
	CHECK(online * HWSIG_MAX_EVENTS > 1023, "%d online CPUs x %d events = %d entries: not past 1023 (big boot?)",
	      online, HWSIG_MAX_EVENTS, online * HWSIG_MAX_EVENTS);
	for (int i = 0; i < HWSIG_MAX_EVENTS; i++) {
		snprintf(names[i], sizeof(names[i]), "sw%d", i);
		ev[i] = (struct hw_event_spec){ names[i], PERF_TYPE_SOFTWARE, cfgs[i % 4], HWSIG_EVENT_ALL_CPUS };
	}
	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the family");
	/* Every CPU, the isolated ones too. */
	int err = hw_configure_flags(&s, 100000000, 64, ev, HWSIG_MAX_EVENTS, HWSIG_CONFIG_F_ISOLATED_CPUS, &r);
	CHECK(!err, "CONFIGURE: %s \"%s\"", strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START");
	sleep_ms(500);

	err = hw_get_status_doit(&s, &st, &r);
	CHECK(err == -EMSGSIZE && strstr(r.extack, "dump"), "single-message GET_STATUS with %d entries: %s \"%s\", want EMSGSIZE",
	      online * HWSIG_MAX_EVENTS, strerror(-err), r.extack);

	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS dump");
	CHECK(st.messages == 1 + online, "%d messages, want the summary + %d CPUs", st.messages, online);
	CHECK(st.nr_entries == online * HWSIG_MAX_EVENTS, "%d entries, want %d", st.nr_entries, online * HWSIG_MAX_EVENTS);
	CHECK(st.running && st.have_written && st.have_cost, "summary: running %u written %d cost %d", st.running,
	      st.have_written, st.have_cost);
	/* Every CPU samples again (two more records each: the status values
	 * are the last sample's) before the second dump. 65 vCPUs share the
	 * host's cores: that may take a while, so wait for it, not a time. */
	struct hw_map hm;
	CHECK_OK(hw_map_open(&hm), "mapping");
	uint64_t heads0[VM_MAX_CPUS];
	for (int c = 0; c < ncpu; c++)
		heads0[c] = hw_head(&hm, (unsigned)c);
	int lagging = -1;
	for (int tries = 0; tries < 600; tries++) {
		lagging = -1;
		for (int c = 0; c < ncpu && lagging < 0; c++)
			if (cpu_online(c) && hw_head(&hm, (unsigned)c) < heads0[c] + 2)
				lagging = c;
		if (lagging < 0)
			break;
		sleep_ms(100);
	}
	hw_map_close(&hm);
	CHECK(lagging < 0, "CPU %d wrote fewer than 2 records in 60 s", lagging);
	CHECK_OK(hw_get_status(&s, &st2, &r), "second GET_STATUS dump");
	for (int c = 0; c < ncpu; c++) {
		if (!cpu_online(c))
			continue;
		for (uint32_t i = 0; i < HWSIG_MAX_EVENTS; i++) {
			int n = 0;
			for (int k = 0; k < st.nr_entries; k++)
				n += st.entry[k].event_index == i && st.entry[k].cpu == (uint32_t)c;
			CHECK(n == 1, "event %u CPU %d: %d entries, want 1", i, c, n);
			const struct hw_status_entry *a = hw_status_find(&st, i, (uint32_t)c);
			const struct hw_status_entry *b = hw_status_find(&st2, i, (uint32_t)c);
			CHECK(a->error == 0 && b && b->error == 0, "event %u CPU %d: error %d / %d", i, c, a->error,
			      b ? b->error : 9999);
			CHECK(b->time_enabled > a->time_enabled, "event %u CPU %d: time_enabled %llu -> %llu", i, c,
			      (unsigned long long)a->time_enabled, (unsigned long long)b->time_enabled);
			if (cfgs[i % 4] == PERF_COUNT_SW_CPU_CLOCK)
				CHECK(b->value > a->value, "cpu-clock (event %u) on CPU %d: %llu -> %llu", i, c,
				      (unsigned long long)a->value, (unsigned long long)b->value);
		}
	}
	for (int k = 0; k < st.nr_entries; k++)
		CHECK(st.entry[k].event_index < HWSIG_MAX_EVENTS && (int)st.entry[k].cpu < ncpu &&
		      cpu_online((int)st.entry[k].cpu), "entry %d: event %u CPU %u does not exist", k,
		      st.entry[k].event_index, st.entry[k].cpu);
	/* The summary counts every ring. */
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS dump after STOP");
	struct hw_map m;
	CHECK_OK(hw_map_open(&m), "mapping");
	uint64_t heads = 0;
	for (int c = 0; c < ncpu; c++)
		heads += hw_head(&m, (unsigned)c);
	CHECK(st.records_written == heads && heads > 0, "summary written %llu, ring heads sum %llu",
	      (unsigned long long)st.records_written, (unsigned long long)heads);
	hw_map_close(&m);
	genl_close(&s);
	/* 1040 counters released before the next case. */
	CHECK_OK(hw_stop_and_unload(), "unloading");
	vm_note("%d CPUs x %d events: %d entries in %d messages, each checked", online, HWSIG_MAX_EVENTS,
		online * HWSIG_MAX_EVENTS, 1 + online);
	return 0;
}
