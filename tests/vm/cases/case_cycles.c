/* 50 rounds of insmod, configure, start, read, stop, rmmod leave no
 * memory behind and no module in /proc/modules. */
#include "cases.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

#define CYCLES 50

struct mem {
	long slab_kb, vmalloc_kb, percpu_kb;
	long vmalloc_areas;
};

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long n = 0;
	int c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void measure(struct mem *m)
{
	/* Let RCU-deferred frees and per-CPU slab caches settle first. */
	write_file_str("/proc/sys/vm/drop_caches", "2");
	sleep_ms(100);
	m->slab_kb = meminfo_kb("Slab");
	m->vmalloc_kb = meminfo_kb("VmallocUsed");
	m->percpu_kb = meminfo_kb("Percpu");
	m->vmalloc_areas = count_lines("/proc/vmallocinfo");
}

static int one_cycle(int i)
{
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_map m;
	int err = mod_load(HWSIG_KO, "");
	CHECK(!err, "cycle %d: insmod: %s", i, strerror(-err));
	CHECK_OK(hw_open(&s), "resolving the family");
	err = hw_configure(&s, 1000000, 1024, hw_sw_events, 3, &r);
	CHECK(!err, "cycle %d: CONFIGURE: %s (%s)", i, strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START");
	CHECK_OK(hw_map_open(&m), "mapping");
	sleep_ms(10);
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK(hw_head(&m, 0) + hw_head(&m, 1) > 0, "cycle %d: no records at all", i);
	hw_map_close(&m);
	genl_close(&s);
	for (int t = 0; t < 50; t++) {
		err = mod_unload("hwsig");
		if (err != -EAGAIN && err != -EBUSY)
			break;
		sleep_ms(10);
	}
	CHECK(!err, "cycle %d: rmmod: %s", i, strerror(-err));
	return 0;
}

int case_cycles(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct mem a, b;
	if (mod_loaded("hwsig")) {
		int err = hw_reload();
		CHECK(!err, "reload: %s", strerror(-err));
		err = mod_unload("hwsig");
		CHECK(!err, "initial rmmod: %s", strerror(-err));
	}
	/* Two warm-up rounds fill the slab caches the module's objects use. */
	for (int i = 0; i < 2; i++)
		if (one_cycle(i))
			return 1;
	measure(&a);
	uint64_t t0 = now_ns();
	for (int i = 0; i < CYCLES; i++)
		if (one_cycle(i))
			return 1;
	uint64_t t1 = now_ns();
	measure(&b);
	vm_note("%d cycles in %llu ms; Slab %+ld kB, VmallocUsed %+ld kB, Percpu %+ld kB, vmalloc areas %+ld",
		CYCLES, (unsigned long long)((t1 - t0) / 1000000), b.slab_kb - a.slab_kb,
		b.vmalloc_kb - a.vmalloc_kb, b.percpu_kb - a.percpu_kb, b.vmalloc_areas - a.vmalloc_areas);
	CHECK(!mod_loaded("hwsig"), "hwsig in /proc/modules after the last rmmod");
	/* Each cycle maps two rings of 1024 * 512 B: a leaked ring is
	 * 512 kB of vmalloc per cycle; a leaked kmalloc object of the
	 * module's, 50 of them. The tolerances sit far below either. */
	CHECK(b.vmalloc_kb - a.vmalloc_kb <= 64, "VmallocUsed grew %ld kB over %d cycles", b.vmalloc_kb - a.vmalloc_kb, CYCLES);
	CHECK(b.vmalloc_areas - a.vmalloc_areas <= 2, "vmalloc areas grew by %ld over %d cycles",
	      b.vmalloc_areas - a.vmalloc_areas, CYCLES);
	/* KASAN's quarantine holds freed objects back (up to 1/32 of RAM):
	 * the debug tier raises this bound (VMTEST_SLAB_GROWTH_KB) and leaves
	 * leaks to kmemleak there. */
	const long slab_max = env_count("VMTEST_SLAB_GROWTH_KB", 400);
	CHECK(b.slab_kb - a.slab_kb <= slab_max, "Slab grew %ld kB over %d cycles (at most %ld)",
	      b.slab_kb - a.slab_kb, CYCLES, slab_max);
	CHECK(b.percpu_kb - a.percpu_kb <= 16, "Percpu grew %ld kB over %d cycles", b.percpu_kb - a.percpu_kb, CYCLES);
	/* Leave the module loaded for the cases that follow. */
	CHECK_OK(mod_load(HWSIG_KO, ""), "final insmod");
	return 0;
}
