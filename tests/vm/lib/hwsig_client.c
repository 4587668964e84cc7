#define _GNU_SOURCE
#include "hwsig_client.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/perf_event.h>

const struct hw_event_spec hw_sw_events[3] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, HWSIG_EVENT_ALL_CPUS },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, HWSIG_EVENT_ALL_CPUS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, HWSIG_EVENT_ALL_CPUS },
};

/* genl_reply keeps every top-level attribute by type (attr[64]): an ABI
 * that grows past it would have replies lose attributes silently. */
_Static_assert(HWSIG_ATTR_MAX < (int)(sizeof(((struct genl_reply *)0)->attr) /
				      sizeof(((struct genl_reply *)0)->attr[0])),
	       "genl_reply.attr too small for HWSIG_ATTR_MAX");

/*
 * What the module sends and these parsers leave as raw attributes (still in
 * r->attr, and flagged in hw_info.have): GET_INFO's HWSIG_ATTR_EVENTS nest
 * (the cases configure their events themselves and check the module's
 * behaviour, not the echo; hwsigctl kmod info prints it in case-hwsigctl)
 * and GET_STATUS's HWSIG_ATTR_SAMPLE_INTERVAL_NS (the same value GET_INFO
 * reports, which is where the cases read it). Every other attribute of
 * both replies is parsed. HWSIG_ATTR_PAD carries nothing.
 */
int hw_open(struct genl_sock *s) { return genl_open(s, HWSIG_GENL_NAME); }

int hw_get_info(struct genl_sock *s, struct hw_info *info, struct genl_reply *r)
{
	memset(info, 0, sizeof(*info));
	int err = genl_simple(s, HWSIG_CMD_GET_INFO, r);
	if (err)
		return err;
	if (!r->have_payload)
		return -ENODATA;
	const struct nlattr *const *a = r->attr;
	for (int i = 0; i <= HWSIG_ATTR_MAX; i++)
		info->have[i] = a[i] != NULL;
#define U32(attr, field) if (a[attr]) info->field = nla_u32v(a[attr])
#define U64(attr, field) if (a[attr]) info->field = nla_u64v(a[attr])
	U32(HWSIG_ATTR_ABI_VERSION, abi_version);
	U32(HWSIG_ATTR_COMPAT_VERSION, compat_version);
	U32(HWSIG_ATTR_NR_CPU_IDS, nr_cpu_ids);
	U32(HWSIG_ATTR_NR_ONLINE_CPUS, nr_online_cpus);
	U32(HWSIG_ATTR_RING_RECORDS, ring_records);
	U32(HWSIG_ATTR_RECORD_SIZE, record_size);
	U32(HWSIG_ATTR_MAX_EVENTS, max_events);
	U32(HWSIG_ATTR_MAX_RING_RECORDS, max_ring_records);
	U64(HWSIG_ATTR_MMAP_SIZE, mmap_size);
	U64(HWSIG_ATTR_SAMPLE_INTERVAL_NS, sample_interval_ns);
	U64(HWSIG_ATTR_MIN_INTERVAL_NS, min_interval_ns);
	U64(HWSIG_ATTR_MAX_INTERVAL_NS, max_interval_ns);
	U64(HWSIG_ATTR_CONFIG_GENERATION, config_generation);
	U64(HWSIG_ATTR_RING_BYTES_MAX, ring_bytes_max);
	U64(HWSIG_ATTR_RING_BYTES, ring_bytes);
	U32(HWSIG_ATTR_CONFIG_FLAGS, config_flags);
#undef U32
#undef U64
	if (a[HWSIG_ATTR_RUNNING])
		info->running = nla_u8v(a[HWSIG_ATTR_RUNNING]);
	return 0;
}

static void status_summary(struct hw_status *st, const struct nlattr *const *a)
{
	if (a[HWSIG_ATTR_RUNNING])
		st->running = nla_u8v(a[HWSIG_ATTR_RUNNING]);
	if (a[HWSIG_ATTR_CONFIG_GENERATION])
		st->config_generation = nla_u64v(a[HWSIG_ATTR_CONFIG_GENERATION]);
	if (a[HWSIG_ATTR_SAMPLE_COST_AVG_NS] && a[HWSIG_ATTR_SAMPLE_COST_MAX_NS]) {
		st->have_cost = 1;
		st->cost_avg_ns = nla_u64v(a[HWSIG_ATTR_SAMPLE_COST_AVG_NS]);
		st->cost_max_ns = nla_u64v(a[HWSIG_ATTR_SAMPLE_COST_MAX_NS]);
	}
	if (a[HWSIG_ATTR_SAMPLE_LATENCY_AVG_NS] && a[HWSIG_ATTR_SAMPLE_LATENCY_MAX_NS]) {
		st->have_latency = 1;
		st->latency_avg_ns = nla_u64v(a[HWSIG_ATTR_SAMPLE_LATENCY_AVG_NS]);
		st->latency_max_ns = nla_u64v(a[HWSIG_ATTR_SAMPLE_LATENCY_MAX_NS]);
	}
	if (a[HWSIG_ATTR_TICKS_OVERRUN] && a[HWSIG_ATTR_TICKS_SKIPPED]) {
		st->have_ticks = 1;
		st->ticks_overrun = nla_u64v(a[HWSIG_ATTR_TICKS_OVERRUN]);
		st->ticks_skipped = nla_u64v(a[HWSIG_ATTR_TICKS_SKIPPED]);
	}
	if (a[HWSIG_ATTR_RECORDS_WRITTEN]) {
		st->have_written = 1;
		st->records_written = nla_u64v(a[HWSIG_ATTR_RECORDS_WRITTEN]);
	}
	if (a[HWSIG_ATTR_RECORDS_OVERWRITTEN]) {
		st->have_overwritten = 1;
		st->records_overwritten = nla_u64v(a[HWSIG_ATTR_RECORDS_OVERWRITTEN]);
	}
}

/* Appends the entries of one HWSIG_ATTR_STATUS nest; only_cpu >= 0: every
 * entry must be of that CPU. */
static int status_entries(struct hw_status *st, const struct nlattr *list, int64_t only_cpu)
{
	for (const struct nlattr *e = nla_first(list); e; e = nla_next(list, e)) {
		if ((e->nla_type & NLA_TYPE_MASK) != HWSIG_ATTR_STATUS_ENTRY)
			continue;
		if (st->nr_entries >= (int)(sizeof(st->entry) / sizeof(st->entry[0])))
			return -E2BIG;
		const struct nlattr *tb[HWSIG_STATUS_ATTR_MAX + 1];
		if (nla_parse_into(tb, HWSIG_STATUS_ATTR_MAX, nla_payload(e), nla_payload_len(e)))
			return -EBADMSG;
		if (!tb[HWSIG_STATUS_ATTR_EVENT_INDEX] || !tb[HWSIG_STATUS_ATTR_CPU] || !tb[HWSIG_STATUS_ATTR_ERROR])
			return -EBADMSG;
		struct hw_status_entry *x = &st->entry[st->nr_entries++];
		memset(x, 0, sizeof(*x));
		x->event_index = nla_u32v(tb[HWSIG_STATUS_ATTR_EVENT_INDEX]);
		x->cpu = nla_u32v(tb[HWSIG_STATUS_ATTR_CPU]);
		x->error = (int32_t)nla_u32v(tb[HWSIG_STATUS_ATTR_ERROR]);
		if (only_cpu >= 0 && x->cpu != (uint32_t)only_cpu)
			return -EBADMSG;
		if (tb[HWSIG_STATUS_ATTR_TIME_ENABLED])
			x->time_enabled = nla_u64v(tb[HWSIG_STATUS_ATTR_TIME_ENABLED]);
		if (tb[HWSIG_STATUS_ATTR_TIME_RUNNING])
			x->time_running = nla_u64v(tb[HWSIG_STATUS_ATTR_TIME_RUNNING]);
		if (tb[HWSIG_STATUS_ATTR_VALUE])
			x->value = nla_u64v(tb[HWSIG_STATUS_ATTR_VALUE]);
	}
	return 0;
}

int hw_get_status_doit(struct genl_sock *s, struct hw_status *st, struct genl_reply *r)
{
	memset(st, 0, offsetof(struct hw_status, entry));
	int err = genl_simple(s, HWSIG_CMD_GET_STATUS, r);
	if (err)
		return err;
	if (!r->have_payload)
		return -ENODATA;
	status_summary(st, r->attr);
	st->messages = 1;
	if (!r->attr[HWSIG_ATTR_STATUS])
		return 0;
	return status_entries(st, r->attr[HWSIG_ATTR_STATUS], -1);
}

struct dump_state {
	struct hw_status *st;
	int intr;
	int have_gen;
	int64_t last_cpu;
};

static int status_dump_msg(const struct nlmsghdr *n, void *arg)
{
	struct dump_state *d = arg;
	struct hw_status *st = d->st;
	if (n->nlmsg_flags & NLM_F_DUMP_INTR)
		d->intr = 1;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	if (n->nlmsg_len < off)
		return -EBADMSG;
	const struct nlattr *a[HWSIG_ATTR_MAX + 1];
	if (nla_parse_into(a, HWSIG_ATTR_MAX, (const unsigned char *)n + off, n->nlmsg_len - off))
		return -EBADMSG;
	if (!a[HWSIG_ATTR_CONFIG_GENERATION])
		return -EBADMSG;
	uint64_t gen = nla_u64v(a[HWSIG_ATTR_CONFIG_GENERATION]);
	if (d->have_gen && gen != st->config_generation)
		d->intr = 1;	/* a configuration swapped in mid-dump */
	st->messages++;
	if (!a[HWSIG_ATTR_STATUS_CPU]) {
		/* The summary: first, once. */
		if (st->messages != 1)
			return -EBADMSG;
		status_summary(st, a);
		d->have_gen = 1;
		return 0;
	}
	if (st->messages == 1)
		return -EBADMSG;
	int64_t cpu = nla_u32v(a[HWSIG_ATTR_STATUS_CPU]);
	/* One message per CPU, in CPU order. */
	if (cpu <= d->last_cpu || !a[HWSIG_ATTR_STATUS])
		return -EBADMSG;
	d->last_cpu = cpu;
	return status_entries(st, a[HWSIG_ATTR_STATUS], cpu);
}

int hw_get_status(struct genl_sock *s, struct hw_status *st, struct genl_reply *r)
{
	static struct genl_msg m;
	int restarts = 0;
	for (;;) {
		memset(st, 0, offsetof(struct hw_status, entry));
		struct dump_state d = { .st = st, .last_cpu = -1 };
		genl_msg_init(&m, s->family, HWSIG_CMD_GET_STATUS);
		int err = genl_dump(s, &m, status_dump_msg, &d, r);
		if (err)
			return err;
		if (!d.intr || restarts >= 20) {
			st->restarts = restarts;
			return d.intr ? -EAGAIN : (st->messages ? 0 : -ENODATA);
		}
		restarts++;
	}
}

const struct hw_status_entry *hw_status_find(const struct hw_status *st, uint32_t ev, uint32_t cpu)
{
	for (int i = 0; i < st->nr_entries; i++)
		if (st->entry[i].event_index == ev && st->entry[i].cpu == cpu)
			return &st->entry[i];
	return NULL;
}

int hw_configure(struct genl_sock *s, uint64_t interval_ns, uint32_t ring_records,
		 const struct hw_event_spec *ev, int n, struct genl_reply *r)
{
	return hw_configure_flags(s, interval_ns, ring_records, ev, n, 0, r);
}

int hw_configure_flags(struct genl_sock *s, uint64_t interval_ns, uint32_t ring_records,
		       const struct hw_event_spec *ev, int n, uint32_t flags, struct genl_reply *r)
{
	static struct genl_msg m;
	genl_msg_init(&m, s->family, HWSIG_CMD_CONFIGURE);
	genl_put_u64(&m, HWSIG_ATTR_SAMPLE_INTERVAL_NS, interval_ns);
	if (flags)
		genl_put_u32(&m, HWSIG_ATTR_CONFIG_FLAGS, flags);
	if (ring_records)
		genl_put_u32(&m, HWSIG_ATTR_RING_RECORDS, ring_records);
	genl_nest_start(&m, HWSIG_ATTR_EVENTS);
	for (int i = 0; i < n; i++) {
		genl_nest_start(&m, HWSIG_ATTR_EVENT);
		genl_put_str(&m, HWSIG_EVENT_ATTR_NAME, ev[i].name);
		genl_put_u32(&m, HWSIG_EVENT_ATTR_PMU_TYPE, ev[i].type);
		genl_put_u64(&m, HWSIG_EVENT_ATTR_CONFIG, ev[i].config);
		genl_put_u32(&m, HWSIG_EVENT_ATTR_CPU, (uint32_t)ev[i].cpu);
		genl_nest_end(&m);
	}
	genl_nest_end(&m);
	return genl_transact(s, &m, r);
}

int hw_start(struct genl_sock *s, struct genl_reply *r) { return genl_simple(s, HWSIG_CMD_START, r); }
int hw_stop(struct genl_sock *s, struct genl_reply *r) { return genl_simple(s, HWSIG_CMD_STOP, r); }

int hw_control_snapshot(const struct hwsig_control_page *live, struct hwsig_control_page *copy)
{
	for (int i = 0; i < 1000; i++) {
		uint64_t s1 = __atomic_load_n(&live->seq, __ATOMIC_ACQUIRE);	/* (J) */
		if (s1 & 1)
			continue;
		memcpy(copy, (const void *)live, sizeof(*copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);			/* (H) */
		if (__atomic_load_n(&live->seq, __ATOMIC_RELAXED) == s1)
			return 0;
	}
	return -EAGAIN;
}

int hw_map_open(struct hw_map *m)
{
	memset(m, 0, sizeof(*m));
	m->fd = open("/dev/" HWSIG_DEVICE_NAME, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return -errno;
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, m->fd, 0);
	if (p == MAP_FAILED) {
		int e = -errno;
		close(m->fd);
		return e;
	}
	const struct hwsig_control_page *live = p;
	for (int attempt = 0; attempt < 100; attempt++) {
		struct hwsig_control_page cp;
		if (hw_control_snapshot(live, &cp))
			continue;
		size_t size = cp.mmap_size ? (size_t)cp.mmap_size : (size_t)page;
		void *q = mmap(NULL, size, PROT_READ, MAP_SHARED, m->fd, 0);
		if (q == MAP_FAILED) {
			if (errno == EINVAL) {	/* the rings shrank meanwhile */
				m->remaps++;
				continue;
			}
			int e = -errno;
			munmap(p, (size_t)page);
			close(m->fd);
			return e;
		}
		if (cp.ring_set) {
			const struct hwsig_ring_header *h0 = (const void *)((unsigned char *)q + cp.ring_offset);
			if (h0->ring_set != cp.ring_set || h0->ring_records != cp.ring_records) {
				munmap(q, size);
				m->remaps++;
				continue;
			}
		}
		munmap(p, (size_t)page);
		m->base = q;
		m->size = size;
		m->ctl = q;
		m->ring_set = cp.ring_set;
		m->geo = cp;
		return 0;
	}
	munmap(p, (size_t)page);
	close(m->fd);
	return -EAGAIN;
}

void hw_map_close(struct hw_map *m)
{
	if (m->base)
		munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

const struct hwsig_ring_header *hw_ring(const struct hw_map *m, unsigned cpu)
{
	/* The layout the mapping was made with: the live control page may
	 * describe newer rings already. */
	return (const struct hwsig_ring_header *)(m->base + m->geo.ring_offset + (uint64_t)cpu * m->geo.ring_stride);
}

uint64_t hw_head(const struct hw_map *m, unsigned cpu)
{
	return __atomic_load_n(&hw_ring(m, cpu)->head, __ATOMIC_ACQUIRE);	/* (F) */
}

void hw_reader_init_at_head(struct hw_reader *rd, const struct hw_map *m)
{
	memset(rd, 0, sizeof(*rd));
	for (unsigned c = 0; c < m->geo.nr_cpu_ids && c < VM_MAX_CPUS; c++)
		rd->tail[c] = rd->last_head[c] = hw_head(m, c);
}

int hw_read_cpu(struct hw_reader *rd, const struct hw_map *m, unsigned cpu,
		struct hwsig_record *out, int max)
{
	const struct hwsig_control_page *ctl = &m->geo;
	uint64_t head = hw_head(m, cpu);				/* (F) */
	uint64_t tail = rd->tail[cpu];
	uint64_t keep = ctl->ring_records < (uint64_t)max ? ctl->ring_records : (uint64_t)max;
	rd->last_head[cpu] = head;
	if (head - tail > keep) {
		rd->lost[cpu] += head - keep - tail;
		tail = head - keep;
	}
	const unsigned char *data = (const unsigned char *)hw_ring(m, cpu) + ctl->data_offset;
	int n = 0;
	for (uint64_t idx = tail; idx < head; idx++) {
		const struct hwsig_record *rec = (const struct hwsig_record *)
			(data + (idx & (ctl->ring_records - 1)) * ctl->record_size);
		uint64_t s_end = __atomic_load_n(&rec->seq_end, __ATOMIC_ACQUIRE);	/* (C) */
		memcpy(&out[n], rec, sizeof(*rec));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);				/* (D) */
		uint64_t s = __atomic_load_n(&rec->seq, __ATOMIC_RELAXED);
		if (s == s_end && s == idx + 1) {
			n++;
		} else {
			rd->lost[cpu]++;
			rd->torn[cpu]++;
		}
	}
	rd->tail[cpu] = head;
	return n;
}

int mod_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = (int)syscall(SYS_finit_module, fd, params ? params : "", 0);
	int e = rc ? -errno : 0;
	close(fd);
	return e;
}

int mod_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

int mod_loaded(const char *name)
{
	FILE *f = fopen("/proc/modules", "r");
	if (!f)
		return 0;
	char line[512];
	size_t len = strlen(name);
	int found = 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ' ')
			found = 1;
	fclose(f);
	return found;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int pin_to_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int read_file_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = n < 0 ? -errno : 0;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return e;
}

int write_file_str(const char *path, const char *s)
{
	return write_file_flags(path, s, 0);
}

int write_file_flags(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, s, strlen(s));
	int e = n < 0 ? -errno : 0;
	close(fd);
	return e;
}

long meminfo_kb(const char *field)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	char line[256];
	size_t len = strlen(field);
	long v = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':')
			v = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

int hw_reload(void)
{
	return hw_reload_with("");
}

int hw_stop_and_unload(void)
{
	struct genl_sock s;
	static struct genl_reply r;
	if (!hw_open(&s)) {
		hw_stop(&s, &r);
		genl_close(&s);
	}
	int e = 0;
	/* Another process's mapping may linger briefly after it exits. */
	for (int i = 0; i < 50; i++) {
		e = mod_unload("hwsig");
		if (e != -EAGAIN && e != -EBUSY)
			break;
		sleep_ms(20);
	}
	return e;
}

int hw_reload_with(const char *params)
{
	if (mod_loaded("hwsig")) {
		int e = hw_stop_and_unload();

		if (e)
			return e;
	}
	return mod_load(HWSIG_KO, params);
}
