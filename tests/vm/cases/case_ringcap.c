/* Ring memory cap (module parameter ring_bytes_max): rings exactly at the
 * cap are allocated and sample; one byte less of cap (the same rings one
 * byte over it) is refused with ENOSPC and a message naming the cap, and
 * the module stays unconfigured. Rings exist only for possible CPUs and
 * GET_INFO reports the bytes in use. A second, differently sized ring set
 * built beside the first counts against the same cap. The pages are
 * charged to the memory cgroup of the process that sent the CONFIGURE. */
#include "cases.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

enum { RING = 256 };

int case_ringcap(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_info in;
	char params[64];
	long page = sysconf(_SC_PAGESIZE);
	int ncpu = possible_cpus();
	CHECK(ncpu > 0, "cannot read /sys/devices/system/cpu/possible");
	/* A ring: its header page and the records, page aligned. */
	uint64_t stride = ((uint64_t)page + RING * sizeof(struct hwsig_record) + (uint64_t)page - 1) /
			  (uint64_t)page * (uint64_t)page;
	uint64_t need = (uint64_t)ncpu * stride;

	/* At the cap: works. */
	snprintf(params, sizeof(params), "ring_bytes_max=%llu", (unsigned long long)need);
	CHECK_OK(hw_reload_with(params), "loading hwsig.ko at the cap");
	CHECK_OK(hw_open(&s), "resolving the family");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	CHECK(in.ring_bytes_max == need && in.ring_bytes == 0, "GET_INFO: cap %llu (want %llu), in use %llu (want 0)",
	      (unsigned long long)in.ring_bytes_max, (unsigned long long)need, (unsigned long long)in.ring_bytes);
	int err = hw_configure(&s, 10000000, RING, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE of rings exactly at the cap (%llu bytes): %s \"%s\"", (unsigned long long)need,
	      strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	CHECK(in.ring_bytes == need, "GET_INFO: %llu ring bytes in use, want %llu", (unsigned long long)in.ring_bytes,
	      (unsigned long long)need);
	struct hw_map m;
	CHECK_OK(hw_map_open(&m), "mapping");
	uint64_t h0 = hw_head(&m, 0);
	sleep_ms(100);
	CHECK(hw_head(&m, 0) > h0, "rings at the cap do not sample");
	/* Another geometry beside the one at the cap: over it. */
	err = hw_configure(&s, 10000000, RING * 2, hw_sw_events, 3, &r);
	CHECK(err == -ENOSPC && strstr(r.extack, "cap"), "a second ring set past the cap: %s \"%s\", want ENOSPC",
	      strerror(-err), r.extack);
	/* The same geometry again reuses the rings: no new memory. */
	err = hw_configure(&s, 10000000, RING, hw_sw_events, 3, &r);
	CHECK(!err, "reconfiguring the same geometry at the cap: %s \"%s\"", strerror(-err), r.extack);
	hw_map_close(&m);
	genl_close(&s);

	/* One byte over: refused, with a message, nothing configured. */
	snprintf(params, sizeof(params), "ring_bytes_max=%llu", (unsigned long long)need - 1);
	CHECK_OK(hw_reload_with(params), "loading hwsig.ko one byte below the rings");
	CHECK_OK(hw_open(&s), "resolving the family");
	err = hw_configure(&s, 10000000, RING, hw_sw_events, 3, &r);
	CHECK(err == -ENOSPC, "CONFIGURE one byte over the cap: %s, want ENOSPC", strerror(-err));
	CHECK(strstr(r.extack, "ring memory cap"), "refused without the cap message: \"%s\"", r.extack);
	vm_note("one byte over: \"%s\"", r.extack);
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	CHECK(in.ring_records == 0 && in.ring_bytes == 0 && in.config_generation == 0,
	      "the refused CONFIGURE left rings %u, %llu bytes, generation %llu", in.ring_records,
	      (unsigned long long)in.ring_bytes, (unsigned long long)in.config_generation);
	genl_close(&s);

	/* The default cap: min(1 GiB, RAM / 8). */
	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the family");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	long total_kb = meminfo_kb("MemTotal");
	uint64_t want = (uint64_t)total_kb * 1024 / 8;
	if (want > (1ull << 30))
		want = 1ull << 30;
	/* MemTotal is totalram_pages: the same pages, in kB. */
	CHECK(in.ring_bytes_max == want, "default cap %llu, want min(1 GiB, MemTotal/8) = %llu",
	      (unsigned long long)in.ring_bytes_max, (unsigned long long)want);
	genl_close(&s);

	/* Charged to the configuring caller's memory cgroup (__GFP_ACCOUNT). */
	mkdir("/sys/fs/cgroup", 0755);
	if (mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL) && errno != EBUSY)
		FAIL("mounting cgroup2: %s", strerror(errno));
	CHECK_OK(write_file_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory"), "enabling the memory controller");
	mkdir("/sys/fs/cgroup/hwsig-test", 0755);
	char pid[32], cur[64];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	CHECK_OK(write_file_str("/sys/fs/cgroup/hwsig-test/cgroup.procs", pid), "joining the test cgroup");
	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the family");
	CHECK_OK(read_file_str("/sys/fs/cgroup/hwsig-test/memory.current", cur, sizeof(cur)), "memory.current");
	uint64_t before = strtoull(cur, NULL, 10);
	/* Rings much larger than the charge batches memcg keeps per CPU
	 * (64 pages each: memory.current moves in such steps). */
	enum { BIG_RING = 4096 };
	uint64_t big = (uint64_t)ncpu * (((uint64_t)page + BIG_RING * sizeof(struct hwsig_record) + (uint64_t)page - 1) /
					 (uint64_t)page * (uint64_t)page);
	uint64_t slack = (uint64_t)ncpu * 64 * (uint64_t)page;
	err = hw_configure(&s, 10000000, BIG_RING, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE in the test cgroup: %s \"%s\"", strerror(-err), r.extack);
	CHECK_OK(read_file_str("/sys/fs/cgroup/hwsig-test/memory.current", cur, sizeof(cur)), "memory.current");
	uint64_t after = strtoull(cur, NULL, 10);
	genl_close(&s);
	CHECK_OK(hw_reload(), "unloading (rings freed)");
	write_file_str("/sys/fs/cgroup/cgroup.procs", pid);
	CHECK(after + slack >= before + big, "the caller's cgroup was charged %lld bytes for %llu bytes of rings",
	      (long long)(after - before), (unsigned long long)big);
	vm_note("the configuring caller's cgroup: +%llu bytes for %llu bytes of rings", (unsigned long long)(after - before),
		(unsigned long long)big);
	vm_note("%d possible CPUs x %llu bytes = %llu: at the cap accepted, one byte over refused", ncpu,
		(unsigned long long)stride, (unsigned long long)need);
	return 0;
}
