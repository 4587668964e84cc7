/* Software events on every CPU against ground truth: the record rate
 * against the configured interval and the wall clock, cpu-clock against
 * elapsed time, and context-switches against a pinned pipe ping-pong. */
#include "cases.h"
#include "common.h"
#include "workload.h"

#include <stdlib.h>
#include <unistd.h>

#define INTERVAL_NS 10000000ull
#define ROUND_TRIPS 3000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Ordering, flags and counter sanity of one CPU's consecutive records. */
static int check_stream(const struct hwsig_record *rec, int n, unsigned cpu, uint32_t gen)
{
	for (int i = 0; i < n; i++) {
		CHECK(rec[i].cpu == cpu, "cpu %u ring holds a record of cpu %u", cpu, rec[i].cpu);
		CHECK(rec[i].config_generation == gen, "cpu %u record generation %u, control page %u",
		      cpu, rec[i].config_generation, gen);
		CHECK(rec[i].valid_mask == 0x7, "cpu %u record valid_mask %#x, want 0x7", cpu, rec[i].valid_mask);
		for (int e = 0; e < 3; e++)
			CHECK(rec[i].time_running[e] == rec[i].time_enabled[e],
			      "cpu %u event %d multiplexed: enabled %llu running %llu", cpu, e,
			      (unsigned long long)rec[i].time_enabled[e], (unsigned long long)rec[i].time_running[e]);
		if (!i)
			continue;
		CHECK(rec[i].seq == rec[i - 1].seq + 1, "cpu %u seq %llu after %llu", cpu,
		      (unsigned long long)rec[i].seq, (unsigned long long)rec[i - 1].seq);
		CHECK(rec[i].time_ns > rec[i - 1].time_ns, "cpu %u time went %llu -> %llu", cpu,
		      (unsigned long long)rec[i - 1].time_ns, (unsigned long long)rec[i].time_ns);
		CHECK(!(rec[i].flags & HWSIG_RECORD_F_FIRST), "cpu %u record seq %llu flagged FIRST mid-run",
		      cpu, (unsigned long long)rec[i].seq);
		for (int e = 0; e < 3; e++)
			CHECK(rec[i].values[e] >= rec[i - 1].values[e], "cpu %u event %d went down %llu -> %llu",
			      cpu, e, (unsigned long long)rec[i - 1].values[e], (unsigned long long)rec[i].values[e]);
	}
	return 0;
}

int case_software(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct genl_sock s;
	struct hw_map m;
	static struct hw_reader rd;

	static struct hw_status st;
	static struct genl_reply r;
	CHECK_OK(hw_reload(), "reloading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the hwsig genl family");
	int err = hw_configure(&s, INTERVAL_NS, 1024, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE: %s (extack \"%s\")", strerror(-err), r.extack);
	/* The timer periods begin inside START and end inside STOP. */
	uint64_t t_start0 = now_ns();
	CHECK_OK(hw_start(&s, &r), "START");
	uint64_t t_start = now_ns();
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	unsigned ncpu = m.ctl->nr_cpu_ids;
	CHECK(ncpu >= 2, "needs 2 CPUs, module reports %u", ncpu);
	CHECK(m.ctl->running == 1 && m.ctl->nr_events == 3, "control page running %u nr_events %u",
	      m.ctl->running, m.ctl->nr_events);
	/* Every CPU's first record after START is flagged FIRST. */
	sleep_ms(100);
	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		CHECK(hw_head(&m, cpu) > 0, "cpu %u wrote nothing in 100 ms", cpu);
		const struct hwsig_record *r0 = (const void *)((const unsigned char *)hw_ring(&m, cpu) + m.ctl->data_offset);
		CHECK(r0->seq == 1 && (r0->flags & HWSIG_RECORD_F_FIRST), "cpu %u record 0: seq %llu flags %#x",
		      cpu, (unsigned long long)r0->seq, r0->flags);
	}
	memset(&rd, 0, sizeof(rd));	/* read from record 0 */

	/* The ground truth: forced context switches on CPU 1 while this
	 * process waits on CPU 0. */
	pin_to_cpu(0);
	sleep_ms(200);
	uint64_t t0 = now_ns();
	CHECK_OK(pingpong_pinned(1, ROUND_TRIPS), "ping-pong on cpu 1");
	uint64_t t1 = now_ns();
	sleep_ms(300);
	uint64_t t_end = now_ns();
	vm_note("ping-pong %d round trips on cpu 1 took %llu ms", ROUND_TRIPS, (unsigned long long)((t1 - t0) / 1000000));

	uint32_t gen = (uint32_t)m.ctl->config_generation;
	for (unsigned cpu = 0; cpu < ncpu; cpu++) {
		int n;
		struct hwsig_record *rec = read_all(&rd, &m, cpu, &n);
		CHECK(rd.lost[cpu] == 0, "cpu %u lost %llu records with a 1024 ring", cpu, (unsigned long long)rd.lost[cpu]);
		CHECK(n >= 10, "cpu %u: only %d records", cpu, n);
		if (check_stream(rec, n, cpu, gen))
			return 1;
		/* Rate: the records span their own time at the interval, and the
		 * wall clock too (loosely: see below). */
		uint64_t span = rec[n - 1].time_ns - rec[0].time_ns;
		double expected = (double)span / INTERVAL_NS + 1;
		/* Never more records than ticks; fewer when a TCG guest on a busy
		 * host misses ticks (the timer skips overruns). */
		CHECK(n >= expected * 0.7 && n <= expected * 1.02 + 1, "cpu %u: %d records over %llu ms at 10 ms",
		      cpu, n, (unsigned long long)(span / 1000000));
		double wall = (double)(t_end - t_start) / INTERVAL_NS;
		/* A loaded host delays a TCG guest's timers, never advances them. */
		CHECK(n >= wall * 0.5 && n <= wall * 1.05 + 2, "cpu %u: %d records in %.0f wall intervals", cpu, n, wall);
		uint64_t *gaps = malloc(sizeof(uint64_t) * (size_t)n);
		for (int i = 1; i < n; i++)
			gaps[i - 1] = rec[i].time_ns - rec[i - 1].time_ns;
		qsort(gaps, (size_t)n - 1, sizeof(uint64_t), cmp_u64);
		uint64_t median = gaps[(n - 1) / 2];
		int hist[5] = { 0 };	/* gaps in intervals: <0.9, <1.1, <1.5, <2.5, more */
		for (int i = 0; i < n - 1; i++) {
			double g = (double)gaps[i] / INTERVAL_NS;
			hist[g < 0.9 ? 0 : g < 1.1 ? 1 : g < 1.5 ? 2 : g < 2.5 ? 3 : 4]++;
		}
		vm_note("cpu %u gaps in intervals: <0.9: %d, 0.9-1.1: %d, 1.1-1.5: %d, 1.5-2.5: %d, more: %d",
			cpu, hist[0], hist[1], hist[2], hist[3], hist[4]);
		free(gaps);
		/* time_ns is when the sampling work ran, a scheduling latency
		 * after the tick: gaps scatter around the interval. */
		CHECK(median > INTERVAL_NS * 9 / 10 && median < INTERVAL_NS * 13 / 10,
		      "cpu %u: median gap between records %llu ns, interval %llu", cpu,
		      (unsigned long long)median, INTERVAL_NS);
		/* cpu-clock counts the time the CPU's counter was enabled: the
		 * span of the records. */
		uint64_t clk = rec[n - 1].values[0] - rec[0].values[0];
		CHECK(clk > span * 9 / 10 && clk < span * 11 / 10, "cpu %u: cpu-clock advanced %llu ns over %llu ns",
		      cpu, (unsigned long long)clk, (unsigned long long)span);
		uint64_t en = rec[n - 1].time_enabled[0] - rec[0].time_enabled[0];
		CHECK(en > span * 9 / 10 && en < span * 11 / 10, "cpu %u: time_enabled advanced %llu ns over %llu ns",
		      cpu, (unsigned long long)en, (unsigned long long)span);
		vm_note("cpu %u: %d records over %llu ms, median gap %llu us, cpu-clock %llu ms, ctxsw %llu",
			cpu, n, (unsigned long long)(span / 1000000), (unsigned long long)(median / 1000),
			(unsigned long long)(clk / 1000000), (unsigned long long)(rec[n - 1].values[2] - rec[0].values[2]));
		if (cpu != 1)
			continue;
		/* The last record before the ping-pong and the first after it. */
		int before = -1, after = -1;
		for (int i = 0; i < n; i++) {
			if (rec[i].time_ns <= t0)
				before = i;
			if (after < 0 && rec[i].time_ns >= t1)
				after = i;
		}
		CHECK(before >= 0 && after >= 0, "cpu 1: no records around the ping-pong");
		uint64_t sw = rec[after].values[2] - rec[before].values[2];
		vm_note("cpu 1: %llu context switches across %d round trips (>= %d required)",
			(unsigned long long)sw, ROUND_TRIPS, 2 * ROUND_TRIPS);
		CHECK(sw >= 2ull * ROUND_TRIPS, "cpu 1: %llu context switches, want >= %d", (unsigned long long)sw, 2 * ROUND_TRIPS);
		/* And hardly more. The ping-pong makes exactly 2 per round trip
		 * (each side blocks in read and hands the CPU to the other). On
		 * top: hwsig's own sampling work, a kworker on CPU 1 at every
		 * tick, switched in and out (2 per record in the window), and a
		 * fixed allowance of 200 for the two children's fork, migration
		 * to CPU 1 and exit plus the kthreads (RCU, timers) an idle guest
		 * runs in the window. */
		/* The debug tier raises the allowance (VMTEST_CSW_ALLOWANCE): its
		 * kernel preempts fully and runs debug kthreads. */
		const long allowance = env_count("VMTEST_CSW_ALLOWANCE", 200);
		uint64_t ticks_in = (uint64_t)(after - before);
		uint64_t sw_max = 2ull * ROUND_TRIPS + 2 * ticks_in + (uint64_t)allowance;
		vm_note("cpu 1: %llu records in the window: at most %llu switches", (unsigned long long)ticks_in,
			(unsigned long long)sw_max);
		CHECK(sw <= sw_max, "cpu 1: %llu context switches, want <= %llu (2 x %d round trips + 2 x %llu ticks + %ld)",
		      (unsigned long long)sw, (unsigned long long)sw_max, ROUND_TRIPS, (unsigned long long)ticks_in,
		      allowance);
	}
	/* Stopped, the module's own accounting agrees with the rings, and its
	 * cost and latency statistics are sane. */
	uint64_t t_stop0 = now_ns();
	CHECK_OK(hw_stop(&s, &r), "STOP");
	uint64_t t_stop = now_ns();
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS");
	uint64_t heads = 0;
	for (unsigned cpu = 0; cpu < ncpu; cpu++)
		heads += hw_head(&m, cpu);
	CHECK(st.have_written && st.records_written == heads, "GET_STATUS records_written %llu, rings hold %llu",
	      (unsigned long long)st.records_written, (unsigned long long)heads);
	/* Every timer period is accounted for: a record, a tick whose work
	 * was still pending (skipped), or a period the timer never fired in
	 * (overrun). Only the start and stop edges may be off, per CPU. */
	CHECK(st.have_ticks, "GET_STATUS has no tick accounting (overrun/skipped)");
	uint64_t ticks = st.records_written + st.ticks_overrun + st.ticks_skipped;
	double lo = (double)ncpu * ((double)(t_stop0 - t_start) / INTERVAL_NS - 2);
	double hi = (double)ncpu * ((double)(t_stop - t_start0) / INTERVAL_NS + 1);
	vm_note("%llu records + %llu overrun + %llu skipped = %llu periods; %.0f..%.0f passed on %u CPUs",
		(unsigned long long)st.records_written, (unsigned long long)st.ticks_overrun,
		(unsigned long long)st.ticks_skipped, (unsigned long long)ticks, lo, hi, ncpu);
	CHECK((double)ticks >= lo && (double)ticks <= hi, "%llu periods accounted for, %.0f..%.0f passed",
	      (unsigned long long)ticks, lo, hi);
	CHECK(st.have_cost, "GET_STATUS has no sample cost");
	vm_note("sample cost avg %llu ns max %llu ns; latency avg %llu ns max %llu ns",
		(unsigned long long)st.cost_avg_ns, (unsigned long long)st.cost_max_ns,
		(unsigned long long)st.latency_avg_ns, (unsigned long long)st.latency_max_ns);
	CHECK(st.cost_avg_ns > 0 && st.cost_avg_ns <= st.cost_max_ns && st.cost_max_ns < 1000000000ull,
	      "sample cost avg %llu ns max %llu ns", (unsigned long long)st.cost_avg_ns,
	      (unsigned long long)st.cost_max_ns);
	if (st.have_latency)
		CHECK(st.latency_avg_ns <= st.latency_max_ns && st.latency_max_ns < 1000000000ull,
		      "sample latency avg %llu ns max %llu ns", (unsigned long long)st.latency_avg_ns,
		      (unsigned long long)st.latency_max_ns);
	hw_map_close(&m);
	genl_close(&s);
	return 0;
}
