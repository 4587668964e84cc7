/* Hardware events where there is no PMU: each (event, CPU) reports the
 * errno the kernel gives perf_event_open for the same event here, and the
 * software events configured alongside keep counting. */
#include "cases.h"
#include "common.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What the kernel says to a user asking for this event on CPU 0: the
 * ground truth for the module's per-CPU error. 0 if it works. */
static int perf_errno(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

int case_hardware(int argc, char **argv)
{
	(void)argc; (void)argv;
	static const struct hw_event_spec ev[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, HWSIG_EVENT_ALL_CPUS },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, HWSIG_EVENT_ALL_CPUS },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, HWSIG_EVENT_ALL_CPUS },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, HWSIG_EVENT_ALL_CPUS },
	};
	static struct hw_status st1, st2;
	static struct genl_reply r;
	static struct hw_reader rd;
	struct genl_sock s;
	struct hw_map m;

	int want_cycles = perf_errno(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	int want_instr = perf_errno(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	vm_note("perf_event_open here: cycles -> %s, instructions -> %s",
		want_cycles ? strerror(want_cycles) : "ok", want_instr ? strerror(want_instr) : "ok");
	CHECK(want_cycles && want_instr, "this guest has a hardware PMU: the case assumes none");

	if (setup_running(&s, 10000000, 1024, ev, 4))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	hw_reader_init_at_head(&rd, &m);
	sleep_ms(300);
	CHECK_OK(hw_get_status(&s, &st1, &r), "GET_STATUS");
	CHECK(st1.running == 1, "GET_STATUS running %u", st1.running);
	unsigned ncpu = m.ctl->nr_cpu_ids;
	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		const int want[4] = { 0, -want_cycles, -want_instr, 0 };
		for (uint32_t e = 0; e < 4; e++) {
			const struct hw_status_entry *x = hw_status_find(&st1, e, cpu);
			CHECK(x, "GET_STATUS has no entry for event %u cpu %u", e, cpu);
			CHECK(x->error == want[e], "event %s cpu %u: error %d (%s), want %d", ev[e].name, cpu,
			      x->error, x->error ? strerror(-x->error) : "ok", want[e]);
			if (!want[e])
				CHECK(x->value > 0, "event %s cpu %u: value 0 after 300 ms", ev[e].name, cpu);
		}
	}
	sleep_ms(300);
	CHECK_OK(hw_get_status(&s, &st2, &r), "GET_STATUS");
	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		const struct hw_status_entry *a = hw_status_find(&st1, 0, cpu), *b = hw_status_find(&st2, 0, cpu);
		CHECK(a && b && b->value > a->value + 100000000ull,
		      "cpu %u: cpu-clock did not advance by 100 ms over 300 ms (%llu -> %llu)", cpu,
		      a ? (unsigned long long)a->value : 0ull, b ? (unsigned long long)b->value : 0ull);
		int n;
		struct hwsig_record *rec = read_all(&rd, &m, cpu, &n);
		CHECK(n >= 30, "cpu %u: %d records in 600 ms at 10 ms", cpu, n);
		for (int i = 0; i < n; i++) {
			CHECK(rec[i].valid_mask == 0x9, "cpu %u record %llu valid_mask %#x, want 0x9 (software only)",
			      cpu, (unsigned long long)rec[i].seq, rec[i].valid_mask);
			CHECK(rec[i].values[1] == 0 && rec[i].values[2] == 0,
			      "cpu %u record %llu: hardware slots hold values %llu %llu", cpu,
			      (unsigned long long)rec[i].seq, (unsigned long long)rec[i].values[1],
			      (unsigned long long)rec[i].values[2]);
			if (i)
				CHECK(rec[i].values[0] > rec[i - 1].values[0], "cpu %u: cpu-clock stuck at %llu", cpu,
				      (unsigned long long)rec[i].values[0]);
		}
	}
	hw_map_close(&m);
	genl_close(&s);
	return 0;
}
