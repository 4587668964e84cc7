/* The control page and GET_INFO tell the same story, and the story matches
 * the header this test was built with and the machine it runs on. */
#include "cases.h"
#include "common.h"

#include <sys/mman.h>
#include <unistd.h>

static int check_info_vs_page(const struct hw_info *in, const struct hw_map *m)
{
	const struct hwsig_control_page *c = m->ctl;
	long page = sysconf(_SC_PAGESIZE);
	CHECK(c->abi_version == in->abi_version && c->compat_version == in->compat_version,
	      "control page abi %u/%u vs GET_INFO %u/%u", c->abi_version, c->compat_version,
	      in->abi_version, in->compat_version);
	CHECK(c->page_size == (uint32_t)page, "page_size %u, system %ld", c->page_size, page);
	CHECK(c->nr_cpu_ids == in->nr_cpu_ids, "nr_cpu_ids page %u info %u", c->nr_cpu_ids, in->nr_cpu_ids);
	CHECK(c->ring_records == in->ring_records, "ring_records page %u info %u", c->ring_records, in->ring_records);
	CHECK(c->record_size == in->record_size, "record_size page %u info %u", c->record_size, in->record_size);
	CHECK(c->mmap_size == in->mmap_size, "mmap_size page %llu info %llu",
	      (unsigned long long)c->mmap_size, (unsigned long long)in->mmap_size);
	CHECK(c->sample_interval_ns == in->sample_interval_ns, "interval page %llu info %llu",
	      (unsigned long long)c->sample_interval_ns, (unsigned long long)in->sample_interval_ns);
	CHECK(c->config_generation == in->config_generation, "generation page %llu info %llu",
	      (unsigned long long)c->config_generation, (unsigned long long)in->config_generation);
	CHECK(c->running == in->running, "running page %u info %u", c->running, in->running);
	CHECK(c->clock_id == 1 /* CLOCK_MONOTONIC */, "clock_id %u", c->clock_id);
	/* Geometry: page aligned, rings inside the mapping, records inside a ring. */
	CHECK(c->ring_offset % (uint64_t)page == 0 && c->ring_stride % (uint64_t)page == 0 &&
	      c->data_offset % (uint64_t)page == 0 && c->ring_offset >= (uint64_t)page,
	      "geometry not page aligned: ring_offset %llu stride %llu data_offset %llu",
	      (unsigned long long)c->ring_offset, (unsigned long long)c->ring_stride,
	      (unsigned long long)c->data_offset);
	CHECK(c->data_offset >= sizeof(struct hwsig_ring_header), "data_offset %llu", (unsigned long long)c->data_offset);
	CHECK(c->ring_stride >= c->data_offset + (uint64_t)c->ring_records * c->record_size,
	      "ring_stride %llu < data_offset + %u records", (unsigned long long)c->ring_stride, c->ring_records);
	CHECK(c->mmap_size == c->ring_offset + (uint64_t)c->nr_cpu_ids * c->ring_stride,
	      "mmap_size %llu != ring_offset + nr_cpu_ids * ring_stride = %llu",
	      (unsigned long long)c->mmap_size,
	      (unsigned long long)(c->ring_offset + (uint64_t)c->nr_cpu_ids * c->ring_stride));
	for (unsigned cpu = 0; cpu < c->nr_cpu_ids; cpu++)
		CHECK(hw_ring(m, cpu)->cpu == cpu, "ring header %u says cpu %u", cpu, hw_ring(m, cpu)->cpu);
	for (size_t i = 0; i < sizeof(c->__reserved) / sizeof(c->__reserved[0]); i++)
		CHECK(c->__reserved[i] == 0, "control page __reserved[%zu] = %llu", i, (unsigned long long)c->__reserved[i]);
	return 0;
}

int case_version(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_info in;
	struct hw_map m;

	CHECK_OK(hw_reload(), "loading hwsig.ko");
	CHECK_OK(hw_open(&s), "resolving the hwsig genl family");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	static const int required[] = {
		HWSIG_ATTR_ABI_VERSION, HWSIG_ATTR_COMPAT_VERSION, HWSIG_ATTR_NR_CPU_IDS,
		HWSIG_ATTR_NR_ONLINE_CPUS, HWSIG_ATTR_RING_RECORDS, HWSIG_ATTR_RECORD_SIZE,
		HWSIG_ATTR_MMAP_SIZE, HWSIG_ATTR_SAMPLE_INTERVAL_NS, HWSIG_ATTR_MAX_EVENTS,
		HWSIG_ATTR_MIN_INTERVAL_NS, HWSIG_ATTR_MAX_INTERVAL_NS, HWSIG_ATTR_MAX_RING_RECORDS,
		HWSIG_ATTR_RUNNING, HWSIG_ATTR_CONFIG_GENERATION,
	};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		CHECK(in.have[required[i]], "GET_INFO lacks attribute %d", required[i]);
	vm_note("GET_INFO: abi %u compat %u cpus %u/%u ring %u x %u B mmap %llu interval %llu ns",
		in.abi_version, in.compat_version, in.nr_online_cpus, in.nr_cpu_ids, in.ring_records,
		in.record_size, (unsigned long long)in.mmap_size, (unsigned long long)in.sample_interval_ns);

	CHECK(in.abi_version == HWSIG_ABI_VERSION && in.compat_version == HWSIG_ABI_COMPAT_VERSION,
	      "module abi %u/%u, header %u/%u", in.abi_version, in.compat_version,
	      HWSIG_ABI_VERSION, HWSIG_ABI_COMPAT_VERSION);
	CHECK(hwsig_abi_compatible(in.abi_version, in.compat_version), "header says incompatible");
	CHECK(in.record_size == sizeof(struct hwsig_record), "record_size %u", in.record_size);
	CHECK(in.nr_cpu_ids == (uint32_t)possible_cpus(), "nr_cpu_ids %u, /sys says %d possible",
	      in.nr_cpu_ids, possible_cpus());
	CHECK(in.nr_online_cpus == (uint32_t)sysconf(_SC_NPROCESSORS_ONLN), "nr_online %u, sysconf %ld",
	      in.nr_online_cpus, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK(in.max_events == HWSIG_MAX_EVENTS && in.min_interval_ns == HWSIG_MIN_INTERVAL_NS &&
	      in.max_interval_ns == HWSIG_MAX_INTERVAL_NS && in.max_ring_records == HWSIG_MAX_RING_RECORDS,
	      "limits %u %llu %llu %u differ from the header", in.max_events,
	      (unsigned long long)in.min_interval_ns, (unsigned long long)in.max_interval_ns, in.max_ring_records);
	CHECK(!in.running, "a fresh module reports running");

	/* Unconfigured, there are no rings yet: only the control page. */
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	CHECK(m.size == in.mmap_size, "mapped %zu, GET_INFO mmap_size %llu", m.size, (unsigned long long)in.mmap_size);
	CHECK(m.ctl->abi_version == in.abi_version && m.ctl->compat_version == in.compat_version &&
	      m.ctl->nr_cpu_ids == in.nr_cpu_ids && m.ctl->record_size == in.record_size &&
	      m.ctl->mmap_size == in.mmap_size && m.ctl->config_generation == in.config_generation &&
	      m.ctl->running == 0,
	      "unconfigured control page (abi %u/%u cpus %u rec %u mmap %llu gen %llu) differs from GET_INFO",
	      m.ctl->abi_version, m.ctl->compat_version, m.ctl->nr_cpu_ids, m.ctl->record_size,
	      (unsigned long long)m.ctl->mmap_size, (unsigned long long)m.ctl->config_generation);
	/* The mapping cannot reach past mmap_size. */
	long page = sysconf(_SC_PAGESIZE);
	void *big = mmap(NULL, m.size + (size_t)page, PROT_READ, MAP_SHARED, m.fd, 0);
	CHECK(big == MAP_FAILED, "a mapping of mmap_size + one page was allowed");
	void *past = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, m.fd, (off_t)m.size);
	CHECK(past == MAP_FAILED, "a page at offset mmap_size was mappable");
	hw_map_close(&m);

	/* CONFIGURE without a ring size gets the default one. */
	uint64_t gen0 = in.config_generation;
	int err = hw_configure(&s, 20000000, 0, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE: %s (%s)", strerror(-err), r.extack);
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO after CONFIGURE");
	CHECK(in.ring_records == HWSIG_DEFAULT_RING_RECORDS, "default ring_records %u, header says %d",
	      in.ring_records, HWSIG_DEFAULT_RING_RECORDS);
	CHECK(in.config_generation == gen0 + 1, "generation %llu -> %llu after one CONFIGURE",
	      (unsigned long long)gen0, (unsigned long long)in.config_generation);
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig after CONFIGURE");
	CHECK(m.size == in.mmap_size, "mapped %zu, GET_INFO mmap_size %llu", m.size, (unsigned long long)in.mmap_size);
	if (check_info_vs_page(&in, &m))
		return 1;
	hw_map_close(&m);

	/* A new configuration shows in both places, with a new generation. */
	gen0 = in.config_generation;
	err = hw_configure(&s, 5000000, 64, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE: %s (%s)", strerror(-err), r.extack);
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO after CONFIGURE");
	CHECK(in.ring_records == 64 && in.sample_interval_ns == 5000000,
	      "GET_INFO after CONFIGURE: ring %u interval %llu", in.ring_records, (unsigned long long)in.sample_interval_ns);
	CHECK(in.config_generation == gen0 + 1, "generation %llu -> %llu after one CONFIGURE",
	      (unsigned long long)gen0, (unsigned long long)in.config_generation);
	CHECK_OK(hw_start(&s, &r), "START");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO after START");
	CHECK(in.running == 1, "GET_INFO running %u after START", in.running);
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig after CONFIGURE");
	if (check_info_vs_page(&in, &m))
		return 1;
	CHECK(m.ctl->nr_events == 3, "control page nr_events %u, configured 3", m.ctl->nr_events);
	for (unsigned cpu = 0; cpu < m.ctl->nr_cpu_ids; cpu++)
		CHECK(hw_ring(&m, cpu)->online == (uint32_t)cpu_online((int)cpu),
		      "ring %u online=%u", cpu, hw_ring(&m, cpu)->online);
	hw_map_close(&m);
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO after STOP");
	CHECK(in.running == 0, "GET_INFO running %u after STOP", in.running);
	genl_close(&s);
	return 0;
}
