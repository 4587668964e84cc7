/* Shared between bpf/block.bpf.c and bpf/block.cpp; include-free
 * (see hwsig_sched.h). */
#ifndef HWSIG_BPF_BLOCK_H
#define HWSIG_BPF_BLOCK_H

/* log2 microseconds for latency and queue time (slot 0 = 0..1 us). */
#define HWSIG_BLOCK_TIME_SLOTS 27
/* log2 KiB for request sizes (slot 0 = 0..1 KiB, 4 KiB -> slot 2). */
#define HWSIG_BLOCK_SIZE_SLOTS 20
/* log2 sectors (512 B) of the seek distance: slot 0 = gap 0 or 1 sector
 * (sequential), slot k = [2^k, 2^(k+1)) sectors. 2^48 sectors = 128 PiB. */
#define HWSIG_BLOCK_SEEK_SLOTS 48
/* Devices tracked at once. */
#define HWSIG_BLOCK_MAX_DEVS 256

/* Per device (key: dev_t as the kernel packs it, major << 20 | minor), in a
 * PERCPU_HASH: each CPU counts its own completions without contention. */
struct hwsig_block_stats {
	__u64 reads;       /* completed read requests */
	__u64 writes;      /* completed write requests */
	__u64 read_bytes;  /* bytes completed by reads */
	__u64 write_bytes; /* bytes completed by writes */
	__u64 latency[HWSIG_BLOCK_TIME_SLOTS]; /* issue -> complete, log2 us */
	__u64 queue[HWSIG_BLOCK_TIME_SLOTS];   /* insert -> issue, log2 us */
	__u64 size[HWSIG_BLOCK_SIZE_SLOTS];    /* issued request size, log2 KiB */
	__u64 seek[HWSIG_BLOCK_SEEK_SLOTS];    /* log2 sectors from the previous end */
};

/* Kernel dev_t packing (MINORBITS = 20), unlike userspace's makedev(). */
#define HWSIG_KDEV_MAJOR(dev) ((unsigned int)((dev) >> 20))
#define HWSIG_KDEV_MINOR(dev) ((unsigned int)((dev) & ((1U << 20) - 1)))

#endif
