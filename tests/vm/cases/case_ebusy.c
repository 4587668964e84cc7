/* A counter the old configuration keeps busy is opened once the old one
 * is gone: tests/vm/excl_pmu's exclusive PMU (one event per CPU; another
 * gets -EBUSY) counts in a configuration; sending the same configuration
 * again builds the new one while the old still holds the PMU. After the
 * swap the module retries: every CPU's entry of the exclusive event is
 * active again (error 0), its count grows and the records mark it valid. */
#include "cases.h"
#include "common.h"

#include <stdlib.h>

#define EXCL_KO "/lib/modules/excl_pmu.ko"

static int excl_entries_ok(struct genl_sock *s, int ncpu, const char *when)
{
	static struct genl_reply r;
	static struct hw_status st;
	CHECK_OK(hw_get_status(s, &st, &r), "GET_STATUS");
	for (int c = 0; c < ncpu; c++) {
		if (!cpu_online(c))
			continue;
		const struct hw_status_entry *e = hw_status_find(&st, 1, (uint32_t)c);
		CHECK(e, "%s: no entry for the exclusive event on CPU %d", when, c);
		CHECK(e->error == 0, "%s: the exclusive event on CPU %d: error %d (%s)", when, c, e->error,
		      strerror(-e->error));
	}
	return 0;
}

int case_ebusy(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	char buf[32];

	if (!mod_loaded("excl_pmu"))
		CHECK_OK(mod_load(EXCL_KO, ""), "loading excl_pmu.ko");
	CHECK_OK(read_file_str("/sys/bus/event_source/devices/uncore_imc_hwsigtest/type", buf, sizeof(buf)),
		 "reading the test PMU's type");
	struct hw_event_spec ev[2] = {
		hw_sw_events[0],
		{ "excl", (uint32_t)strtoul(buf, NULL, 10), 0, HWSIG_EVENT_ALL_CPUS },
	};
	int ncpu = possible_cpus();
	if (setup_running(&s, 10000000, 64, ev, 2))
		return 1;
	if (excl_entries_ok(&s, ncpu, "first configuration"))
		return 1;
	/* The same configuration again, while the first holds the PMU. */
	int err = hw_configure(&s, 10000000, 64, ev, 2, &r);
	CHECK(!err, "CONFIGURE again: %s \"%s\"", strerror(-err), r.extack);
	if (excl_entries_ok(&s, ncpu, "the same configuration sent again"))
		return 1;
	struct hw_map m;
	CHECK_OK(hw_map_open(&m), "mapping");
	sleep_ms(100);
	uint64_t last = hw_head(&m, 0) - 1;
	const struct hwsig_record *rec = (const void *)((const unsigned char *)hw_ring(&m, 0) + m.ctl->data_offset +
							(last & (m.ctl->ring_records - 1)) * m.ctl->record_size);
	CHECK(rec->config_generation == (uint32_t)m.ctl->config_generation && (rec->valid_mask & 2) && rec->values[1] > 0,
	      "CPU 0's newest record: generation %u (want %u), valid_mask %#x, excl count %llu",
	      rec->config_generation, (uint32_t)m.ctl->config_generation, rec->valid_mask,
	      (unsigned long long)rec->values[1]);
	hw_map_close(&m);
	/* And once more after STOP/START. */
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK_OK(hw_configure(&s, 10000000, 64, ev, 2, &r), "CONFIGURE while stopped");
	CHECK_OK(hw_start(&s, &r), "START");
	if (excl_entries_ok(&s, ncpu, "configured while stopped"))
		return 1;
	genl_close(&s);
	CHECK_OK(hw_reload(), "unloading hwsig.ko");
	CHECK_OK(mod_unload("excl_pmu"), "unloading excl_pmu.ko");
	return 0;
}
