/* Shared between bpf/vmio.bpf.c and bpf/vmio.cpp; include-free
 * (see hwsig_sched.h). */
#ifndef HWSIG_BPF_VMIO_H
#define HWSIG_BPF_VMIO_H

/* VMs whose block requests are attributed at once (as the sched matrix). */
#define HWSIG_VMIO_MAX_VMS 64
/* log2 microseconds, as hwsig_block.h's latency. */
#define HWSIG_VMIO_TIME_SLOTS 27
/* (VM, disk) pairs counted at once. */
#define HWSIG_VMIO_MAX_PAIRS 1024

/* Per VM, in a PERCPU_ARRAY indexed by the VM's index: the read and write
 * requests its QEMU process (any thread) submitted, counted when their last
 * byte completes. Cumulative. */
struct hwsig_vmio_stats {
	__u64 reads;
	__u64 writes;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 untimed; /* completed without the kernel's issue stamp: not in latency */
	__u64 latency[HWSIG_VMIO_TIME_SLOTS]; /* issue -> complete, log2 us */
};

/* Per (VM, disk): the same requests by disk, for a VM's share of a disk. */
struct hwsig_vmio_pair {
	__u32 vm;
	__u32 dev; /* major << 20 | first_minor */
};

struct hwsig_vmio_pair_stats {
	__u64 reads;
	__u64 writes;
};

#endif
