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
/* Streams followed per disk: a request's seek distance is measured from
 * the nearest of this many recent request ends, so that a sequential
 * stream beside random I/O (a log writer beside VM images) reads as
 * sequential rather than as jumps to and from it (Documentation/metrics.rst,
 * io.pattern_entropy). */
#define HWSIG_BLOCK_HEADS 4
/* Disk generations tracked at once: the slots of the table (a power of
 * two). Userspace frees the slots of disks that went away and of older
 * generations, so this bounds the disks with I/O at one time; a disk that
 * finds no free slot is counted in `untracked`, never silently dropped. */
#define HWSIG_BLOCK_MAX_DEVS 256
/* Slots a disk may take, from the one its tag hashes to: all of them, so
 * that the table's stated capacity is real (a search of 16 refused new
 * disks well before 256: bench/RESULTS.md). A disk is
 * found after as many probes as it lies from its hash slot: one or two
 * while the table is sparse; only a disk that finds no slot at all probes
 * every slot on each request. */
#define HWSIG_BLOCK_PROBES HWSIG_BLOCK_MAX_DEVS
/* Disks whose untracked requests are counted one by one. */
#define HWSIG_BLOCK_MAX_UNTRACKED 64

/* One disk generation's tag: its dev_t in the kernel's packing
 * (major << 20 | first_minor) above the low 32 bits of its diskseq (5.15+:
 * a number the kernel gives each new disk and each media change, e.g. a
 * loop device attached to another file; 0 on older kernels). A new disk
 * that reuses a dev_t gets a new tag, so it never inherits the counts of
 * the one before. 0: a free slot. */
#define HWSIG_BLOCK_TAG(dev, seq) (((__u64)(dev) << 32) | (__u32)(seq))
#define HWSIG_BLOCK_TAG_DEV(tag) ((__u32)((tag) >> 32))
#define HWSIG_BLOCK_TAG_SEQ(tag) ((__u32)(tag))

/* A slot of the table (ARRAY `slots`), shared by every CPU; the same index
 * of the PERCPU_ARRAY `dev_stats` holds the disk's statistics. */
struct hwsig_block_slot {
	__u64 tag; /* HWSIG_BLOCK_TAG; 0: free */
	/* End sectors of the streams' last completed requests; 0: unused. */
	__u64 heads[HWSIG_BLOCK_HEADS];
};

/* Per disk generation, in a PERCPU_ARRAY indexed like `slots`: each CPU
 * counts its own completions without contention. Only read and write requests are counted,
 * in every field (flushes, discards, write-zeroes, zone and driver-private
 * requests are in none); a request is counted once, when its last byte
 * completes (Documentation/bpf.rst). */
struct hwsig_block_stats {
	__u64 reads;       /* completed read requests */
	__u64 writes;      /* completed write requests */
	__u64 read_bytes;  /* bytes completed by reads, every part of a partial completion */
	__u64 write_bytes; /* bytes completed by writes */
	__u64 untimed;     /* completed requests without an issue time: not in latency */
	__u64 unqueued;    /* completed requests without an allocation time: not in queue */
	__u64 latency[HWSIG_BLOCK_TIME_SLOTS]; /* issue -> complete, log2 us */
	__u64 queue[HWSIG_BLOCK_TIME_SLOTS];   /* allocation -> issue, log2 us */
	__u64 size[HWSIG_BLOCK_SIZE_SLOTS];    /* request size as issued, log2 KiB */
	__u64 seek[HWSIG_BLOCK_SEEK_SLOTS];    /* log2 sectors from the nearest stream head */
};

/* Kernel dev_t packing (MINORBITS = 20), unlike userspace's makedev(). */
#define HWSIG_KDEV_MAJOR(dev) ((unsigned int)((dev) >> 20))
#define HWSIG_KDEV_MINOR(dev) ((unsigned int)((dev) & ((1U << 20) - 1)))

#endif
