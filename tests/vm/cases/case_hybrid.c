/* A hybrid CPU's E-core PMU whose every CPU is offline: tests/vm/excl_pmu
 * loaded as "cpu_atom" that counts on CPU 1 only (x86's hybrid PMUs refuse
 * other CPUs with -ENOENT). With CPU 1 offline, CONFIGURE of a cpu_atom
 * event is refused with -ENODEV and a message saying no online CPU of
 * that PMU is sampled, not "no PMU has this type" (-ENOENT): the type
 * check found the PMU. With CPU 1 back the same CONFIGURE is accepted: the
 * event counts on CPU 1, CPU 0's entry says -ENOENT. Once the PMU is gone,
 * its type is refused with -ENOENT. */
#include "cases.h"
#include "common.h"

#include <stdlib.h>
#include <unistd.h>

#define PMU_KO "/lib/modules/excl_pmu.ko"
#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"

static int hybrid(void)
{
	static struct genl_reply r;
	static struct hw_status st;
	struct genl_sock s;
	char buf[32];

	if (access(CPU1_ONLINE, 0) != 0)
		FAIL("%s missing: CPU hotplug unavailable", CPU1_ONLINE);
	if (mod_loaded("excl_pmu"))
		CHECK_OK(mod_unload("excl_pmu"), "unloading an earlier excl_pmu.ko");
	CHECK_OK(mod_load(PMU_KO, "name=cpu_atom cpu=1 exclusive=0"), "loading excl_pmu.ko as cpu_atom");
	CHECK_OK(read_file_str("/sys/bus/event_source/devices/cpu_atom/type", buf, sizeof(buf)),
		 "reading cpu_atom's type");
	uint32_t type = (uint32_t)strtoul(buf, NULL, 10);
	struct hw_event_spec ev[2] = {
		hw_sw_events[0],
		{ "atom", type, 0, HWSIG_EVENT_ALL_CPUS },
	};
	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the family");

	CHECK_OK(write_file_str(CPU1_ONLINE, "0"), "offlining CPU 1");
	int err = hw_configure(&s, 10000000, 64, ev, 2, &r);
	vm_note("E-core PMU (type %u), its one CPU offline: CONFIGURE %s \"%s\"", type, strerror(-err), r.extack);
	CHECK_OK(write_file_str(CPU1_ONLINE, "1"), "onlining CPU 1");
	CHECK(err == -ENODEV && strstr(r.extack, "no online CPU"),
	      "cpu_atom with its CPUs offline: %s \"%s\", want ENODEV \"... no online CPU ...\"", strerror(-err),
	      r.extack);

	err = hw_configure(&s, 10000000, 64, ev, 2, &r);
	CHECK(!err, "cpu_atom with its CPU online: %s \"%s\"", strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START");
	sleep_ms(100);
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS");
	const struct hw_status_entry *e0 = hw_status_find(&st, 1, 0), *e1 = hw_status_find(&st, 1, 1);
	CHECK(e0 && e0->error == -ENOENT, "cpu_atom on CPU 0: error %d, want -ENOENT", e0 ? e0->error : 9999);
	CHECK(e1 && e1->error == 0 && e1->value > 0, "cpu_atom on CPU 1: error %d value %llu, want counting",
	      e1 ? e1->error : 9999, e1 ? (unsigned long long)e1->value : 0ull);
	CHECK_OK(hw_reload(), "reloading hwsig.ko");
	CHECK_OK(mod_unload("excl_pmu"), "unloading excl_pmu.ko");
	genl_close(&s);
	CHECK_OK(hw_open(&s), "resolving the family");
	err = hw_configure(&s, 10000000, 64, ev, 2, &r);
	CHECK(err == -ENOENT && strstr(r.extack, "no PMU"), "cpu_atom's type after the PMU is gone: %s \"%s\", want ENOENT",
	      strerror(-err), r.extack);
	genl_close(&s);
	return 0;
}

int case_hybrid(int argc, char **argv)
{
	(void)argc; (void)argv;
	int rc = hybrid();
	/* Whatever failed: nothing left for the next case. */
	write_file_str(CPU1_ONLINE, "1");
	if (hw_reload() && !rc)
		FAIL("reloading hwsig.ko failed");
	if (mod_loaded("excl_pmu") && mod_unload("excl_pmu") && !rc)
		FAIL("unloading excl_pmu.ko failed");
	return rc;
}
