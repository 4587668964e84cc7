#include "common.h"

#include <stdio.h>
#include <stdlib.h>

int setup_running(struct genl_sock *s, uint64_t interval_ns, uint32_t ring_records,
		  const struct hw_event_spec *ev, int n)
{
	static struct genl_reply r;
	CHECK_OK(hw_reload(), "reloading hwsig.ko");
	CHECK_OK(hw_open(s), "resolving the hwsig genl family");
	int err = hw_configure(s, interval_ns, ring_records, ev, n, &r);
	CHECK(!err, "CONFIGURE: %s (extack \"%s\")", strerror(-err), r.extack);
	err = hw_start(s, &r);
	CHECK(!err, "START: %s (extack \"%s\")", strerror(-err), r.extack);
	return 0;
}

long env_count(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return (*end || n <= 0) ? def : n;
}

int possible_cpus(void)
{
	char buf[64];
	if (read_file_str("/sys/devices/system/cpu/possible", buf, sizeof(buf)))
		return -1;
	/* "0", "0-1", "0-3,5": the highest id + 1 is what nr_cpu_ids means. */
	int hi = -1;
	for (char *p = buf; *p;) {
		if (*p < '0' || *p > '9') {
			p++;
			continue;
		}
		char *end;
		long v = strtol(p, &end, 10);
		if (v > hi)
			hi = (int)v;
		p = end;
	}
	return hi + 1;
}

int cpu_online(int cpu)
{
	char path[96], buf[8];
	if (cpu == 0)
		return 1;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (read_file_str(path, buf, sizeof(buf)))
		return 1;
	return buf[0] == '1';
}

struct hwsig_record *read_all(struct hw_reader *rd, const struct hw_map *m, unsigned cpu, int *n)
{
	static struct hwsig_record *buf;
	static uint32_t cap;
	if (cap < m->geo.ring_records) {
		free(buf);
		cap = m->geo.ring_records;
		buf = calloc(cap, sizeof(*buf));
	}
	*n = hw_read_cpu(rd, m, cpu, buf, (int)cap);
	return buf;
}
