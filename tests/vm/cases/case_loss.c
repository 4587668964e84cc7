/* A ring of HWSIG_MIN_RING_RECORDS records and a reader slower than the
 * producer. Running: every record written between two reads is either
 * delivered or counted lost, and records are delivered at all. Frozen (the
 * module STOPped between reads, so its counters hold still): the reader's
 * loss equals the module's own accounting exactly -- per CPU, the records
 * the ring header says were overwritten that the reader had not read yet,
 * max(0, overwritten - tail); in total, GET_STATUS's records_overwritten
 * minus the previous GET_STATUS records_written once every ring lapped --
 * and every record the module says still exists is delivered, intact. */
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
		/* A slow round must overrun the ring: under a loaded host the
		 * guest's ticks can come far slower than 1 ms, so wait for the
		 * heads rather than trust the clock (3 s cap). */
		for (int waited = 0; pause_ms[round] >= 50 && waited < 3000; waited++) {
			int over = 1;
			for (unsigned cpu = 0; cpu < 2; cpu++)
				if (hw_head(&m, cpu) <= rd.last_head[cpu] + size)
					over = 0;
			if (over)
				break;
			sleep_ms(1);
		}
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
				CHECK(expect_overrun > 0, "round %zu cpu %u: only %llu records in %u ms + 3 s at 1 ms", round,
				      cpu, (unsigned long long)written, pause_ms[round]);
			total_lost += lost;
			total_written += written;
			total_torn += torn;
		}
	}
	vm_note("%llu records written, %llu lost (%llu torn while copied)", (unsigned long long)total_written,
		(unsigned long long)total_lost, (unsigned long long)total_torn);
	/* A reader that never gets a record (seq never written, records
	 * always torn) would balance the sums above: records must arrive. */
	CHECK(total_written > total_lost, "running: %llu written, all %llu lost: nothing was readable",
	      (unsigned long long)total_written, (unsigned long long)total_lost);

	/* Frozen rounds: START, let the producer lap the ring (or not), STOP,
	 * then compare the reader with the module's counters, which no
	 * longer move. The reader's tail is the head it saw last time. */
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS");
	for (unsigned cpu = 0; cpu < 2; cpu++)
		hw_read_cpu(&rd, &m, cpu, out, (int)size);
	uint64_t prev_written = st.records_written;
	static const unsigned frozen_ms[] = { 60, 3, 100, 0, 60, 5, 150 };
	uint64_t frozen_lost = 0, frozen_read = 0;
	for (size_t round = 0; round < sizeof(frozen_ms) / sizeof(frozen_ms[0]); round++) {
		CHECK_OK(hw_start(&s, &r), "START");
		sleep_ms(frozen_ms[round]);
		/* A slow round must lap every ring; a loaded host can slow the
		 * guest's ticks far below 1 ms, so wait for the heads (3 s cap). */
		for (int waited = 0; frozen_ms[round] >= 60 && waited < 3000; waited++) {
			int lapped = 1;
			for (unsigned cpu = 0; cpu < 2; cpu++)
				if (hw_head(&m, cpu) < rd.tail[cpu] + 2 * size)
					lapped = 0;
			if (lapped)
				break;
			sleep_ms(1);
		}
		CHECK_OK(hw_stop(&s, &r), "STOP");
		CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS");
		CHECK(st.have_written && st.have_overwritten && !st.running, "frozen round %zu: GET_STATUS running %u",
		      round, st.running);
		uint64_t sum_head = 0, sum_over = 0, sum_lost = 0;
		int all_lapped = 1;
		for (unsigned cpu = 0; cpu < m.ctl->nr_cpu_ids; cpu++) {
			uint64_t h = hw_head(&m, cpu), o = hw_ring(&m, cpu)->overwritten;
			sum_head += h;
			sum_over += o;
			if (cpu >= 2)
				continue;
			uint64_t tail = rd.tail[cpu];
			uint64_t lost_before = rd.lost[cpu], torn_before = rd.torn[cpu];
			int n = hw_read_cpu(&rd, &m, cpu, out, (int)size);
			uint64_t lost = rd.lost[cpu] - lost_before, torn = rd.torn[cpu] - torn_before;
			/* The module's view: records [0, o) no longer exist; the
			 * reader had consumed [0, tail). */
			uint64_t module_lost = o > tail ? o - tail : 0;
			CHECK(torn == 0, "frozen round %zu cpu %u: %llu records torn with the producer stopped", round,
			      cpu, (unsigned long long)torn);
			CHECK(lost == module_lost, "frozen round %zu cpu %u: reader lost %llu, module overwrote %llu "
			      "of the records after tail %llu (head %llu)", round, cpu, (unsigned long long)lost,
			      (unsigned long long)module_lost, (unsigned long long)tail, (unsigned long long)h);
			CHECK((uint64_t)n == h - tail - lost, "frozen round %zu cpu %u: %d delivered, module holds %llu "
			      "unread (head %llu, tail %llu, lost %llu)", round, cpu, n,
			      (unsigned long long)(h - tail - lost), (unsigned long long)h, (unsigned long long)tail,
			      (unsigned long long)lost);
			for (int i = 0; i < n; i++)
				CHECK(out[i].seq == h - (uint64_t)n + 1 + (uint64_t)i && out[i].seq_end == out[i].seq &&
				      out[i].cpu == cpu, "frozen round %zu cpu %u: record %d seq %llu seq_end %llu cpu %u, "
				      "want seq %llu", round, cpu, i, (unsigned long long)out[i].seq,
				      (unsigned long long)out[i].seq_end, out[i].cpu,
				      (unsigned long long)(h - (uint64_t)n + 1 + (uint64_t)i));
			if (frozen_ms[round] >= 60)
				CHECK(n == (int)size, "frozen round %zu cpu %u: %d records readable after %u ms at 1 ms, "
				      "ring holds %llu", round, cpu, n, frozen_ms[round], (unsigned long long)size);
			if (h - tail < size)
				all_lapped = 0;
			sum_lost += lost;
			frozen_lost += lost;
			frozen_read += (uint64_t)n;
		}
		CHECK(st.records_written == sum_head && st.records_overwritten == sum_over,
		      "frozen round %zu: GET_STATUS written %llu overwritten %llu, ring headers %llu %llu", round,
		      (unsigned long long)st.records_written, (unsigned long long)st.records_overwritten,
		      (unsigned long long)sum_head, (unsigned long long)sum_over);
		/* Every ring lapped since the last read: the reader lost exactly
		 * what GET_STATUS says was overwritten beyond what it had read,
		 * i.e. beyond the previous GET_STATUS records_written. */
		if (all_lapped && m.ctl->nr_cpu_ids == 2)
			CHECK(sum_lost == st.records_overwritten - prev_written,
			      "frozen round %zu: reader lost %llu, GET_STATUS overwritten %llu - previous written %llu",
			      round, (unsigned long long)sum_lost, (unsigned long long)st.records_overwritten,
			      (unsigned long long)prev_written);
		if (frozen_ms[round] >= 60)
			CHECK(all_lapped && sum_lost > 0, "frozen round %zu: %u ms at 1 ms did not lap the rings", round,
			      frozen_ms[round]);
		prev_written = st.records_written;
	}
	vm_note("frozen rounds: %llu records delivered, %llu lost, equal to the module's overwritten count",
		(unsigned long long)frozen_read, (unsigned long long)frozen_lost);
	CHECK(frozen_read > 0, "frozen rounds: no record was readable");

	/* Stopped, the module's own counters agree with the heads. */
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
