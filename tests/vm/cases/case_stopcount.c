/* STOP disables the counters, START enables them again: software events
 * sampled every 10 ms, then STOP for 1.5 s. CPU 0's first record after
 * START (HWSIG_RECORD_F_FIRST) against its last one before STOP:
 * cpu-clock and every event's time_enabled advanced by about one period,
 * not by the 1.5 s the module was stopped (they used to count on, holding
 * their PMU slots). The counts grow again after START. */
#include "cases.h"
#include "common.h"

#include <linux/perf_event.h>

#define INTERVAL_NS 10000000ull
#define STOPPED_MS 1500
/* One period and the emulator's slowness; far below STOPPED_MS. */
#define SLACK_NS 400000000ull

static const struct hwsig_record *record_at(const struct hw_map *m, unsigned cpu, uint64_t idx)
{
	return (const void *)((const unsigned char *)hw_ring(m, cpu) + m->ctl->data_offset +
			      (idx & (m->ctl->ring_records - 1)) * m->ctl->record_size);
}

int case_stopcount(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct hwsig_record before, after, later;
	struct genl_sock s;
	struct hw_map m;

	if (setup_running(&s, INTERVAL_NS, 1024, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	sleep_ms(300);
	CHECK_OK(hw_stop(&s, &r), "STOP");
	/* A sampling work already running may still publish its record. */
	sleep_ms(100);
	uint64_t head = hw_head(&m, 0);
	CHECK(head > 5, "CPU 0 wrote %llu records in 300 ms", (unsigned long long)head);
	before = *record_at(&m, 0, head - 1);
	CHECK(before.seq == head && before.seq_end == head, "CPU 0's last record: seq %llu/%llu, head %llu",
	      (unsigned long long)before.seq, (unsigned long long)before.seq_end, (unsigned long long)head);
	sleep_ms(STOPPED_MS);
	CHECK(hw_head(&m, 0) == head, "CPU 0 wrote records while stopped");
	CHECK_OK(hw_start(&s, &r), "START");
	for (int tries = 0; tries < 100 && hw_head(&m, 0) < head + 10; tries++)
		sleep_ms(20);
	CHECK(hw_head(&m, 0) >= head + 10, "CPU 0 wrote %llu records in 2 s after START",
	      (unsigned long long)(hw_head(&m, 0) - head));
	after = *record_at(&m, 0, head);
	later = *record_at(&m, 0, head + 9);
	CHECK(after.seq == head + 1 && (after.flags & HWSIG_RECORD_F_FIRST), "first record after START: seq %llu flags %#x",
	      (unsigned long long)after.seq, after.flags);
	uint64_t wall = after.time_ns - before.time_ns;
	vm_note("records %llu ms apart; cpu-clock +%llu ms, time_enabled +%llu/+%llu/+%llu ms, context switches +%llu",
		(unsigned long long)(wall / 1000000), (unsigned long long)((after.values[0] - before.values[0]) / 1000000),
		(unsigned long long)((after.time_enabled[0] - before.time_enabled[0]) / 1000000),
		(unsigned long long)((after.time_enabled[1] - before.time_enabled[1]) / 1000000),
		(unsigned long long)((after.time_enabled[2] - before.time_enabled[2]) / 1000000),
		(unsigned long long)(after.values[2] - before.values[2]));
	CHECK(wall >= STOPPED_MS * 1000000ull, "records only %llu ms apart across a %d ms stop",
	      (unsigned long long)(wall / 1000000), STOPPED_MS);
	CHECK((before.valid_mask & 7) == 7 && (after.valid_mask & 7) == 7, "valid_mask %#x before, %#x after",
	      before.valid_mask, after.valid_mask);
	CHECK(after.values[0] - before.values[0] < SLACK_NS,
	      "cpu-clock advanced %llu ms across %llu ms of which %d stopped: it counted while stopped",
	      (unsigned long long)((after.values[0] - before.values[0]) / 1000000), (unsigned long long)(wall / 1000000),
	      STOPPED_MS);
	for (int i = 0; i < 3; i++)
		CHECK(after.time_enabled[i] - before.time_enabled[i] < SLACK_NS,
		      "event %d: time_enabled advanced %llu ms across %llu ms of which %d stopped: enabled while stopped", i,
		      (unsigned long long)((after.time_enabled[i] - before.time_enabled[i]) / 1000000),
		      (unsigned long long)(wall / 1000000), STOPPED_MS);
	CHECK(later.values[0] > after.values[0] && later.time_enabled[0] > after.time_enabled[0],
	      "cpu-clock does not count after START: %llu -> %llu", (unsigned long long)after.values[0],
	      (unsigned long long)later.values[0]);
	hw_map_close(&m);
	genl_close(&s);
	CHECK_OK(hw_stop_and_unload(), "unloading");
	return 0;
}
