/* An event bound to one CPU (as uncore events are) is counted there only:
 * status entries and record bits exist for that CPU alone. */
#include "cases.h"
#include "common.h"

#include <linux/perf_event.h>

int case_onecpu(int argc, char **argv)
{
	(void)argc; (void)argv;
	static const struct hw_event_spec ev[] = {
		{ "cpu-clock@1", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1 },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, HWSIG_EVENT_ALL_CPUS },
	};
	static struct hw_status st;
	static struct genl_reply r;
	static struct hw_reader rd;
	struct genl_sock s;
	struct hw_map m;

	if (setup_running(&s, 5000000, 256, ev, 2))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	memset(&rd, 0, sizeof(rd));
	sleep_ms(200);
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS");
	CHECK(!hw_status_find(&st, 0, 0), "GET_STATUS reports the cpu-1 event on cpu 0");
	const struct hw_status_entry *e01 = hw_status_find(&st, 0, 1);
	CHECK(e01 && e01->error == 0 && e01->value > 0, "cpu-1 event on cpu 1: %s",
	      e01 ? "error or no count" : "no status entry");
	CHECK(hw_status_find(&st, 1, 0) && hw_status_find(&st, 1, 1), "the all-CPU event lacks a CPU's entry");
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		int n;
		struct hwsig_record *rec = read_all(&rd, &m, cpu, &n);
		CHECK(n >= 10, "cpu %u: %d records in 200 ms at 5 ms", cpu, n);
		uint32_t want = cpu == 1 ? 0x3 : 0x2;
		for (int i = 0; i < n; i++)
			CHECK(rec[i].valid_mask == want && (cpu == 1 || rec[i].values[0] == 0),
			      "cpu %u record %llu: valid_mask %#x (want %#x), value[0] %llu", cpu,
			      (unsigned long long)rec[i].seq, rec[i].valid_mask, want, (unsigned long long)rec[i].values[0]);
	}
	hw_map_close(&m);
	genl_close(&s);
	return 0;
}
