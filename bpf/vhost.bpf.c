// SPDX-License-Identifier: GPL-2.0
/* vhost-net virtqueue depth and RX ring stalls, aggregated in-kernel.
 * Documentation/vhost.rst defines every count; in short:
 *
 *   depth  sampled at the entry of handle_tx / handle_rx (the vhost worker
 *          is about to handle that queue): (u16)(avail->idx, read from the
 *          ring in the owner's memory, - vq->last_avail_idx); not sampled
 *          (counted in viommu) for a device behind a vIOMMU, whose ring
 *          address is a guest I/O address;
 *   stall  a handle_rx invocation during which vhost_enable_notify() was
 *          called on that invocation's RX queue. handle_rx calls it there
 *          exactly when get_rx_bufs() found no (or not enough) receive
 *          buffers for a packet it had peeked on the tap, i.e. when
 *          vhost_get_vq_desc() returned vq->num -- unless busy polling
 *          (busyloop_timeout, off by default) was interrupted by pending
 *          work, when it requeues itself instead. Counted at most once per
 *          invocation. TX has no stalls by this definition.
 *
 * The stall hook runs once per stalled handle_rx (and once per handle_tx
 * that empties its ring), never per descriptor. Two program sets, one
 * autoloaded (userspace tries them in this order):
 *   fentry  fentry handle_tx/handle_rx/vhost_enable_notify, fexit handle_rx;
 *   kprobe  kprobes on the same three, a kretprobe on handle_rx (kernels
 *           without fentry).
 *
 * The vhost types live in the vhost and vhost_net modules, not in vmlinux:
 * they are declared here with only the fields used, and libbpf relocates
 * them (CO-RE) against the modules' BTF (/sys/kernel/btf/vhost{,_net}). The
 * ___hwsig suffix keeps them apart from a vmlinux.h that has them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hwsig_vhost.h"

char LICENSE[] SEC("license") = "GPL";

struct mm_struct___hwsig {
	struct task_struct *owner; /* CONFIG_MEMCG only */
} __attribute__((preserve_access_index));

struct vhost_dev___hwsig {
	struct mm_struct___hwsig *mm;
} __attribute__((preserve_access_index));

struct vhost_virtqueue___hwsig {
	struct vring_avail *avail; /* __user: the owner's memory, or an IOVA */
	__u16 last_avail_idx;
	void *iotlb;               /* set: the ring addresses are IOVAs */
} __attribute__((preserve_access_index));

struct vhost_net_virtqueue___hwsig {
	struct vhost_virtqueue___hwsig vq;
} __attribute__((preserve_access_index));

struct vhost_net___hwsig {
	struct vhost_dev___hwsig dev;
	struct vhost_net_virtqueue___hwsig vqs[2]; /* [0] RX, [1] TX */
} __attribute__((preserve_access_index));

/* Offset of idx in struct vring_avail { __virtio16 flags, idx; ... }: the
 * virtio ABI, the same on every kernel. */
#define VRING_AVAIL_IDX_OFFSET 2

/* What one worker thread is doing in handle_rx, for the stall programs. */
struct worker_state {
	struct hwsig_vhost_key rx_key; /* the RX queue handle_rx is handling */
	__u8 stalled;                  /* this invocation's stall is counted */
	__u8 pad[3];
	__u64 rx_vq;                   /* its vhost_virtqueue; 0: not in handle_rx */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HWSIG_VHOST_MAX_QUEUES);
	__type(key, struct hwsig_vhost_key);
	__type(value, struct hwsig_vhost_stats);
} queues SEC(".maps");

/* Per worker thread, in task-local storage: created by its first handle_rx,
 * freed with the thread (no stale entries when workers come and go, no pid
 * reuse, nothing to bound or clean up). Task storage dates from 5.11, as
 * does the module BTF the programs need. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct worker_state);
} workers SEC(".maps");

/* Invocations not counted because `queues` was full. */
__u64 dropped = 0;

static const struct hwsig_vhost_stats zero_stats;

static __always_inline struct hwsig_vhost_stats *stats_of(const struct hwsig_vhost_key *key)
{
	struct hwsig_vhost_stats *s = bpf_map_lookup_elem(&queues, key);
	struct hwsig_vhost_key sibling;

	if (s)
		return s;
	/* First sight of this queue. Only its worker inserts it: no race. Its
	 * device's other queue (RX for TX, TX for RX) is inserted with it, so
	 * that both queues of a device exist from the first invocation of
	 * either: userspace sees them, and their first interval, together. */
	bpf_map_update_elem(&queues, key, &zero_stats, BPF_NOEXIST);
	sibling = *key;
	sibling.queue ^= 1;
	sibling.dir ^= 1;
	bpf_map_update_elem(&queues, &sibling, &zero_stats, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&queues, key);
	if (!s)
		__sync_fetch_and_add(&dropped, 1);
	return s;
}

static __always_inline void make_key(struct hwsig_vhost_key *key, __u32 owner, __u32 queue)
{
	key->owner_tgid = owner;
	key->worker_tid = (__u32)bpf_get_current_pid_tgid();
	key->queue = (__u16)queue;
	key->dir = queue == 0 ? HWSIG_VHOST_RX : HWSIG_VHOST_TX;
	key->pad = 0;
}

/* One handler invocation: count it, sample the depth. avail is the ring's
 * struct vring_avail: a user address, unless iotlb is set. vhost reads its
 * rings through vq->iotlb whenever that is set (vhost_get_user(): the
 * device acked VIRTIO_F_ACCESS_PLATFORM and sits behind a vIOMMU): then
 * vq->avail is a guest I/O address, which read as a user address gives
 * another mapping's bytes or nothing. Such a device is counted, not
 * sampled. */
static __always_inline void sample(const struct hwsig_vhost_key *key, const void *avail,
				   __u16 last_avail, bool iotlb)
{
	struct hwsig_vhost_stats *s = stats_of(key);
	__u16 idx;
	__u32 slot;

	if (!s)
		return;
	s->handled++;
	if (iotlb) {
		s->viommu++;
		return;
	}
	if (!avail || bpf_probe_read_user(&idx, sizeof(idx),
					(const char *)avail + VRING_AVAIL_IDX_OFFSET)) {
		s->read_errors++;
		return;
	}
	slot = hwsig_vhost_slot((__u16)(idx - last_avail));
	if (slot >= HWSIG_VHOST_SLOTS) /* for the verifier */
		slot = HWSIG_VHOST_SLOTS - 1;
	s->depth[slot]++;
	s->samples++;
}

static __always_inline void count_stall(struct worker_state *w)
{
	struct hwsig_vhost_stats *s;

	if (w->stalled)
		return;
	w->stalled = 1;
	s = stats_of(&w->rx_key);
	if (s)
		s->stalls++;
}

/* The current worker thread's state (flags: BPF_LOCAL_STORAGE_GET_F_CREATE
 * to create it). */
static __always_inline struct worker_state *this_worker(__u64 flags)
{
	return bpf_task_storage_get(&workers, bpf_get_current_task_btf(), 0, flags);
}

/* handle_rx starts on queue rx_vq (key): remember it for the stall programs. */
static __always_inline void rx_begins(const struct hwsig_vhost_key *key, __u64 rx_vq)
{
	struct worker_state *w = this_worker(BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!w)
		return;
	w->rx_key = *key;
	w->rx_vq = rx_vq;
	w->stalled = 0;
}

static __always_inline void rx_ends(void)
{
	struct worker_state *w = this_worker(0);

	if (w)
		w->rx_vq = 0;
}

/* vhost_enable_notify(dev, vq) was called: a stall if this worker is in
 * handle_rx and vq is the RX queue it handles. First, by address alone
 * (nothing is read), whether vq is the RX queue of the vhost_net device
 * that dev would belong to: this sends the TX calls (one per handle_tx that
 * empties its ring) away before the task-storage lookup. For another vhost
 * driver's dev the address means nothing and the storage test rejects it. */
static __always_inline void enable_notify(struct vhost_dev___hwsig *dev, __u64 vq)
{
	struct vhost_net___hwsig *net =
		(void *)((char *)dev - bpf_core_field_offset(struct vhost_net___hwsig, dev));
	struct worker_state *w;

	if (vq != (__u64)&net->vqs[HWSIG_VHOST_RX].vq)
		return;
	w = this_worker(0);
	if (w && w->rx_vq && w->rx_vq == vq)
		count_stall(w);
}

/* ---- fentry / fexit: BTF pointers, direct loads ---- */

static __always_inline __u32 owner_btf(struct vhost_net___hwsig *net)
{
	struct mm_struct___hwsig *mm = net->dev.mm;
	struct task_struct *owner;

	if (!bpf_core_field_exists(mm->owner) || !mm)
		return 0;
	owner = mm->owner;
	return owner ? owner->tgid : 0;
}

/* vq is &net->vqs[<constant>].vq, taken at the call site: a CO-RE array
 * access needs a constant index to be relocated with the kernel's element
 * size (a variable index would be scaled by this file's partial struct). */
static __always_inline void handler_btf(struct vhost_net___hwsig *net,
					struct vhost_virtqueue___hwsig *vq, __u32 queue, bool rx)
{
	struct hwsig_vhost_key key;

	make_key(&key, owner_btf(net), queue);
	sample(&key, vq->avail, vq->last_avail_idx,
	       bpf_core_field_exists(vq->iotlb) && vq->iotlb);
	if (rx)
		rx_begins(&key, (__u64)vq);
}

SEC("fentry/handle_tx")
int BPF_PROG(fe_handle_tx, struct vhost_net___hwsig *net)
{
	handler_btf(net, &net->vqs[HWSIG_VHOST_TX].vq, HWSIG_VHOST_TX, false);
	return 0;
}

SEC("fentry/handle_rx")
int BPF_PROG(fe_handle_rx, struct vhost_net___hwsig *net)
{
	handler_btf(net, &net->vqs[HWSIG_VHOST_RX].vq, HWSIG_VHOST_RX, true);
	return 0;
}

SEC("fexit/handle_rx")
int BPF_PROG(fx_handle_rx, struct vhost_net___hwsig *net)
{
	rx_ends();
	return 0;
}

SEC("fentry/vhost_enable_notify")
int BPF_PROG(fe_enable_notify, struct vhost_dev___hwsig *dev, struct vhost_virtqueue___hwsig *vq)
{
	enable_notify(dev, (__u64)vq);
	return 0;
}

/* ---- kprobe / kretprobe: untyped pointers, BPF_CORE_READ ---- */

static __always_inline void handler_kprobe(struct vhost_net___hwsig *net,
					   struct vhost_virtqueue___hwsig *vq, __u32 queue, bool rx)
{
	struct mm_struct___hwsig *mm = BPF_CORE_READ(net, dev.mm);
	struct hwsig_vhost_key key;
	__u32 owner = 0;

	if (bpf_core_field_exists(mm->owner) && mm)
		owner = BPF_CORE_READ(mm, owner, tgid);
	make_key(&key, owner, queue);
	sample(&key, BPF_CORE_READ(vq, avail), BPF_CORE_READ(vq, last_avail_idx),
	       bpf_core_field_exists(vq->iotlb) && BPF_CORE_READ(vq, iotlb));
	if (rx)
		rx_begins(&key, (__u64)vq);
}

SEC("kprobe/handle_tx")
int BPF_KPROBE(kp_handle_tx, struct vhost_net___hwsig *net)
{
	handler_kprobe(net, &net->vqs[HWSIG_VHOST_TX].vq, HWSIG_VHOST_TX, false);
	return 0;
}

SEC("kprobe/handle_rx")
int BPF_KPROBE(kp_handle_rx, struct vhost_net___hwsig *net)
{
	handler_kprobe(net, &net->vqs[HWSIG_VHOST_RX].vq, HWSIG_VHOST_RX, true);
	return 0;
}

SEC("kretprobe/handle_rx")
int BPF_KRETPROBE(krp_handle_rx)
{
	rx_ends();
	return 0;
}

/* An entry kprobe only: the stall is the call itself, whatever it returns. */
SEC("kprobe/vhost_enable_notify")
int BPF_KPROBE(kp_enable_notify, struct vhost_dev___hwsig *dev, struct vhost_virtqueue___hwsig *vq)
{
	enable_notify(dev, (__u64)vq);
	return 0;
}
