/* The VM bench: hwsig's sampling cost per CPU per tick (GET_STATUS) with
 * the three software events, next to an empty pinned hard hrtimer timed
 * the same way (tests/vm/empty_hrtimer), at 1 ms and 10 ms. Not a test:
 * prints "vmbench:" lines; fails only if it cannot measure (or measures
 * something impossible, like a maximum below the average). */
#include "cases.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

#define EMPTY_KO "/lib/modules/empty_hrtimer.ko"
#define RUN_MS 4000

static int empty_cost(uint64_t interval_ns, uint64_t *ticks, uint64_t *avg, uint64_t *max)
{
	char params[64], buf[128];
	snprintf(params, sizeof(params), "interval_ns=%llu", (unsigned long long)interval_ns);
	CHECK_OK(mod_load(EMPTY_KO, params), "loading empty_hrtimer.ko");
	sleep_ms(RUN_MS);
	int err = read_file_str("/sys/module/empty_hrtimer/parameters/stats", buf, sizeof(buf));
	mod_unload("empty_hrtimer");
	CHECK(!err, "reading empty_hrtimer stats: %s", strerror(-err));
	unsigned long long t, a, m;
	CHECK(sscanf(buf, "%llu %llu %llu", &t, &a, &m) == 3, "empty_hrtimer stats \"%s\"", buf);
	*ticks = t; *avg = a; *max = m;
	return 0;
}

static int hwsig_cost(uint64_t interval_ns, struct hw_status *st)
{
	static struct genl_reply r;
	struct genl_sock s;
	if (setup_running(&s, interval_ns, 1024, hw_sw_events, 3))
		return 1;
	sleep_ms(RUN_MS);
	CHECK_OK(hw_get_status(&s, st, &r), "GET_STATUS");
	CHECK_OK(hw_stop(&s, &r), "STOP");
	genl_close(&s);
	CHECK(st->have_cost && st->have_written, "GET_STATUS has no sample cost");
	CHECK(st->cost_avg_ns > 0 && st->records_written > 0, "cost %llu ns over %llu records",
	      (unsigned long long)st->cost_avg_ns, (unsigned long long)st->records_written);
	return 0;
}

int case_bench(int argc, char **argv)
{
	(void)argc; (void)argv;
	static const uint64_t intervals[] = { 1000000, 10000000 };
	static struct hw_status st;
	for (size_t i = 0; i < 2; i++) {
		uint64_t iv = intervals[i], ticks, avg, max;
		if (hwsig_cost(iv, &st))
			return 1;
		if (empty_cost(iv, &ticks, &avg, &max))
			return 1;
		CHECK(ticks > 0 && avg > 0, "empty hrtimer measured nothing (%llu ticks)", (unsigned long long)ticks);
		printf("vmbench: interval %llu ms: kmod %llu records avg %llu ns max %llu ns; "
		       "empty hrtimer %llu ticks avg %llu ns max %llu ns\n",
		       (unsigned long long)(iv / 1000000), (unsigned long long)st.records_written,
		       (unsigned long long)st.cost_avg_ns, (unsigned long long)st.cost_max_ns,
		       (unsigned long long)ticks, (unsigned long long)avg, (unsigned long long)max);
		/* A statistic that cannot be true is a measurement failure. */
		CHECK(st.cost_avg_ns <= st.cost_max_ns && st.cost_max_ns < 1000000000ull,
		      "interval %llu ms: kmod sample cost avg %llu max %llu ns", (unsigned long long)(iv / 1000000),
		      (unsigned long long)st.cost_avg_ns, (unsigned long long)st.cost_max_ns);
		CHECK(!st.have_latency || (st.latency_avg_ns <= st.latency_max_ns && st.latency_max_ns < 1000000000ull),
		      "interval %llu ms: kmod latency avg %llu max %llu ns", (unsigned long long)(iv / 1000000),
		      (unsigned long long)st.latency_avg_ns, (unsigned long long)st.latency_max_ns);
		if (st.have_ticks)
			printf("vmbench: interval %llu ms: kmod periods: %llu records, %llu overrun, %llu skipped\n",
			       (unsigned long long)(iv / 1000000), (unsigned long long)st.records_written,
			       (unsigned long long)st.ticks_overrun, (unsigned long long)st.ticks_skipped);
		if (st.have_latency)
			printf("vmbench: interval %llu ms: kmod latency timer fire -> record published: avg %llu ns max %llu ns\n",
			       (unsigned long long)(iv / 1000000), (unsigned long long)st.latency_avg_ns,
			       (unsigned long long)st.latency_max_ns);
		printf("vmbench: interval %llu ms: kmod sample cost: %llu ns/cpu/tick; empty hrtimer: %llu ns; ratio %.2f\n",
		       (unsigned long long)(iv / 1000000), (unsigned long long)st.cost_avg_ns,
		       (unsigned long long)avg, (double)st.cost_avg_ns / (double)avg);
	}
	return 0;
}
