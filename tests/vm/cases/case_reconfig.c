/* Reconfiguring under a live mapping: a new ring size leaves the old
 * mapping readable (its rings frozen, online = 0) while the shared control
 * page announces the new geometry; a remap reads the new rings. STOP and
 * START resume with a FIRST record. */
#include "cases.h"
#include "common.h"

int case_reconfig(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_map old, cur;

	if (setup_running(&s, 2000000, 64, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&old), "mapping /dev/hwsig");
	sleep_ms(100);
	uint64_t gen = old.ctl->config_generation;
	uint32_t old_records = old.ctl->ring_records;
	uint64_t old_stride = old.ctl->ring_stride, old_data = old.ctl->data_offset;
	uint64_t old_offset = old.ctl->ring_offset;

	/* Same ring size: the rings are reused, the mapping stays live. */
	int err = hw_configure(&s, 3000000, 64, hw_sw_events, 2, &r);
	CHECK(!err, "CONFIGURE (same ring size): %s (%s)", strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START");
	uint64_t h = hw_head(&old, 0);
	sleep_ms(60);
	CHECK(hw_head(&old, 0) > h, "same-size reconfiguration: the old mapping's ring stopped");
	CHECK(old.ctl->config_generation == gen + 1, "control page generation %llu, want %llu",
	      (unsigned long long)old.ctl->config_generation, (unsigned long long)(gen + 1));

	/* Another ring size: new rings; the old ones freeze but stay mapped. */
	err = hw_configure(&s, 2000000, 256, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE (new ring size): %s (%s)", strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START");
	CHECK(old.ctl->config_generation == gen + 2 && old.ctl->ring_records == 256 &&
	      old.ctl->mmap_size > old.size,
	      "control page after the resize: generation %llu ring %u mmap %llu (old mapping %zu)",
	      (unsigned long long)old.ctl->config_generation, old.ctl->ring_records,
	      (unsigned long long)old.ctl->mmap_size, old.size);
	/* Read the old rings with the old geometry they were mapped with. */
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		const unsigned char *ring = old.base + old_offset + cpu * old_stride;
		const struct hwsig_ring_header *hdr = (const void *)ring;
		uint64_t head = __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE);
		CHECK(hdr->online == 0, "cpu %u: the replaced ring still says online", cpu);
		CHECK(head > 0, "cpu %u: the replaced ring is empty", cpu);
		const struct hwsig_record *last = (const void *)(ring + old_data +
			((head - 1) & (old_records - 1)) * sizeof(struct hwsig_record));
		CHECK(last->seq == head && last->seq_end == head && last->cpu == cpu,
		      "cpu %u: replaced ring's last record seq %llu/%llu head %llu", cpu,
		      (unsigned long long)last->seq, (unsigned long long)last->seq_end, (unsigned long long)head);
		sleep_ms(20);
		CHECK(__atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE) == head, "cpu %u: the replaced ring is still written", cpu);
	}
	CHECK_OK(hw_map_open(&cur), "remapping /dev/hwsig");
	CHECK(cur.size == cur.ctl->mmap_size && cur.ctl->ring_records == 256, "remap: %zu bytes, ring %u",
	      cur.size, cur.ctl->ring_records);
	sleep_ms(60);
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		const struct hwsig_ring_header *hdr = hw_ring(&cur, cpu);
		CHECK(hdr->online == 1 && hw_head(&cur, cpu) > 5, "cpu %u: new ring online %u head %llu", cpu,
		      hdr->online, (unsigned long long)hw_head(&cur, cpu));
		const struct hwsig_record *r0 = (const void *)((const unsigned char *)hdr + cur.ctl->data_offset);
		CHECK(r0->seq == 1 && (r0->flags & HWSIG_RECORD_F_FIRST) &&
		      r0->config_generation == (uint32_t)cur.ctl->config_generation,
		      "cpu %u: new ring's first record seq %llu flags %#x generation %u", cpu,
		      (unsigned long long)r0->seq, r0->flags, r0->config_generation);
	}
	hw_map_close(&old);	/* the last reference to the old rings */

	/* STOP freezes the rings; START resumes them with a FIRST record. */
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK(cur.ctl->running == 0, "control page running after STOP");
	uint64_t stopped_at = hw_head(&cur, 0);
	sleep_ms(30);
	CHECK(hw_head(&cur, 0) == stopped_at, "records written after STOP");
	CHECK_OK(hw_start(&s, &r), "START");
	sleep_ms(60);
	CHECK(hw_head(&cur, 0) > stopped_at, "no records after START");
	const struct hwsig_record *resumed = (const void *)((const unsigned char *)hw_ring(&cur, 0) +
		cur.ctl->data_offset + (stopped_at & (cur.ctl->ring_records - 1)) * cur.ctl->record_size);
	CHECK(resumed->seq == stopped_at + 1 && (resumed->flags & HWSIG_RECORD_F_FIRST),
	      "first record after START: seq %llu flags %#x", (unsigned long long)resumed->seq, resumed->flags);
	hw_map_close(&cur);
	genl_close(&s);
	return 0;
}
