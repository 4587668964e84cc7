/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwsig.ko internals shared by its files. The userspace ABI is
 * <linux/hwsig.h> (include/uapi/linux/hwsig.h of this tree).
 *
 * Locking, outermost first:
 *   hwsig.lock (mutex)      control operations (netlink), the reconcile
 *                           work; the only context that creates or
 *                           releases perf events and swaps configurations.
 *   hwsig.hp_lock (raw)     hwsig.active, hwsig.running, hwsig.live and
 *                           hwsig_hp_epoch against the CPU hotplug
 *                           callbacks and the timer-starting IPIs; the
 *                           control page is published under it, in the
 *                           same section that swaps hwsig.active, so it
 *                           always describes the ring set mmap() maps.
 * The sampling work takes no lock: every stop cancels it synchronously
 * before events are released or a configuration is freed.
 * The hotplug callbacks never take hwsig.lock and never create or release
 * events: both would deadlock against the hotplug lock (creating or
 * releasing a software event takes cpus_read_lock() through static keys).
 * They only stop their CPU's timer and defer the rest to the reconcile work,
 * which is unbound: it runs on a housekeeping CPU, not on the CPU whose
 * callback queued it (hotplug.c).
 */
#ifndef HWSIG_PRIV_H
#define HWSIG_PRIV_H

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/hwsig.h>

#include "compat.h"

struct cred;
struct device;
struct nlattr;
struct netlink_ext_ack;
struct page;
struct perf_event;

/* One CPU's ring: its pages (mapped to userspace by the fault handler) and their vmap. */
struct hwsig_ring {
	void *vaddr;			/* header page, then the records */
	struct page **pages;
};

/*
 * The rings of one ring geometry: one ring per possible CPU (ids that are
 * not possible have none and map as zero pages), each a header page
 * followed by the records. Shared by the configuration that writes them
 * and by every mapping of them (vm_private_data), so a reconfiguration
 * never frees pages userspace still maps. Charged, while it lives,
 * against hwsig.ring_bytes_max and to the allocating caller's memory
 * cgroup (__GFP_ACCOUNT).
 */
struct hwsig_buffers {
	struct kref ref;
	u64 id;				/* the control page's ring_set */
	u32 ring_records;
	unsigned int nr_pages;		/* per ring */
	size_t ring_stride;		/* bytes per CPU, page aligned */
	size_t bytes;			/* charged to hwsig.ring_bytes */
	unsigned int nr_rings;		/* nr_cpu_ids */
	struct hwsig_ring rings[];
};

/* NULL for a CPU id that is not possible. */
static inline struct hwsig_ring_header *
hwsig_ring_header(const struct hwsig_buffers *bufs, unsigned int cpu)
{
	return bufs->rings[cpu].vaddr;
}

static inline struct hwsig_record *
hwsig_ring_records(const struct hwsig_buffers *bufs, unsigned int cpu)
{
	return bufs->rings[cpu].vaddr + PAGE_SIZE;
}

struct hwsig_event_spec {
	char name[HWSIG_EVENT_NAME_MAX];
	u32 type;
	s32 cpu;			/* HWSIG_EVENT_ALL_CPUS or one CPU */
	u64 config;
	u64 config1;
	u64 config2;
};

/* A CONFIGURE request, parsed and range checked. */
struct hwsig_config_req {
	u64 interval_ns;
	u32 ring_records;
	u32 flags;			/* HWSIG_CONFIG_F_* */
	u32 nr_events;
	struct hwsig_event_spec events[HWSIG_MAX_EVENTS];
	const struct nlattr *event_attr[HWSIG_MAX_EVENTS];	/* for extack */
};

struct hwsig_stat {
	u64 sum_ns;
	u64 max_ns;
};

/* Per configuration and CPU. Fields the sampling work writes are read with READ_ONCE. */
struct hwsig_cpu {
	struct hrtimer timer;		/* the clock: queues work */
	struct work_struct work;	/* reads the counters, writes the ring */
	struct hwsig_config *cfg;
	unsigned int cpu;
	bool sampling;			/* between start and stop */
	bool first;			/* next record: HWSIG_RECORD_F_FIRST */
	bool opened;			/* events were opened for events_epoch */
	bool isolated;			/* nohz_full/isolated, not sampled: no events, no timer */
	unsigned long events_epoch;	/* hwsig_hp_epoch when opened */
	struct perf_event *events[HWSIG_MAX_EVENTS];	/* set once per open (WRITE_ONCE) */
	int error[HWSIG_MAX_EVENTS];	/* 0 or -errno: opening or last read */
	u32 valid_mask;			/* of the last sample */
	u64 value[HWSIG_MAX_EVENTS];
	u64 enabled[HWSIG_MAX_EVENTS];
	u64 running[HWSIG_MAX_EVENTS];
	u64 fired_ns;			/* when the timer last queued the work */
	u64 ticks;			/* records written by this configuration */
	u64 ticks_skipped;		/* ticks that found the work still pending */
	u64 ticks_overrun;		/* periods the timer fired too late for */
	struct hwsig_stat cost;		/* counter reads + record write */
	struct hwsig_stat latency;	/* timer fire -> record written */
	u64 latency_ticks;		/* records with a latency measured */
};

struct hwsig_config {
	u64 interval_ns;
	u64 generation;
	u32 flags;			/* HWSIG_CONFIG_F_* */
	u32 nr_events;
	u32 pmu_tried;			/* bit i: event i was opened somewhere */
	u32 pmu_found;			/* bit i: event i's PMU answered */
	bool counting;			/* counters enabled (START..STOP); hwsig.lock */
	struct hwsig_event_spec events[HWSIG_MAX_EVENTS];
	struct hwsig_buffers *bufs;
	struct hwsig_cpu __percpu *cpus;
	/*
	 * The configuring caller's credentials: every counter of this
	 * configuration is created with them, also those the reconcile work
	 * opens later for CPUs that come online.
	 */
	const struct cred *cred;
};

struct hwsig_state {
	struct mutex lock;		/* see "Locking" above */
	raw_spinlock_t hp_lock;		/* see "Locking" above */
	struct hwsig_config *active;	/* NULL until the first CONFIGURE */
	bool running;
	u64 generation;
	struct cpumask live;		/* between our online and offline callbacks */
	struct page *control_page;	/* lives as long as the module */
	struct hwsig_control_page *ctl;
	struct page *hole_page;		/* zero: maps where a CPU id has no ring */
	u64 ring_sets;			/* ids handed out; hwsig.lock */
	atomic_long_t ring_bytes;	/* of every ring set alive */
	unsigned long ring_bytes_max;	/* cap on ring_bytes; fixed at load */
	struct device *pmu_dev;		/* a PMU device: finds the PMU bus */
	struct work_struct reconcile;
	struct workqueue_struct *wq;	/* per-CPU, high priority: sampling */
	int hp_state;
};

extern struct hwsig_state hwsig;
DECLARE_PER_CPU(unsigned long, hwsig_hp_epoch);

/* ring.c */
struct hwsig_buffers *hwsig_buffers_alloc(u32 ring_records, struct netlink_ext_ack *extack);
size_t hwsig_ring_stride(u32 ring_records);
void hwsig_buffers_get(struct hwsig_buffers *bufs);
void hwsig_buffers_put(struct hwsig_buffers *bufs);
void hwsig_buffers_set_online(struct hwsig_buffers *bufs, unsigned int cpu, bool online);
void hwsig_ring_publish(struct hwsig_buffers *bufs, const struct hwsig_cpu *pc,
			u64 time_ns, u32 flags, u32 generation);
u64 hwsig_mmap_size(const struct hwsig_buffers *bufs);

/* pmu.c */
int hwsig_pmu_init(void);
void hwsig_pmu_exit(void);
int hwsig_pmu_name(u32 type, char *name, size_t len);
int hwsig_pmu_type_check(u32 type, const struct nlattr *attr,
			 struct netlink_ext_ack *extack);
bool hwsig_event_targets(const struct hwsig_event_spec *spec, unsigned int cpu);
bool hwsig_cpu_sampled(const struct hwsig_config *cfg, unsigned int cpu);
int hwsig_pmu_open_cpu(struct hwsig_config *cfg, struct hwsig_cpu *pc,
		       const struct hwsig_config_req *req,
		       struct netlink_ext_ack *extack);
void hwsig_pmu_retry_busy(struct hwsig_config *cfg, struct hwsig_cpu *pc);
void hwsig_pmu_close_cpu(struct hwsig_cpu *pc);
void hwsig_pmu_enable_cpu(struct hwsig_cpu *pc, bool enable);
void hwsig_pmu_read(struct hwsig_cpu *pc);

/* sample.c */
void hwsig_sampler_init(struct hwsig_cpu *pc);
void hwsig_sample_start_cpu(struct hwsig_cpu *pc);
void hwsig_sample_stop_cpu_atomic(struct hwsig_cpu *pc);
void hwsig_sample_stop_cpu(struct hwsig_cpu *pc);
void hwsig_sample_start_all(struct hwsig_config *cfg);
void hwsig_sample_stop_all(struct hwsig_config *cfg);

/* config.c */
int hwsig_configure(const struct hwsig_config_req *req, struct netlink_ext_ack *extack);
int hwsig_start(struct netlink_ext_ack *extack);
void hwsig_stop(void);
void hwsig_config_reconcile(struct hwsig_config *cfg);
void hwsig_config_free(struct hwsig_config *cfg);
void hwsig_cpu_snapshot(unsigned int cpu, bool *live, unsigned long *epoch);
void hwsig_live_snapshot(struct cpumask *mask);

/* chardev.c */
int hwsig_chardev_init(void);
void hwsig_chardev_exit(void);
void hwsig_control_publish_locked(void);

/* netlink.c */
int hwsig_netlink_init(void);
void hwsig_netlink_exit(void);

/* hotplug.c */
int hwsig_hotplug_init(void);
void hwsig_hotplug_exit(void);

#endif /* HWSIG_PRIV_H */
