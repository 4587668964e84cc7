/* Shared between bpf/vhost.bpf.c and bpf/vhost.cpp. Include-free on purpose
 * (libbpf-tools style): each side defines __u16/__u32/__u64 before including
 * it. Documentation/vhost.rst defines every count. */
#ifndef HWSIG_BPF_VHOST_H
#define HWSIG_BPF_VHOST_H

/* Depth slots (hwsig::Histogram::Layout::LinearLog2): slot d < 64 holds
 * exactly depth d; slot 64+k holds [64 * 2^k, 64 * 2^(k+1)), k = 0..9, the
 * last one [32768, 65536): every 16-bit depth has a slot. */
#define HWSIG_VHOST_EXACT_SLOTS 64
#define HWSIG_VHOST_SLOTS 74

/* Bounds of the maps (Documentation/vhost.rst, "Cost"). */
#define HWSIG_VHOST_MAX_QUEUES 4096 /* virtqueues: 2 per vhost-net device */

enum hwsig_vhost_dir {
	HWSIG_VHOST_RX = 0, /* vhost_net queue 0 (VHOST_NET_VQ_RX) */
	HWSIG_VHOST_TX = 1, /* vhost_net queue 1 (VHOST_NET_VQ_TX) */
};

/* One virtqueue. 12 bytes, no padding holes (a hash key is compared
 * bytewise). */
struct hwsig_vhost_key {
	__u32 owner_tgid; /* dev->mm->owner->tgid; 0 where mm has no owner
			   * (!CONFIG_MEMCG): userspace resolves it */
	__u32 worker_tid; /* the vhost worker thread handling the queue */
	__u16 queue;      /* index of the queue in its device */
	__u8 dir;         /* enum hwsig_vhost_dir */
	__u8 pad;
};

/* Cumulative counts of one virtqueue (nothing is reset while attached).
 * Only the queue's own worker thread writes them, one program at a time:
 * plain increments, no atomics. */
struct hwsig_vhost_stats {
	__u64 depth[HWSIG_VHOST_SLOTS]; /* depth samples, by slot */
	__u64 samples;     /* depth samples taken (= the sum of depth[]) */
	__u64 handled;     /* handle_tx / handle_rx invocations for the queue */
	__u64 stalls;      /* RX: handle_rx invocations with a ring stall */
	__u64 read_errors; /* invocations whose avail index was unreadable */
	__u64 viommu;      /* invocations not sampled: the device translates
			    * its ring addresses through an IOTLB (a vIOMMU,
			    * VIRTIO_F_ACCESS_PLATFORM), so vq->avail is a
			    * guest I/O address, not a user address */
};

/* Slot of a 16-bit depth. */
static inline __u32 hwsig_vhost_slot(__u32 depth)
{
	__u32 slot = HWSIG_VHOST_EXACT_SLOTS;

	if (depth < HWSIG_VHOST_EXACT_SLOTS)
		return depth;
	/* 64..127 -> 64, 128..255 -> 65, ..., 32768..65535 -> 73 */
	if (depth >= 1u << 15)
		return HWSIG_VHOST_SLOTS - 1;
	if (depth >= 1u << 11) {
		slot += 4;
		depth >>= 4;
	}
	if (depth >= 1u << 9) {
		slot += 2;
		depth >>= 2;
	}
	if (depth >= 1u << 8) {
		slot += 1;
		depth >>= 1;
	}
	if (depth >= 1u << 7)
		slot += 1;
	return slot;
}

#endif
