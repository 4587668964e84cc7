// SPDX-License-Identifier: GPL-2.0
/* Block-layer request statistics per device, aggregated in-kernel:
 * completed reads/writes and bytes, issue->complete latency, insert->issue
 * queue time, request size and seek distance, each in log2 slots.
 *
 * tp_btf programs are preferred; the raw_tp set is the fallback userspace
 * autoloads when tp_btf is not available. Both read struct request through
 * CO-RE (core_fixes.bpf.h) and share every line of accounting. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hwsig_block.h"
#include "bits.bpf.h"
#include "core_fixes.bpf.h"

#define REQ_OP_BITS 8
#define REQ_OP_MASK ((1 << REQ_OP_BITS) - 1)
#define REQ_OP_READ 0
#define REQ_OP_WRITE 1

char LICENSE[] SEC("license") = "GPL";

/* Before 5.11 block_rq_insert/issue took (q, rq); userspace reads the
 * tracepoint's BTF prototype and sets this before load. */
const volatile bool rq_is_second_arg = false;
/* Time slots in log2 milliseconds instead of microseconds (hwsigctl hist -m). */
const volatile bool in_ms = false;

/* Source of zeroes for a device's first update (too big for the stack). */
const struct hwsig_block_stats zero_stats = {};

struct rq_times {
	__u64 insert_ns; /* 0: never inserted (issued directly) */
	__u64 issue_ns;  /* 0: not issued yet */
};

/* Keyed by struct request *. Requests are recycled from fixed pools (one
 * per tag set), so the same keys come back over and over: entries are reset
 * in place at completion rather than deleted, and in steady state no I/O
 * pays for a hash insert or delete (about 250 ns each on the test host),
 * only for lookups. LRU bounds the map when many devices come and go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rq_times);
} in_flight SEC(".maps");

/* dev -> end sector of the last issued request, for the seek distance. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_BLOCK_MAX_DEVS);
	__type(key, __u32);
	__type(value, __u64);
} last_end SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, HWSIG_BLOCK_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct hwsig_block_stats);
} dev_stats SEC(".maps");

/* What the accounting needs from a request. tp_btf programs fill it with
 * direct loads through their BTF pointer; raw_tp programs, whose pointer is
 * untyped, through bpf_probe_read_kernel (BPF_CORE_READ). */
struct rq_info {
	__u64 sector;
	__u32 dev; /* major << 20 | first_minor of the disk; 0: unknown */
	__u32 bytes;
	__u32 op;
};

static __always_inline __u32 kdev(int major, int first_minor)
{
	return ((__u32)major << 20) | (__u32)first_minor;
}

static __always_inline struct rq_info rq_info_btf(struct request *rq)
{
	struct gendisk *disk = hwsig_request_disk_btf(rq);
	struct rq_info i = {
		.sector = rq->__sector,
		.bytes = rq->__data_len,
		.op = rq->cmd_flags & REQ_OP_MASK,
	};

	if (disk)
		i.dev = kdev(disk->major, disk->first_minor);
	return i;
}

static __always_inline struct rq_info rq_info_raw(struct request *rq)
{
	struct gendisk *disk = hwsig_request_disk(rq);
	struct rq_info i = {
		.sector = BPF_CORE_READ(rq, __sector),
		.bytes = BPF_CORE_READ(rq, __data_len),
		.op = BPF_CORE_READ(rq, cmd_flags) & REQ_OP_MASK,
	};

	if (disk)
		i.dev = kdev(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
	return i;
}

static __always_inline struct hwsig_block_stats *stats_of(__u32 dev)
{
	struct hwsig_block_stats *s = bpf_map_lookup_elem(&dev_stats, &dev);

	if (s)
		return s;
	bpf_map_update_elem(&dev_stats, &dev, &zero_stats, BPF_NOEXIST);
	return bpf_map_lookup_elem(&dev_stats, &dev);
}

static __always_inline int on_insert(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct rq_times *t = bpf_map_lookup_elem(&in_flight, &key);
	__u64 now = bpf_ktime_get_ns();

	if (t) {
		t->insert_ns = now;
		t->issue_ns = 0;
	} else {
		struct rq_times fresh = { .insert_ns = now };

		bpf_map_update_elem(&in_flight, &key, &fresh, BPF_ANY);
	}
	return 0;
}

static __always_inline int on_issue(struct request *rq, struct rq_info info)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	__u32 dev = info.dev;
	__u64 sector = info.sector;
	__u32 bytes = info.bytes;
	struct hwsig_block_stats *s;
	struct rq_times *t;

	if (!dev)
		return 0;
	s = stats_of(dev);
	if (!s)
		return 0;
	t = bpf_map_lookup_elem(&in_flight, &key);
	if (t) {
		if (t->insert_ns && now >= t->insert_ns)
			s->queue[hwsig_time_slot(now - t->insert_ns, in_ms, HWSIG_BLOCK_TIME_SLOTS)]++;
		t->issue_ns = now;
	} else {
		struct rq_times fresh = { .issue_ns = now };

		bpf_map_update_elem(&in_flight, &key, &fresh, BPF_ANY);
	}
	if (!bytes) /* flushes and the like: no data, no position */
		return 0;
	s->size[hwsig_slot(bytes >> 10, HWSIG_BLOCK_SIZE_SLOTS)]++;

	__u64 end = sector + (bytes >> 9);
	__u64 *last = bpf_map_lookup_elem(&last_end, &dev);

	if (last) {
		__u64 gap = sector >= *last ? sector - *last : *last - sector;

		s->seek[hwsig_slot(gap, HWSIG_BLOCK_SEEK_SLOTS)]++;
		*last = end;
	} else {
		bpf_map_update_elem(&last_end, &dev, &end, BPF_ANY);
	}
	return 0;
}

/* The request is only read when we saw it issued (btf picks the reader). */
static __always_inline int on_complete(struct request *rq, unsigned int nr_bytes, bool btf)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct hwsig_block_stats *s;
	struct rq_times *t;
	struct rq_info info;

	/* Only requests seen issued are counted: one completion per request,
	 * none for requests issued before we attached. */
	t = bpf_map_lookup_elem(&in_flight, &key);
	if (!t)
		return 0;
	__u64 issued = t->issue_ns;

	/* Done: ready for the request's next life, and a second completion
	 * of the same request (partial completions) is not counted again. */
	t->issue_ns = 0;
	t->insert_ns = 0;
	if (!issued)
		return 0;
	info = btf ? rq_info_btf(rq) : rq_info_raw(rq);
	s = info.dev ? stats_of(info.dev) : NULL;
	if (!s)
		return 0;
	if (now >= issued)
		s->latency[hwsig_time_slot(now - issued, in_ms, HWSIG_BLOCK_TIME_SLOTS)]++;
	if (info.op == REQ_OP_READ) {
		s->reads++;
		s->read_bytes += nr_bytes;
	} else if (info.op == REQ_OP_WRITE) {
		s->writes++;
		s->write_bytes += nr_bytes;
	}
	return 0;
}

static __always_inline struct request *rq_arg(unsigned long long *ctx)
{
	return (struct request *)(rq_is_second_arg ? ctx[1] : ctx[0]);
}

SEC("tp_btf/block_rq_insert")
int btf_block_rq_insert(unsigned long long *ctx)
{
	return on_insert(rq_arg(ctx));
}

SEC("tp_btf/block_rq_issue")
int btf_block_rq_issue(unsigned long long *ctx)
{
	struct request *rq = rq_arg(ctx);

	return on_issue(rq, rq_info_btf(rq));
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(btf_block_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq, nr_bytes, true);
}

SEC("raw_tp/block_rq_insert")
int raw_block_rq_insert(unsigned long long *ctx)
{
	return on_insert(rq_arg(ctx));
}

SEC("raw_tp/block_rq_issue")
int raw_block_rq_issue(unsigned long long *ctx)
{
	struct request *rq = rq_arg(ctx);

	return on_issue(rq, rq_info_raw(rq));
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(raw_block_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq, nr_bytes, false);
}
