/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hwsig: the one contract between hwsig.ko, its reader and the tests.
 *
 * Layout of the mmap of /dev/hwsig (all offsets in bytes, page aligned):
 *
 *   0                         struct hwsig_control_page (one page)
 *   ring_offset + cpu*ring_stride
 *                             struct hwsig_ring_header (one page), then
 *                             ring_records * record_size bytes of records
 *
 * for every possible CPU id 0..nr_cpu_ids-1. Everything is read-only to
 * userspace. See Documentation/abi.rst for the ring protocol and its
 * barrier pairs; the short version is at struct hwsig_ring_header.
 *
 * Compatibility: abi_version grows with every change; compat_version is
 * the oldest abi_version whose reader can still read this module's layout
 * (new fields only ever go into reserved space). hwsig_abi_compatible()
 * below is the one check both sides use. Never reuse a command, attribute
 * or flag number: retire it and add a new one.
 */
#ifndef _UAPI_LINUX_HWSIG_H
#define _UAPI_LINUX_HWSIG_H

#include <linux/types.h>

/*
 * 2: control page seqcount and ring_set, ring header stamps, GET_STATUS
 * as a dump (one message per CPU), CONFIGURE flags, ring memory cap.
 * A version 1 reader cannot validate a mapping against its ring set, nor
 * read GET_STATUS on a large host: compat_version is 2.
 */
#define HWSIG_ABI_VERSION		2
#define HWSIG_ABI_COMPAT_VERSION	2

#define HWSIG_DEVICE_NAME		"hwsig"		/* /dev/hwsig */
#define HWSIG_GENL_NAME			"hwsig"
#define HWSIG_GENL_VERSION		1

/* Limits (also reported by HWSIG_CMD_GET_INFO). */
#define HWSIG_MAX_EVENTS		16
#define HWSIG_EVENT_NAME_MAX		64	/* including the NUL */
#define HWSIG_MIN_INTERVAL_NS		1000000ULL	/* 1 ms */
#define HWSIG_MAX_INTERVAL_NS		60000000000ULL	/* 60 s */
#define HWSIG_MIN_RING_RECORDS		8
#define HWSIG_MAX_RING_RECORDS		65536	/* per CPU; power of two */
#define HWSIG_DEFAULT_RING_RECORDS	1024
#define HWSIG_DEFAULT_INTERVAL_NS	100000000ULL	/* 100 ms */

/* hwsig_event's cpu: count on every online CPU (core PMU events). */
#define HWSIG_EVENT_ALL_CPUS		(-1)

/* HWSIG_ATTR_CONFIG_FLAGS (CONFIGURE, u32) */
/*
 * Sample nohz_full and isolated (isolcpus=domain) CPUs too. Without it
 * their timers never start: a host that dedicates CPUs to vCPUs gets no
 * periodic tick from hwsig there, and GET_STATUS reports -ECANCELED for them.
 */
#define HWSIG_CONFIG_F_ISOLATED_CPUS	(1U << 0)
#define HWSIG_CONFIG_F_ALL		HWSIG_CONFIG_F_ISOLATED_CPUS

/*
 * Control page: page 0 of the mapping. Every change is published under a
 * sequence count, in the same critical section that swaps the ring set a
 * new mmap() maps:
 *	seq++ (odd: write in progress); smp_wmb();
 *	write the fields;
 *	smp_wmb(); seq++ (even again)
 * A reader loads seq (acquire), copies the page, issues a read barrier and
 * loads seq again: the copy is consistent iff both loads returned the
 * same even value; otherwise it retries. ring_set names the ring set a
 * mmap() made now would map; every ring header of that set carries the
 * same ring_set and ring_records, so a reader checks its new mapping
 * against the copy and maps again when they differ.
 */
struct hwsig_control_page {
	__u32 abi_version;		/* HWSIG_ABI_VERSION of the module */
	__u32 compat_version;		/* HWSIG_ABI_COMPAT_VERSION of the module */
	__u32 page_size;
	__u32 nr_cpu_ids;		/* rings exist for CPU ids 0..nr_cpu_ids-1 */
	__u64 mmap_size;		/* total bytes the mapping may cover */
	__u64 ring_offset;		/* offset of CPU 0's ring header */
	__u64 ring_stride;		/* bytes between two CPUs' ring headers */
	__u64 data_offset;		/* records start this far after a ring header */
	__u32 ring_records;		/* records per CPU ring; power of two */
	__u32 record_size;		/* sizeof(struct hwsig_record) */
	__u32 nr_events;		/* configured events, <= HWSIG_MAX_EVENTS */
	__u32 running;			/* 1 while sampling */
	__u64 sample_interval_ns;
	__u64 config_generation;	/* bumped by every successful CONFIGURE */
	__u32 clock_id;			/* CLOCK_MONOTONIC: record time_ns clock */
	__u32 __pad0;
	__u64 seq;			/* version 2: odd while being written, see above */
	__u64 ring_set;			/* version 2: id of the current ring set; 0: none */
	__u64 __reserved[51];		/* zero; room to grow */
};

/*
 * Per-CPU ring header: the first page of every CPU's ring.
 *
 * Producer (the CPU's hrtimer, the only writer of this ring):
 *	idx = head; rec = &records[idx & (ring_records - 1)];
 *	WRITE_ONCE(rec->seq, idx + 1);
 *	smp_wmb();			// (A) pairs with reader's smp_rmb (D)
 *	fill the payload;
 *	smp_wmb();			// (B) pairs with reader's load-acquire of seq_end (C)
 *	WRITE_ONCE(rec->seq_end, idx + 1);
 *	smp_store_release(&head, idx + 1); // (E) pairs with reader's load-acquire of head (F)
 *
 * Reader, for each idx in [tail, head) with head = load_acquire(&head) (F):
 *	s_end = load_acquire(&rec->seq_end);	// (C)
 *	copy the payload;
 *	smp_rmb();				// (D)
 *	s = READ_ONCE(rec->seq);
 *	valid iff s == s_end == idx + 1; otherwise the record was overwritten
 *	while it was read (or never written) and counts as lost.
 * Records older than head - ring_records were overwritten: lost, exactly.
 *
 * head lives alone on its cache line; nothing the reader writes is here
 * (the reader's tail is its own memory).
 */
struct hwsig_ring_header {
	__u64 head;			/* records ever written; free-running */
	__u8 __pad_head[56];
	__u32 cpu;			/* set at allocation */
	__u32 online;			/* 1 while this CPU is sampled: start/stop/hotplug */
	__u64 overwritten;		/* by the producer after each record: max(head - ring_records, 0) */
	__u64 ring_set;			/* version 2: the control page's ring_set of this set */
	__u32 ring_records;		/* version 2: records per ring of this set */
	__u32 __pad1;
	__u64 __reserved[4];
};

/* hwsig_record.flags */
#define HWSIG_RECORD_F_FIRST		(1U << 0)	/* first record after START or CPU online */

struct hwsig_record {
	__u64 seq;			/* idx + 1; 0: never written */
	__u64 time_ns;			/* CLOCK_MONOTONIC (ktime_get_ns) */
	__u32 cpu;
	__u32 flags;			/* HWSIG_RECORD_F_* */
	__u32 valid_mask;		/* bit i: values[i] etc. were read */
	__u32 config_generation;	/* low 32 bits of the control page's */
	__u64 values[HWSIG_MAX_EVENTS];
	__u64 time_enabled[HWSIG_MAX_EVENTS];
	__u64 time_running[HWSIG_MAX_EVENTS];
	__u64 __reserved[11];
	__u64 seq_end;			/* == seq once the record is complete */
};

/* ---- generic netlink: family HWSIG_GENL_NAME ---- */

enum hwsig_cmd {
	HWSIG_CMD_UNSPEC,
	HWSIG_CMD_GET_INFO,	/* -> versions, geometry, limits */
	HWSIG_CMD_CONFIGURE,	/* interval, ring size, events: all or nothing */
	HWSIG_CMD_START,
	HWSIG_CMD_STOP,
	HWSIG_CMD_GET_STATUS,	/* -> per event and CPU state, costs, counts; see below */
	__HWSIG_CMD_MAX,
};
#define HWSIG_CMD_MAX (__HWSIG_CMD_MAX - 1)

enum hwsig_attr {
	HWSIG_ATTR_UNSPEC,
	HWSIG_ATTR_PAD,			/* for 64-bit alignment */
	HWSIG_ATTR_ABI_VERSION,		/* u32 */
	HWSIG_ATTR_COMPAT_VERSION,	/* u32 */
	HWSIG_ATTR_NR_CPU_IDS,		/* u32 */
	HWSIG_ATTR_NR_ONLINE_CPUS,	/* u32 */
	HWSIG_ATTR_RING_RECORDS,	/* u32: CONFIGURE (optional) and GET_INFO */
	HWSIG_ATTR_RECORD_SIZE,		/* u32 */
	HWSIG_ATTR_MMAP_SIZE,		/* u64 */
	HWSIG_ATTR_SAMPLE_INTERVAL_NS,	/* u64: CONFIGURE (required) and GET_INFO */
	HWSIG_ATTR_MAX_EVENTS,		/* u32 */
	HWSIG_ATTR_MIN_INTERVAL_NS,	/* u64 */
	HWSIG_ATTR_MAX_INTERVAL_NS,	/* u64 */
	HWSIG_ATTR_MAX_RING_RECORDS,	/* u32 */
	HWSIG_ATTR_EVENTS,		/* nest of HWSIG_ATTR_EVENT */
	HWSIG_ATTR_EVENT,		/* nest of hwsig_event_attr */
	HWSIG_ATTR_RUNNING,		/* u8 */
	HWSIG_ATTR_CONFIG_GENERATION,	/* u64 */
	HWSIG_ATTR_SAMPLE_COST_AVG_NS,	/* u64: counter reads + record write (the work's duration), per CPU per tick */
	HWSIG_ATTR_SAMPLE_COST_MAX_NS,	/* u64 */
	HWSIG_ATTR_RECORDS_WRITTEN,	/* u64: all CPUs */
	HWSIG_ATTR_RECORDS_OVERWRITTEN,	/* u64: all CPUs */
	HWSIG_ATTR_STATUS,		/* nest of HWSIG_ATTR_STATUS_ENTRY */
	HWSIG_ATTR_STATUS_ENTRY,	/* nest of hwsig_status_attr */
	HWSIG_ATTR_SAMPLE_LATENCY_AVG_NS, /* u64: timer fire -> record published, per CPU per tick */
	HWSIG_ATTR_SAMPLE_LATENCY_MAX_NS, /* u64 */
	HWSIG_ATTR_TICKS_OVERRUN,	/* u64: timer periods that passed without the timer firing (hrtimer overruns), all CPUs */
	HWSIG_ATTR_TICKS_SKIPPED,	/* u64: ticks that wrote no record: that CPU's previous sampling work had not run yet */
	HWSIG_ATTR_CONFIG_FLAGS,	/* u32: HWSIG_CONFIG_F_*: CONFIGURE (optional) and GET_INFO */
	HWSIG_ATTR_RING_BYTES_MAX,	/* u64: GET_INFO: cap on all ring sets alive together */
	HWSIG_ATTR_RING_BYTES,		/* u64: GET_INFO: bytes of ring sets alive now */
	HWSIG_ATTR_STATUS_CPU,		/* u32: GET_STATUS dump: the CPU this message's entries are of */
	__HWSIG_ATTR_MAX,
};
#define HWSIG_ATTR_MAX (__HWSIG_ATTR_MAX - 1)

enum hwsig_event_attr {
	HWSIG_EVENT_ATTR_UNSPEC,
	HWSIG_EVENT_ATTR_PAD,
	HWSIG_EVENT_ATTR_NAME,		/* string, < HWSIG_EVENT_NAME_MAX */
	HWSIG_EVENT_ATTR_PMU_TYPE,	/* u32: perf_event_attr.type */
	HWSIG_EVENT_ATTR_CONFIG,	/* u64 */
	HWSIG_EVENT_ATTR_CONFIG1,	/* u64 (optional, 0) */
	HWSIG_EVENT_ATTR_CONFIG2,	/* u64 (optional, 0) */
	HWSIG_EVENT_ATTR_CPU,		/* s32: HWSIG_EVENT_ALL_CPUS or one CPU (uncore) */
	__HWSIG_EVENT_ATTR_MAX,
};
#define HWSIG_EVENT_ATTR_MAX (__HWSIG_EVENT_ATTR_MAX - 1)

/*
 * GET_STATUS. One entry per (event, CPU) the event was meant to count on.
 *
 * As a dump (NLM_F_DUMP; what readers use): the first message holds the
 * summary (RUNNING, CONFIG_GENERATION, SAMPLE_*, TICKS_*, RECORDS_*), and
 * then one message per CPU id with entries holds HWSIG_ATTR_STATUS_CPU,
 * CONFIG_GENERATION and an HWSIG_ATTR_STATUS nest of that CPU's entries,
 * so no message grows with the number of CPUs. Every message carries the
 * configuration's generation; a configuration swapped during the dump
 * sets NLM_F_DUMP_INTR on the next message: the reader starts over.
 * As a plain request (no NLM_F_DUMP) the reply is one message, refused
 * with -EMSGSIZE when the entries do not fit one attribute (a nest's
 * length is 16 bits: about 1000 entries).
 */
enum hwsig_status_attr {
	HWSIG_STATUS_ATTR_UNSPEC,
	HWSIG_STATUS_ATTR_PAD,
	HWSIG_STATUS_ATTR_EVENT_INDEX,	/* u32 */
	HWSIG_STATUS_ATTR_CPU,		/* u32 */
	HWSIG_STATUS_ATTR_ERROR,	/* s32: 0 active, else -errno (-ENOENT, -EBUSY, ...) */
	HWSIG_STATUS_ATTR_TIME_ENABLED,	/* u64 ns, at the last sample */
	HWSIG_STATUS_ATTR_TIME_RUNNING,	/* u64 ns, at the last sample */
	HWSIG_STATUS_ATTR_VALUE,	/* u64, at the last sample */
	__HWSIG_STATUS_ATTR_MAX,
};
#define HWSIG_STATUS_ATTR_MAX (__HWSIG_STATUS_ATTR_MAX - 1)

/* A reader built against HWSIG_ABI_VERSION reads a module that reports
 * (abi, compat) iff the module is not older than what the reader needs
 * (abi >= HWSIG_ABI_COMPAT_VERSION of the reader) and the reader is not
 * older than what the module still supports (HWSIG_ABI_VERSION >= compat).
 */
static inline int hwsig_abi_compatible(__u32 module_abi, __u32 module_compat)
{
	return module_abi >= HWSIG_ABI_COMPAT_VERSION &&
	       HWSIG_ABI_VERSION >= module_compat;
}

#ifdef __cplusplus
#define HWSIG_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define HWSIG_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
HWSIG_STATIC_ASSERT(sizeof(struct hwsig_control_page) == 512,
		    "control page layout is ABI");
HWSIG_STATIC_ASSERT(sizeof(struct hwsig_ring_header) == 128,
		    "ring header layout is ABI");
HWSIG_STATIC_ASSERT(sizeof(struct hwsig_record) == 512,
		    "record layout is ABI");
HWSIG_STATIC_ASSERT((HWSIG_MAX_RING_RECORDS & (HWSIG_MAX_RING_RECORDS - 1)) == 0,
		    "ring sizes are powers of two");

#endif /* _UAPI_LINUX_HWSIG_H */
