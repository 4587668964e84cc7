/* A ring of HWSIG_MIN_RING_RECORDS records and a reader slower than the
 * producer: every record written between two reads is either delivered or
 * counted lost, and the head-based loss is exactly written - ring size. */
#include "cases.h"
#include "common.h"

int case_loss(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct hw_reader rd;
	static struct hwsig_record out[HWSIG_MIN_RING_RECORDS];
	static struct hw_status st;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_map m;

	if (setup_running(&s, 1000000, HWSIG_MIN_RING_RECORDS, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	CHECK(m.ctl->ring_records == HWSIG_MIN_RING_RECORDS, "ring_records %u, configured %d",
	      m.ctl->ring_records, HWSIG_MIN_RING_RECORDS);
	const uint64_t size = HWSIG_MIN_RING_RECORDS;
	hw_reader_init_at_head(&rd, &m);
	uint64_t total_lost = 0, total_written = 0, total_torn = 0;
	/* Slow rounds (50 ms: ~50 records into a ring of 8) and fast ones
	 * (2 ms: the ring never wraps between reads). */
	static const unsigned pause_ms[] = { 50, 2, 50, 1, 80, 2, 50, 3, 120, 2, 50, 1 };
	for (size_t round = 0; round < sizeof(pause_ms) / sizeof(pause_ms[0]); round++) {
		sleep_ms(pause_ms[round]);
		for (unsigned cpu = 0; cpu < 2; cpu++) {
			uint64_t head_before = rd.last_head[cpu];
			uint64_t lost_before = rd.lost[cpu], torn_before = rd.torn[cpu];
			int n = hw_read_cpu(&rd, &m, cpu, out, (int)size);
			uint64_t written = rd.last_head[cpu] - head_before;
			uint64_t lost = rd.lost[cpu] - lost_before, torn = rd.torn[cpu] - torn_before;
			uint64_t expect_overrun = written > size ? written - size : 0;
			CHECK((uint64_t)n + lost == written, "round %zu cpu %u: %d delivered + %llu lost != %llu written",
			      round, cpu, n, (unsigned long long)lost, (unsigned long long)written);
			CHECK(lost - torn == expect_overrun, "round %zu cpu %u: overrun loss %llu, head says %llu",
			      round, cpu, (unsigned long long)(lost - torn), (unsigned long long)expect_overrun);
			/* What was delivered is the newest records, in order. */
			for (int i = 0; i < n; i++) {
				CHECK(out[i].seq > head_before + expect_overrun && out[i].seq <= rd.last_head[cpu],
				      "round %zu cpu %u: delivered seq %llu outside (%llu, %llu]", round, cpu,
				      (unsigned long long)out[i].seq, (unsigned long long)(head_before + expect_overrun),
				      (unsigned long long)rd.last_head[cpu]);
				if (i)
					CHECK(out[i].seq > out[i - 1].seq, "round %zu cpu %u: seq %llu after %llu", round,
					      cpu, (unsigned long long)out[i].seq, (unsigned long long)out[i - 1].seq);
			}
			if (pause_ms[round] >= 50)
				CHECK(expect_overrun > 0, "round %zu cpu %u: only %llu records in %u ms at 1 ms", round,
				      cpu, (unsigned long long)written, pause_ms[round]);
			total_lost += lost;
			total_written += written;
			total_torn += torn;
		}
	}
	vm_note("%llu records written, %llu lost (%llu torn while copied)", (unsigned long long)total_written,
		(unsigned long long)total_lost, (unsigned long long)total_torn);

	/* Stopped, the module's own counters agree with the heads. */
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS");
	uint64_t heads = 0, over = 0;
	for (unsigned cpu = 0; cpu < m.ctl->nr_cpu_ids; cpu++) {
		uint64_t h = hw_head(&m, cpu);
		heads += h;
		over += h > size ? h - size : 0;
		CHECK(hw_ring(&m, cpu)->overwritten == (h > size ? h - size : 0),
		      "cpu %u: header overwritten %llu, head %llu", cpu,
		      (unsigned long long)hw_ring(&m, cpu)->overwritten, (unsigned long long)h);
	}
	CHECK(st.have_written && st.records_written == heads, "GET_STATUS records_written %llu, heads sum %llu",
	      (unsigned long long)st.records_written, (unsigned long long)heads);
	CHECK(st.have_overwritten && st.records_overwritten == over,
	      "GET_STATUS records_overwritten %llu, heads say %llu",
	      (unsigned long long)st.records_overwritten, (unsigned long long)over);
	/* At 1 ms, ticks often land while the previous sample is written:
	 * the latency statistic must still be sane. */
	if (st.have_latency)
		CHECK(st.latency_avg_ns <= st.latency_max_ns && st.latency_max_ns < 1000000000ull,
		      "sample latency avg %llu ns max %llu ns", (unsigned long long)st.latency_avg_ns,
		      (unsigned long long)st.latency_max_ns);
	CHECK(st.have_cost && st.cost_avg_ns <= st.cost_max_ns && st.cost_max_ns < 1000000000ull,
	      "sample cost avg %llu ns max %llu ns", (unsigned long long)st.cost_avg_ns,
	      (unsigned long long)st.cost_max_ns);
	hw_map_close(&m);
	genl_close(&s);
	return 0;
}
