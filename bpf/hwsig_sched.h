/* Shared between bpf/sched.bpf.c and bpf/sched.cpp. Include-free on
 * purpose (libbpf-tools style): the BPF side sees vmlinux.h types, userspace
 * sees <linux/types.h>; both only need fixed-width integers, which each side
 * defines before including this file. */
#ifndef HWSIG_BPF_SCHED_H
#define HWSIG_BPF_SCHED_H

/* log2 microsecond slots, libbpf-tools log2l layout: slot 0 = 0..1 us,
 * slot k = [2^k, 2^(k+1)) us. 2^26 us is about 67 s: anything longer waited
 * in the last slot. */
#define HWSIG_SCHED_SLOTS 27
#define HWSIG_SCHED_WAKEUP_AT 0
#define HWSIG_SCHED_PREEMPT_AT HWSIG_SCHED_SLOTS
#define HWSIG_SCHED_WAIT_SLOTS (2 * HWSIG_SCHED_SLOTS)
/* Processes (tgids) that can be selected at once for per-process stats. */
#define HWSIG_SCHED_MAX_PROCS 256

/* Who held the CPU: the classes a wait or a preemption is blamed on. VMs
 * are 0 .. HWSIG_SCHED_MAX_VMS - 1 (the index userspace gave the QEMU
 * process); the host's own work comes after them. */
#define HWSIG_SCHED_MAX_VMS 64
enum hwsig_sched_class {
	HWSIG_CLASS_IDLE = HWSIG_SCHED_MAX_VMS, /* nothing ran: the CPU was idle */
	HWSIG_CLASS_KERNEL,                     /* kernel threads */
	HWSIG_CLASS_VHOST,                      /* vhost kernel workers (before 6.4) */
	HWSIG_CLASS_OTHER,                      /* any other process of the host */
	HWSIG_SCHED_CLASSES,
};

/* CPUs a cell can name the waits' CPUs of (struct hwsig_sched_blame.cpus):
 * a wait on a CPU at or above this is counted but not placed. */
#define HWSIG_SCHED_MAX_CPUS 512
#define HWSIG_SCHED_CPU_WORDS (HWSIG_SCHED_MAX_CPUS / 64)

/* One cell of the victim x culprit matrix: blame[victim * HWSIG_SCHED_CLASSES
 * + culprit], victim a VM. The counts are cumulative, like the stats; cpus
 * is not: userspace takes it (exchanges each word with 0) at every read. */
struct hwsig_sched_blame {
	__u64 wait_ns;     /* the victim's run-queue waits that ended with the
			    * culprit being the last to run on that CPU */
	__u64 waits;       /* how many such waits */
	__u64 preemptions; /* the victim left a CPU still runnable and the
			    * culprit came on it */
	/* Bit N of word N / 64: a wait counted in wait_ns ended on CPU N
	 * (the run queue it waited on) since userspace last took the bits. */
	__u64 cpus[HWSIG_SCHED_CPU_WORDS];
};
#define HWSIG_SCHED_BLAME_CELLS (HWSIG_SCHED_MAX_VMS * HWSIG_SCHED_CLASSES)

enum hwsig_sched_wait_kind {
	HWSIG_WAIT_NONE = 0,
	HWSIG_WAIT_WAKEUP = 1,  /* woken (or new): wakeup -> on CPU */
	HWSIG_WAIT_PREEMPT = 2, /* left the CPU still runnable: preempted -> on CPU */
};

/* One set of counts. Per CPU (a PERCPU_ARRAY with one element: the per-CPU
 * copies ARE the per-CPU statistics) and per selected process (a
 * PERCPU_ARRAY indexed by the slot userspace gave that process). All
 * cumulative: nothing is ever reset while attached. */
struct hwsig_sched_stats {
	/* Two histograms in one array, so that the kind is an offset rather
	 * than a branch: waits[HWSIG_SCHED_WAKEUP_AT + slot] (wakeup -> on
	 * CPU), then waits[HWSIG_SCHED_PREEMPT_AT + slot] (preempted -> on
	 * CPU). */
	__u64 waits[HWSIG_SCHED_WAIT_SLOTS];
	__u64 involuntary; /* switched out while still runnable */
	__u64 runs;        /* times a task ran on the CPU: counted at the
			    * switch-in (raw_tp) or at the switch-out that
			    * ends the run (tp_btf) */
};

#endif
