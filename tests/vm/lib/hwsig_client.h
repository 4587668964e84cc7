/* hwsig's control (generic netlink) and data (mmap of /dev/hwsig) planes,
 * written from include/uapi/linux/hwsig.h alone: the tests must not share
 * code with the reader they check. */
#ifndef VMTEST_HWSIG_CLIENT_H
#define VMTEST_HWSIG_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/hwsig.h>

#include "genl.h"

#define VM_MAX_CPUS 128

struct hw_info {
	int have[HWSIG_ATTR_MAX + 1];	/* which attributes the reply held */
	uint32_t abi_version, compat_version, nr_cpu_ids, nr_online_cpus;
	uint32_t ring_records, record_size, max_events, max_ring_records;
	uint64_t mmap_size, sample_interval_ns, min_interval_ns, max_interval_ns;
	uint64_t config_generation;
	uint64_t ring_bytes_max, ring_bytes;
	uint32_t config_flags;
	uint8_t running;
};

struct hw_status_entry {
	uint32_t event_index, cpu;
	int32_t error;
	uint64_t time_enabled, time_running, value;
};

struct hw_status {
	uint8_t running;
	uint64_t config_generation;
	uint64_t cost_avg_ns, cost_max_ns;
	uint64_t latency_avg_ns, latency_max_ns;	/* timer fire -> record published */
	uint64_t records_written, records_overwritten;
	uint64_t ticks_overrun, ticks_skipped;		/* this configuration, all CPUs */
	int have_cost, have_latency, have_written, have_overwritten, have_ticks;
	int messages;			/* dump: messages received (summary included) */
	int restarts;			/* dump: times it started over (NLM_F_DUMP_INTR) */
	int nr_entries;
	struct hw_status_entry entry[HWSIG_MAX_EVENTS * VM_MAX_CPUS];
};

struct hw_event_spec {
	const char *name;
	uint32_t type;
	uint64_t config;
	int32_t cpu;
};

/* PERF_TYPE_SOFTWARE cpu-clock, task-clock, context-switches. */
extern const struct hw_event_spec hw_sw_events[3];

int hw_open(struct genl_sock *s);
int hw_get_info(struct genl_sock *s, struct hw_info *info, struct genl_reply *r);
/* GET_STATUS as a dump (summary + one message per CPU; every message's
 * generation and CPU checked), started over while NLM_F_DUMP_INTR. */
int hw_get_status(struct genl_sock *s, struct hw_status *st, struct genl_reply *r);
/* GET_STATUS as one message (the doit). */
int hw_get_status_doit(struct genl_sock *s, struct hw_status *st, struct genl_reply *r);
/* ring_records 0: attribute left out (module default). */
int hw_configure(struct genl_sock *s, uint64_t interval_ns, uint32_t ring_records,
		 const struct hw_event_spec *ev, int n, struct genl_reply *r);
/* The same with HWSIG_ATTR_CONFIG_FLAGS. */
int hw_configure_flags(struct genl_sock *s, uint64_t interval_ns, uint32_t ring_records,
		       const struct hw_event_spec *ev, int n, uint32_t flags, struct genl_reply *r);
int hw_start(struct genl_sock *s, struct genl_reply *r);
int hw_stop(struct genl_sock *s, struct genl_reply *r);
/* The status entry of (event, cpu), or NULL. */
const struct hw_status_entry *hw_status_find(const struct hw_status *st, uint32_t ev, uint32_t cpu);

/* ---- the mapping ---- */
struct hw_map {
	int fd;
	unsigned char *base;
	size_t size;
	const struct hwsig_control_page *ctl;
	uint64_t ring_set;		/* of the rings this mapping holds */
	struct hwsig_control_page geo;	/* the copy it was mapped by: its layout */
	int remaps;			/* times hw_map_open mapped again */
};

/* A consistent copy of the control page (seqcount protocol); 0 or -EAGAIN. */
int hw_control_snapshot(const struct hwsig_control_page *live, struct hwsig_control_page *copy);

/* Opens /dev/hwsig read-only and maps all of it: copies the control page
 * under its sequence count, maps mmap_size, and maps again until CPU 0's
 * ring header names the copy's ring_set and ring_records. 0 or -errno. */
int hw_map_open(struct hw_map *m);
void hw_map_close(struct hw_map *m);
const struct hwsig_ring_header *hw_ring(const struct hw_map *m, unsigned cpu);
uint64_t hw_head(const struct hw_map *m, unsigned cpu);

/* A consumer of one mapping, following the protocol at
 * struct hwsig_ring_header: records it could not read count as lost. */
struct hw_reader {
	uint64_t tail[VM_MAX_CPUS];
	uint64_t lost[VM_MAX_CPUS];
	uint64_t torn[VM_MAX_CPUS];	/* overwritten while copied (part of lost) */
	uint64_t last_head[VM_MAX_CPUS];
};

/* Starts every CPU's tail at its current head (only new records). */
void hw_reader_init_at_head(struct hw_reader *rd, const struct hw_map *m);
/* Reads the records of one CPU published since the last call into out
 * (at most max; older ones beyond max count as lost too, exactly as if the
 * ring had overwritten them). Returns how many were copied. */
int hw_read_cpu(struct hw_reader *rd, const struct hw_map *m, unsigned cpu,
		struct hwsig_record *out, int max);

/* ---- module and system helpers ---- */
int mod_load(const char *path, const char *params);	/* 0 or -errno */
int mod_unload(const char *name);			/* 0 or -errno, never waits */
int mod_loaded(const char *name);
uint64_t now_ns(void);					/* CLOCK_MONOTONIC */
void sleep_ms(unsigned ms);
int pin_to_cpu(int cpu);
int read_file_str(const char *path, char *buf, size_t len);
int write_file_str(const char *path, const char *s);
/* The same, opened with extra open(2) flags (O_APPEND, O_TRUNC). */
int write_file_flags(const char *path, const char *s, int flags);
/* /proc/meminfo field in kB, or -1. */
long meminfo_kb(const char *field);
/* Kernel log since the mark (dmesg -c style through /dev/kmsg is not
 * needed: the init script scans the whole log at the end). */

/* Path of hwsig.ko in the guest. */
#define HWSIG_KO "/lib/modules/hwsig.ko"

/* Fresh module: unloads (stopping sampling first) and loads again. */
int hw_reload(void);
/* The same with module parameters ("ring_bytes_max=4096"). */
int hw_reload_with(const char *params);
/* STOP, then rmmod (retrying while a mapping lingers). */
int hw_stop_and_unload(void);

#endif
