// SPDX-License-Identifier: GPL-2.0
/* Block-layer request statistics per disk, aggregated in-kernel: completed
 * reads/writes and bytes, issue->complete latency, allocation->issue queue
 * time, request size and seek distance, each in log2 slots.
 *
 * One program per request: everything is taken at block_rq_complete, with
 * two array lookups (the disk's slot and its per-CPU statistics). The
 * block layer already stamps each request: start_time_ns when it is
 * allocated (when the queue keeps I/O statistics or has an I/O scheduler),
 * io_start_time_ns and stats_sectors when it is issued to the driver (when
 * the queue keeps blk-stat statistics, QUEUE_FLAG_STATS: writeback
 * throttling, BFQ, kyber, iocost and blk-throttle turn it on, and wbt is on
 * for every blk-mq disk of a default Debian kernel). Those are read at
 * completion through CO-RE. A request that completes without an issue stamp
 * sets needs_issue_stamps; userspace then attaches the fallback program on
 * block_rq_issue, which stamps requests in the in_flight map. Until then
 * such requests are counted but not timed (untimed).
 *
 * tp_btf programs are preferred; the raw_tp set is the fallback userspace
 * autoloads when tp_btf is not available. Both share every line of
 * accounting (Documentation/bpf.rst). */
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

/* Before 5.11 block_rq_issue took (q, rq); userspace reads the tracepoint's
 * BTF prototype and sets this before load. */
const volatile bool rq_is_second_arg = false;
/* Time slots in log2 milliseconds instead of microseconds (hwsigctl hist -m). */
const volatile bool in_ms = false;
/* Tests: ignore the kernel's issue stamps, time every request through the
 * fallback (in_flight), as on a queue without QUEUE_FLAG_STATS. */
const volatile bool ignore_issue_stamps = false;

/* Set here when a request completed without an issue stamp while the
 * fallback was off; userspace attaches the fallback and sets fallback_on. */
bool needs_issue_stamps = false;
bool fallback_on = false;

/* slots - 1 (a power of two; userspace sets it with the table's size). */
const volatile __u32 slot_mask = HWSIG_BLOCK_MAX_DEVS - 1;

/* The fallback's issue stamp, keyed by struct request *. Requests are
 * recycled from fixed pools, so the same keys recur: an entry is reset in
 * place at completion rather than deleted (no hash insert or delete per
 * I/O in steady state); LRU bounds the map when disks come and go. */
struct rq_issue {
	__u64 issue_ns; /* 0: consumed or never issued */
	__u64 sectors;  /* size at issue */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rq_issue);
} in_flight SEC(".maps");

/* The table of disks: a disk's slot is found from its tag by open
 * addressing over a plain ARRAY, whose lookups the verifier inlines, and
 * its statistics are the same index of a PERCPU_ARRAY: two array lookups
 * per request where a hash map keyed by disk costs a hashed lookup (about
 * 100 ns on the test host). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HWSIG_BLOCK_MAX_DEVS);
	__uint(map_flags, BPF_F_MMAPABLE); /* read by userspace through a mapping */
	__type(key, __u32);
	__type(value, struct hwsig_block_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HWSIG_BLOCK_MAX_DEVS);
	__type(key, __u32);
	__type(value, struct hwsig_block_stats);
} dev_stats SEC(".maps");

/* dev -> requests completed while no slot was free (not counted there). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_BLOCK_MAX_UNTRACKED);
	__type(key, __u32);
	__type(value, __u64);
} untracked SEC(".maps");

/* Untracked requests of disks that did not fit in `untracked` either. */
__u64 untracked_other = 0;

/* The kernel's stamps (struct request); CO-RE flavours, so that a kernel
 * without one of them still loads (bpf_core_field_exists). */
struct request___stamps {
	u64 start_time_ns;
	u64 io_start_time_ns;
	unsigned short stats_sectors;
} __attribute__((preserve_access_index));

struct gendisk___seq {
	u64 diskseq; /* 5.15+ */
} __attribute__((preserve_access_index));

/* What the accounting needs from a request at completion. tp_btf programs
 * fill it with direct loads through their BTF pointer; raw_tp programs,
 * whose pointer is untyped, through bpf_probe_read_kernel (BPF_CORE_READ). */
struct rq_info {
	__u64 sector;   /* start of what is left to complete */
	__u64 alloc_ns; /* start_time_ns; 0: not stamped */
	__u64 issue_ns; /* io_start_time_ns; 0: not stamped */
	__u64 seq;      /* the disk's diskseq */
	__u32 dev;      /* major << 20 | first_minor of the disk; 0: unknown */
	__u32 left;     /* bytes left before this completion (__data_len) */
	__u32 sectors;  /* stats_sectors: the size at issue, with issue_ns */
	__u32 op;
};

static __always_inline __u32 kdev(int major, int first_minor)
{
	return ((__u32)major << 20) | (__u32)first_minor;
}

static __always_inline __u32 rq_op_btf(struct request *rq)
{
	return rq->cmd_flags & REQ_OP_MASK;
}

static __always_inline __u32 rq_op_raw(struct request *rq)
{
	return BPF_CORE_READ(rq, cmd_flags) & REQ_OP_MASK;
}

static __always_inline struct rq_info rq_info_btf(struct request *rq)
{
	struct request___stamps *st = (void *)rq;
	struct gendisk *disk = hwsig_request_disk_btf(rq);
	struct rq_info i = {
		.sector = rq->__sector,
		.left = rq->__data_len,
	};

	if (bpf_core_field_exists(st->start_time_ns))
		i.alloc_ns = st->start_time_ns;
	if (!ignore_issue_stamps && bpf_core_field_exists(st->io_start_time_ns)) {
		i.issue_ns = st->io_start_time_ns;
		if (bpf_core_field_exists(st->stats_sectors))
			i.sectors = st->stats_sectors;
	}
	if (disk) {
		struct gendisk___seq *g = (void *)disk;

		i.dev = kdev(disk->major, disk->first_minor);
		if (bpf_core_field_exists(g->diskseq))
			i.seq = g->diskseq;
	}
	return i;
}

static __always_inline struct rq_info rq_info_raw(struct request *rq)
{
	struct request___stamps *st = (void *)rq;
	struct gendisk *disk = hwsig_request_disk(rq);
	struct rq_info i = {
		.sector = BPF_CORE_READ(rq, __sector),
		.left = BPF_CORE_READ(rq, __data_len),
	};

	if (bpf_core_field_exists(st->start_time_ns))
		i.alloc_ns = BPF_CORE_READ(st, start_time_ns);
	if (!ignore_issue_stamps && bpf_core_field_exists(st->io_start_time_ns)) {
		i.issue_ns = BPF_CORE_READ(st, io_start_time_ns);
		if (bpf_core_field_exists(st->stats_sectors))
			i.sectors = BPF_CORE_READ(st, stats_sectors);
	}
	if (disk) {
		struct gendisk___seq *g = (void *)disk;

		i.dev = kdev(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
		if (bpf_core_field_exists(g->diskseq))
			i.seq = BPF_CORE_READ(g, diskseq);
	}
	return i;
}

/* The slot of a disk generation: the first of HWSIG_BLOCK_PROBES slots from
 * the one its tag hashes to that holds the tag, else the first free one,
 * claimed (compare-and-swap: two CPUs may claim two slots for one new disk;
 * userspace adds them up). No slot: the request is counted as untracked.
 * The search does not stop at a free slot, so a slot that userspace frees
 * breaks no other disk's search. */
static __always_inline __u32 slot_of(__u64 tag, struct hwsig_block_slot **out)
{
	__u32 h = hwsig_block_hash(tag), i, idx, free = ~0u;
	struct hwsig_block_slot *slot;
	__u64 one = 1, *n;

	for (i = 0; i < HWSIG_BLOCK_PROBES && i <= slot_mask; i++) {
		idx = (h + i) & slot_mask;
		slot = bpf_map_lookup_elem(&slots, &idx);
		if (!slot)
			break;
		if (slot->tag == tag) {
			*out = slot;
			return idx;
		}
		if (!slot->tag && free == ~0u)
			free = idx;
	}
	for (i = 0; i < HWSIG_BLOCK_PROBES && i <= slot_mask; i++) {
		idx = (free + i) & slot_mask;
		if (free == ~0u)
			break;
		slot = bpf_map_lookup_elem(&slots, &idx);
		if (!slot)
			break;
		if (!slot->tag && __sync_val_compare_and_swap(&slot->tag, 0, tag) == 0) {
			__builtin_memset(slot->heads, 0, sizeof(slot->heads));
			*out = slot;
			return idx;
		}
		if (slot->tag == tag) { /* claimed meanwhile by another CPU */
			*out = slot;
			return idx;
		}
	}
	__u32 dev = HWSIG_BLOCK_TAG_DEV(tag);

	n = bpf_map_lookup_elem(&untracked, &dev);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&untracked, &dev, &one, BPF_NOEXIST))
		__sync_fetch_and_add(&untracked_other, 1);
	return ~0u;
}

/* The fallback: an issue stamp for requests the kernel does not stamp. */
static __always_inline int on_issue(struct request *rq, __u32 op, __u32 bytes)
{
	__u64 key = (__u64)rq;
	struct rq_issue v = { .issue_ns = bpf_ktime_get_ns(), .sectors = bytes >> 9 };
	struct rq_issue *t;

	if (op > REQ_OP_WRITE)
		return 0;
	t = bpf_map_lookup_elem(&in_flight, &key);
	if (t)
		*t = v;
	else
		bpf_map_update_elem(&in_flight, &key, &v, BPF_ANY);
	return 0;
}

/* The seek distance of a request from [start, end): its gap to the nearest
 * stream head. A request that continues a stream (gap 0 or 1 sector)
 * moves that head on; one that seeks starts a stream in an unused head,
 * or, all being used, moves the nearest. So up to HWSIG_BLOCK_HEADS
 * interleaved sequential streams each read as sequential, and a random
 * request lands near a head of the random I/O rather than taking a
 * stream's head away (most of the time). Concurrent completions on
 * other CPUs may race on a head: at worst one gap is measured from a
 * stale end, as with one head. */
static __always_inline void count_seek(struct hwsig_block_slot *slot, struct hwsig_block_stats *s,
				       __u64 start, __u64 end)
{
	__u64 head, gap, best_gap = ~0ULL;
	int h, nearest = -1, unused = -1;

	for (h = 0; h < HWSIG_BLOCK_HEADS; h++) {
		head = slot->heads[h];
		if (!head) {
			if (unused < 0)
				unused = h;
			continue;
		}
		gap = start >= head ? start - head : head - start;
		if (gap < best_gap) {
			best_gap = gap;
			nearest = h;
		}
	}
	if (nearest < 0) { /* the disk's first request: nothing to measure from */
		slot->heads[0] = end;
		return;
	}
	s->seek[hwsig_slot(best_gap, HWSIG_BLOCK_SEEK_SLOTS)]++;
	if (best_gap > 1 && unused >= 0)
		slot->heads[unused] = end;
	else
		slot->heads[nearest] = end;
}

/* nr_bytes: what this completion completes; a request completes in parts
 * when a driver ends it piecewise (blk_update_request with part of its
 * bytes): every part's bytes are counted, the request itself (count,
 * latency, queue time, size, seek) once, with its last part. */
static __always_inline int on_complete(struct request *rq, unsigned int nr_bytes, bool btf)
{
	__u32 op = btf ? rq_op_btf(rq) : rq_op_raw(rq);
	struct hwsig_block_slot *slot = NULL;
	struct hwsig_block_stats *s;
	struct rq_info info;
	__u64 now, sectors, end;
	__u32 idx;

	/* Flushes, discards, write-zeroes, zone and driver-private requests
	 * are in no statistic: IOPS, bytes and every histogram count the same
	 * read and write requests. */
	if (op > REQ_OP_WRITE)
		return 0;
	info = btf ? rq_info_btf(rq) : rq_info_raw(rq);
	/* Nothing left to complete: a write that only asked for a cache
	 * flush (REQ_PREFLUSH without data; the flush request did the work
	 * and the write itself was never issued), or the second end of a
	 * data write that went through the flush machinery (its data part
	 * completed, and was counted, before the post-flush). */
	if (!info.left || !info.dev)
		return 0;
	idx = slot_of(HWSIG_BLOCK_TAG(info.dev, info.seq), &slot);
	s = bpf_map_lookup_elem(&dev_stats, &idx);
	if (!s)
		return 0;
	if (op == REQ_OP_READ)
		s->read_bytes += nr_bytes;
	else
		s->write_bytes += nr_bytes;
	if (nr_bytes < info.left) /* a part: the request goes on */
		return 0;
	if (op == REQ_OP_READ)
		s->reads++;
	else
		s->writes++;

	sectors = info.sectors;
	if (!info.issue_ns) {
		if (fallback_on) {
			__u64 rqkey = (__u64)rq;
			struct rq_issue *t = bpf_map_lookup_elem(&in_flight, &rqkey);

			if (t && t->issue_ns) { /* else issued before the fallback came */
				info.issue_ns = t->issue_ns;
				sectors = t->sectors;
				t->issue_ns = 0;
			}
		} else if (!needs_issue_stamps) {
			needs_issue_stamps = true;
		}
	}
	now = bpf_ktime_get_ns();
	if (info.issue_ns && now >= info.issue_ns)
		s->latency[hwsig_time_slot(now - info.issue_ns, in_ms, HWSIG_BLOCK_TIME_SLOTS)]++;
	else
		s->untimed++;
	if (info.issue_ns && info.alloc_ns && info.issue_ns >= info.alloc_ns)
		s->queue[hwsig_time_slot(info.issue_ns - info.alloc_ns, in_ms, HWSIG_BLOCK_TIME_SLOTS)]++;
	else
		s->unqueued++;

	/* Not stamped at issue: this last part is the whole request unless it
	 * completed in parts. */
	if (!sectors)
		sectors = info.left >> 9;
	if (!sectors) /* no data: no size, no position */
		return 0;
	s->size[hwsig_slot(sectors >> 1, HWSIG_BLOCK_SIZE_SLOTS)]++;

	/* The request's end is the end of what is left; its start, its size
	 * before that (earlier parts moved __sector on). */
	end = info.sector + (info.left >> 9);
	if (slot)
		count_seek(slot, s, end - sectors, end);
	return 0;
}

static __always_inline struct request *rq_arg(unsigned long long *ctx)
{
	return (struct request *)(rq_is_second_arg ? ctx[1] : ctx[0]);
}

SEC("tp_btf/block_rq_issue")
int btf_block_rq_issue(unsigned long long *ctx)
{
	struct request *rq = rq_arg(ctx);

	return on_issue(rq, rq_op_btf(rq), rq->__data_len);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(btf_block_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq, nr_bytes, true);
}

SEC("raw_tp/block_rq_issue")
int raw_block_rq_issue(unsigned long long *ctx)
{
	struct request *rq = rq_arg(ctx);

	return on_issue(rq, rq_op_raw(rq), BPF_CORE_READ(rq, __data_len));
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(raw_block_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq, nr_bytes, false);
}
