/* Bad CONFIGURE requests: each is refused with an extack message, and the
 * running configuration is left exactly as it was, still sampling. */
#include "cases.h"
#include "common.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <unistd.h>

enum { GOOD_INTERVAL = 10000000, GOOD_RING = 64 };

static void put_event(struct genl_msg *m, const char *name, uint32_t type, uint64_t config, int with_type)
{
	genl_nest_start(m, HWSIG_ATTR_EVENT);
	genl_put_str(m, HWSIG_EVENT_ATTR_NAME, name);
	if (with_type)
		genl_put_u32(m, HWSIG_EVENT_ATTR_PMU_TYPE, type);
	genl_put_u64(m, HWSIG_EVENT_ATTR_CONFIG, config);
	genl_put_u32(m, HWSIG_EVENT_ATTR_CPU, (uint32_t)HWSIG_EVENT_ALL_CPUS);
	genl_nest_end(m);
}

static void put_events(struct genl_msg *m, int n)
{
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	for (int i = 0; i < n; i++)
		put_event(m, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1);
	genl_nest_end(m);
}

static void base(struct genl_msg *m, uint16_t family, uint64_t interval, uint32_t ring)
{
	genl_msg_init(m, family, HWSIG_CMD_CONFIGURE);
	genl_put_u64(m, HWSIG_ATTR_SAMPLE_INTERVAL_NS, interval);
	if (ring)
		genl_put_u32(m, HWSIG_ATTR_RING_RECORDS, ring);
}

struct bad {
	const char *what;
	void (*build)(struct genl_msg *m, uint16_t family);
};

static void unknown_attr(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	put_events(m, 1);
	genl_put_u32(m, HWSIG_ATTR_MAX + 7, 1);
}
static void zero_interval(struct genl_msg *m, uint16_t f) { base(m, f, 0, GOOD_RING); put_events(m, 1); }
static void short_interval(struct genl_msg *m, uint16_t f) { base(m, f, HWSIG_MIN_INTERVAL_NS - 1, GOOD_RING); put_events(m, 1); }
static void huge_interval(struct genl_msg *m, uint16_t f) { base(m, f, HWSIG_MAX_INTERVAL_NS + 1, GOOD_RING); put_events(m, 1); }
static void max_u64_interval(struct genl_msg *m, uint16_t f) { base(m, f, ~0ull, GOOD_RING); put_events(m, 1); }
static void too_many(struct genl_msg *m, uint16_t f) { base(m, f, GOOD_INTERVAL, GOOD_RING); put_events(m, HWSIG_MAX_EVENTS + 1); }
static void unknown_pmu(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	put_event(m, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1);
	put_event(m, "nonsense", 0x7777, 0, 1);
	genl_nest_end(m);
}
static void huge_ring(struct genl_msg *m, uint16_t f) { base(m, f, GOOD_INTERVAL, HWSIG_MAX_RING_RECORDS * 2); put_events(m, 1); }
static void npot_ring(struct genl_msg *m, uint16_t f) { base(m, f, GOOD_INTERVAL, 1000); put_events(m, 1); }
static void tiny_ring(struct genl_msg *m, uint16_t f) { base(m, f, GOOD_INTERVAL, HWSIG_MIN_RING_RECORDS / 2); put_events(m, 1); }
static void garbage_interval(struct genl_msg *m, uint16_t f)
{
	genl_msg_init(m, f, HWSIG_CMD_CONFIGURE);
	genl_put(m, HWSIG_ATTR_SAMPLE_INTERVAL_NS, "\xde\xad\xbe", 3);
	put_events(m, 1);
}
static void garbage_events(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	/* A nest whose payload is not attributes: the first "header" claims
	 * more bytes than there are. */
	genl_put(m, HWSIG_ATTR_EVENTS | NLA_F_NESTED, "\xff\x7f\x01\x00garbage!", 12);
}
static void garbage_event_field(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	genl_nest_start(m, HWSIG_ATTR_EVENT);
	genl_put_str(m, HWSIG_EVENT_ATTR_NAME, "cpu-clock");
	genl_put(m, HWSIG_EVENT_ATTR_PMU_TYPE, "\x01", 1);
	genl_put_u64(m, HWSIG_EVENT_ATTR_CONFIG, 0);
	genl_nest_end(m);
	genl_nest_end(m);
}
static void missing_interval(struct genl_msg *m, uint16_t f)
{
	genl_msg_init(m, f, HWSIG_CMD_CONFIGURE);
	genl_put_u32(m, HWSIG_ATTR_RING_RECORDS, GOOD_RING);
	put_events(m, 1);
}
static void missing_pmu_type(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	put_event(m, "no-type", 0, PERF_COUNT_SW_CPU_CLOCK, 0);
	genl_nest_end(m);
}
/* PMUs that are not counters: refused before any event is created. */
static uint32_t kprobe_type = 0x7fff0001, uprobe_type = 0x7fff0002;
static void one_event_of_type(struct genl_msg *m, uint16_t f, uint32_t type)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	put_event(m, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1);
	put_event(m, "not-a-counter", type, 0, 1);
	genl_nest_end(m);
}
static void tracepoint_pmu(struct genl_msg *m, uint16_t f) { one_event_of_type(m, f, PERF_TYPE_TRACEPOINT); }
static void breakpoint_pmu(struct genl_msg *m, uint16_t f) { one_event_of_type(m, f, PERF_TYPE_BREAKPOINT); }
static void kprobe_pmu(struct genl_msg *m, uint16_t f) { one_event_of_type(m, f, kprobe_type); }
static void uprobe_pmu(struct genl_msg *m, uint16_t f) { one_event_of_type(m, f, uprobe_type); }
static void unknown_flag(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_put_u32(m, HWSIG_ATTR_CONFIG_FLAGS, 1u << 31);
	put_events(m, 1);
}
static void long_name(struct genl_msg *m, uint16_t f)
{
	char name[HWSIG_EVENT_NAME_MAX + 8];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	put_event(m, name, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1);
	genl_nest_end(m);
}
static void bad_cpu(struct genl_msg *m, uint16_t f)
{
	base(m, f, GOOD_INTERVAL, GOOD_RING);
	genl_nest_start(m, HWSIG_ATTR_EVENTS);
	genl_nest_start(m, HWSIG_ATTR_EVENT);
	genl_put_str(m, HWSIG_EVENT_ATTR_NAME, "cpu-clock");
	genl_put_u32(m, HWSIG_EVENT_ATTR_PMU_TYPE, PERF_TYPE_SOFTWARE);
	genl_put_u64(m, HWSIG_EVENT_ATTR_CONFIG, PERF_COUNT_SW_CPU_CLOCK);
	genl_put_u32(m, HWSIG_EVENT_ATTR_CPU, 4096);
	genl_nest_end(m);
	genl_nest_end(m);
}

static const struct bad bads[] = {
	{ "unknown attribute", unknown_attr },
	{ "zero interval", zero_interval },
	{ "interval below minimum", short_interval },
	{ "interval above maximum", huge_interval },
	{ "interval 2^64-1", max_u64_interval },
	{ "too many events", too_many },
	{ "unknown PMU type", unknown_pmu },
	{ "ring above maximum", huge_ring },
	{ "ring not a power of two", npot_ring },
	{ "ring below minimum", tiny_ring },
	{ "garbage interval payload", garbage_interval },
	{ "garbage events nest", garbage_events },
	{ "garbage event field", garbage_event_field },
	{ "missing interval", missing_interval },
	{ "missing PMU type", missing_pmu_type },
	{ "event name too long", long_name },
	{ "event on a CPU that does not exist", bad_cpu },
	{ "tracepoint PMU", tracepoint_pmu },
	{ "breakpoint PMU", breakpoint_pmu },
	{ "kprobe PMU", kprobe_pmu },
	{ "uprobe PMU", uprobe_pmu },
	{ "unknown configuration flag", unknown_flag },
};

int case_badconfig(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_msg msg;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_info before, after;
	struct hw_map m;

	/* The dynamic types of the kprobe and uprobe PMUs of this kernel. */
	char buf[32];
	/* The debug tier's small kernel has kprobes but no uprobes
	 * (VMTEST_NO_PROBE_PMUS=1 allows a missing one): the message of a
	 * missing PMU carries an unused type number, still refused, and says
	 * so; every Debian kernel has both. */
	int lax = (int)env_count("VMTEST_NO_PROBE_PMUS", 0);
	if (!read_file_str("/sys/bus/event_source/devices/kprobe/type", buf, sizeof(buf)))
		kprobe_type = (uint32_t)strtoul(buf, NULL, 10);
	else if (lax)
		vm_note("no kprobe PMU in this kernel: its message uses the unused type %#x", kprobe_type);
	else
		FAIL("no kprobe PMU type (/sys/bus/event_source/devices/kprobe/type)");
	if (!read_file_str("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf)))
		uprobe_type = (uint32_t)strtoul(buf, NULL, 10);
	else if (lax)
		vm_note("no uprobe PMU in this kernel: its message uses the unused type %#x", uprobe_type);
	else
		FAIL("no uprobe PMU type (/sys/bus/event_source/devices/uprobe/type)");

	/* An unconfigured module stays unconfigured after a bad request. */
	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the family");
	CHECK_OK(hw_get_info(&s, &before, &r), "GET_INFO");
	npot_ring(&msg, s.family);
	CHECK(genl_transact(&s, &msg, &r) != 0, "a bad CONFIGURE on a fresh module was accepted");
	CHECK_OK(hw_get_info(&s, &after, &r), "GET_INFO");
	CHECK(after.config_generation == before.config_generation && after.ring_records == before.ring_records &&
	      after.mmap_size == before.mmap_size && !after.running,
	      "a refused CONFIGURE changed a fresh module: generation %llu ring %u mmap %llu",
	      (unsigned long long)after.config_generation, after.ring_records, (unsigned long long)after.mmap_size);
	genl_close(&s);

	static struct hw_status st_before, st_after;
	if (setup_running(&s, GOOD_INTERVAL, GOOD_RING, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_get_info(&s, &before, &r), "GET_INFO");
	CHECK_OK(hw_get_status(&s, &st_before, &r), "GET_STATUS");
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	struct hwsig_control_page page_before = *m.ctl;
	int failed = 0;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		bads[i].build(&msg, s.family);
		int err = genl_transact(&s, &msg, &r);
		if (!err) {
			vm_fail(__FILE__, __LINE__, "%s: accepted", bads[i].what);
			failed = 1;
			/* Put the good configuration back for the next ones. */
			hw_stop(&s, &r);
			hw_configure(&s, GOOD_INTERVAL, GOOD_RING, hw_sw_events, 3, &r);
			hw_start(&s, &r);
			continue;
		}
		vm_note("%-36s -> %s: \"%s\"", bads[i].what, strerror(-err), r.extack);
		if (!r.extack[0]) {
			vm_fail(__FILE__, __LINE__, "%s: refused (%s) without an extack message", bads[i].what, strerror(-err));
			failed = 1;
		}
	}
	if (failed)
		return 1;
	CHECK_OK(hw_get_info(&s, &after, &r), "GET_INFO after the bad requests");
	CHECK(after.config_generation == before.config_generation, "generation %llu -> %llu",
	      (unsigned long long)before.config_generation, (unsigned long long)after.config_generation);
	CHECK(after.sample_interval_ns == before.sample_interval_ns && after.ring_records == before.ring_records &&
	      after.mmap_size == before.mmap_size && after.running == 1,
	      "GET_INFO changed: interval %llu ring %u mmap %llu running %u",
	      (unsigned long long)after.sample_interval_ns, after.ring_records,
	      (unsigned long long)after.mmap_size, after.running);
	CHECK(m.ctl->nr_events == page_before.nr_events && m.ctl->config_generation == page_before.config_generation &&
	      m.ctl->ring_records == page_before.ring_records && m.ctl->running == 1,
	      "control page changed: nr_events %u generation %llu ring %u running %u", m.ctl->nr_events,
	      (unsigned long long)m.ctl->config_generation, m.ctl->ring_records, m.ctl->running);
	CHECK_OK(hw_get_status(&s, &st_after, &r), "GET_STATUS after the bad requests");
	CHECK(st_after.nr_entries == st_before.nr_entries && st_after.running == 1,
	      "GET_STATUS changed: %d entries (were %d), running %u", st_after.nr_entries, st_before.nr_entries,
	      st_after.running);
	for (int i = 0; i < st_before.nr_entries; i++) {
		const struct hw_status_entry *a = &st_before.entry[i];
		const struct hw_status_entry *b = hw_status_find(&st_after, a->event_index, a->cpu);
		CHECK(b && b->error == a->error && b->value >= a->value,
		      "GET_STATUS entry event %u cpu %u changed (error %d -> %d)", a->event_index, a->cpu, a->error,
		      b ? b->error : 9999);
	}
	/* Still sampling, with the old events. */
	uint64_t h0 = hw_head(&m, 0), h1 = hw_head(&m, 1);
	sleep_ms(200);
	CHECK(hw_head(&m, 0) > h0 + 5 && hw_head(&m, 1) > h1 + 5, "sampling stalled: heads %llu->%llu, %llu->%llu",
	      (unsigned long long)h0, (unsigned long long)hw_head(&m, 0), (unsigned long long)h1,
	      (unsigned long long)hw_head(&m, 1));
	uint64_t last = hw_head(&m, 0) - 1;
	const struct hwsig_record *rec = (const void *)((const unsigned char *)hw_ring(&m, 0) + m.ctl->data_offset +
							(last & (m.ctl->ring_records - 1)) * m.ctl->record_size);
	CHECK(rec->valid_mask == 0x7, "latest record valid_mask %#x, want the 3 old events", rec->valid_mask);
	hw_map_close(&m);
	genl_close(&s);
	return 0;
}
