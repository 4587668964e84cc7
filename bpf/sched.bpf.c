// SPDX-License-Identifier: GPL-2.0
/* Run-queue wait and involuntary context switches, aggregated in-kernel.
 *
 * A task's wait starts when it is woken (sched_wakeup, sched_wakeup_new) or
 * when it leaves a CPU still runnable (sched_switch with preempt or
 * TASK_RUNNING), and ends when sched_switch puts it on a CPU. The two kinds
 * are kept in separate histograms. Two program sets; userspace autoloads
 * exactly one:
 *   - tp_btf (the default): one program, on sched_switch only. The kernel
 *     already measures every such wait (sched_info: last_queued is stamped
 *     at the enqueue of a wakeup or at a preempted task's switch-out, and
 *     sched_info_arrive() adds now - last_queued to run_delay and counts
 *     pcount when the task gets the CPU). At each switch-out the program
 *     takes the growth of prev's run_delay since its previous switch-out:
 *     exactly one arrival lies between two switch-outs, so that growth is
 *     the wait of the arrival that put prev on this CPU, and how prev left
 *     the CPU the time before says which kind it was (kept in task-local
 *     storage, with the task's selected-process index). No clock read and
 *     no wakeup program: one program run and one storage lookup per switch,
 *     and no hash lookup even for selected processes. A wait is counted
 *     when the task next leaves the CPU, not when it gets it; waits that
 *     span a migration are whole (the kernel adds the part spent on the old
 *     run queue at the dequeue). Involuntary switches are the growth of
 *     prev's nivcsw, the kernel's own count.
 *   - raw_tp, the fallback for kernels without tp_btf, task storage or
 *     CONFIG_SCHED_INFO: timestamps taken at wakeup and preemption, kept in
 *     a hash keyed by pid (raw_tp task pointers are not BTF pointers, which
 *     task storage requires), the wait taken when sched_switch puts the
 *     task on a CPU. Involuntary: preempt, or prev_state TASK_RUNNING. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hwsig_sched.h"
#include "bits.bpf.h"
#include "core_fixes.bpf.h"

#define TASK_RUNNING 0

char LICENSE[] SEC("license") = "GPL";

/* Number of selected processes; userspace writes it (through the mmaped
 * .bss) so that the common case, nothing selected, skips the hash lookup. */
__u32 nr_selected = 0;
/* Bumped by userspace after every change to `selected` (odd values only, so
 * that a zeroed task_seen never matches): the tp_btf set caches each task's
 * process index in its task storage and looks it up again when this moved. */
__u32 selection_gen = 1;

/* Number of VMs in vm_of; userspace writes it, like nr_selected: with no VM
 * the victim x culprit matrix costs one load and one branch per switch. */
__u32 nr_vms = 0;
/* Bumped (odd values) after every change to vm_of: each task's class is
 * cached in its task storage (tp_btf) until this moves. */
__u32 vm_gen = 1;

/* Slots in log2 milliseconds instead of microseconds (hwsigctl hist -m). */
const volatile bool in_ms = false;
/* sched_switch passes prev_state, its 4th argument, since 5.18 (userspace
 * reads the prototype): the state prev called schedule() with. prev's own
 * state is no guide once a signal came in while prev was going to sleep:
 * __schedule() then sets it TASK_RUNNING and keeps prev on the run queue,
 * yet counts a voluntary switch (nvcsw), and so must we. */
const volatile bool has_prev_state = false;

/* raw_tp: a wait in progress. */
struct task_wait {
	__u64 start_ns;
	__u32 kind; /* enum hwsig_sched_wait_kind; NONE: not waiting */
	__u32 pad;
};

/* tp_btf: prev's sched_info as of its last switch-out. A storage just
 * created is all zeros, which reads as "no arrival yet, left asleep": right
 * for a task whose first switch-out this is (pcount 1), and never matching
 * for an older one (see btf_sched_switch). */
struct task_seen {
	__u64 run_delay;     /* sched_info.run_delay (ns, cumulative) */
	__u64 pcount;        /* sched_info.pcount (arrivals, cumulative) */
	__u64 nivcsw;        /* the kernel's involuntary switch count */
	__u64 left_runnable; /* that switch-out left prev queued: 0 or 1 */
	__u32 selection_gen; /* proc_index is valid while this is selection_gen */
	__u32 proc_index;    /* into proc_stats; NOT_SELECTED if not selected */
	__u32 vm_gen;        /* cls is valid while this is vm_gen */
	__u32 cls;           /* enum hwsig_sched_class, or a VM's index */
};

#define NOT_SELECTED 0xffffffffu

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_seen);
} task_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct task_wait);
} pid_wait SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hwsig_sched_stats);
} cpu_stats SEC(".maps");

/* tgid -> index into proc_stats, maintained by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_SCHED_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} selected SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HWSIG_SCHED_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct hwsig_sched_stats);
} proc_stats SEC(".maps");

/* tgid -> the VM's index (a class below HWSIG_SCHED_MAX_VMS), maintained
 * by userspace from its VM discovery. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_SCHED_MAX_VMS);
	__type(key, __u32);
	__type(value, __u32);
} vm_of SEC(".maps");

/* Per CPU: the class of the task that ran before the one now running, and
 * whether it left still runnable. Each switch's next is the following
 * switch's prev on the same CPU, so the tp_btf program blames at prev's
 * switch-out, with no lookup of next: prev's wait on the class before it,
 * and the class before it, if preempted, on prev. */
#define HOLDER_KNOWN 1u
#define HOLDER_PREEMPTED 2u
struct cpu_holder {
	__u32 before; /* the class that left this CPU at its last switch */
	__u32 flags;  /* HOLDER_*; 0: nothing recorded since the attach */
	__u32 pid;    /* the task that left (0: idle) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_holder);
} cpu_holder SEC(".maps");

/* The victim x culprit matrix. Shared, not per CPU (a per-CPU copy would be
 * over 30 MB on a 96-CPU host): written only when a VM waited or was
 * preempted, with atomic adds (and ors, for the CPUs of the waits). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HWSIG_SCHED_BLAME_CELLS);
	/* read and, for a reused VM index, cleared by userspace */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct hwsig_sched_blame);
} blame SEC(".maps");

static __always_inline struct hwsig_sched_stats *proc_of(__u32 tgid)
{
	__u32 *index;

	if (!nr_selected)
		return NULL;
	index = bpf_map_lookup_elem(&selected, &tgid);
	if (!index)
		return NULL;
	return bpf_map_lookup_elem(&proc_stats, index);
}

/* slot: from hwsig_slot() (bits.bpf.h), already an index the verifier
 * accepts; checked again where it indexes, on the same register. */
static __always_inline void add_wait(struct hwsig_sched_stats *s, __u32 kind, __u64 slot)
{
	barrier_var(slot);
	if (slot >= HWSIG_SCHED_SLOTS)
		return;
	if (kind == HWSIG_WAIT_PREEMPT)
		s->waits[HWSIG_SCHED_PREEMPT_AT + slot]++;
	else
		s->waits[HWSIG_SCHED_WAKEUP_AT + slot]++;
}

/* prev (of process prev_tgid) left the CPU still runnable: an involuntary
 * switch. */
static __always_inline void count_involuntary(struct hwsig_sched_stats *cpu, __u32 prev_tgid)
{
	struct hwsig_sched_stats *proc = proc_of(prev_tgid);

	cpu->involuntary++;
	if (proc)
		proc->involuntary++;
}

/* next (of process next_tgid) comes on the CPU after waiting since w. */
static __always_inline void switch_in(struct hwsig_sched_stats *cpu, __u32 next_tgid, __u64 now,
				      const struct task_wait *w)
{
	struct hwsig_sched_stats *proc = proc_of(next_tgid);
	__u64 slot = 0;
	bool have_wait = w && w->kind != HWSIG_WAIT_NONE && now >= w->start_ns;

	if (have_wait) {
		slot = hwsig_time_slot(now - w->start_ns, in_ms, HWSIG_SCHED_SLOTS);
		add_wait(cpu, w->kind, slot);
	}
	cpu->runs++;
	if (proc) {
		if (have_wait)
			add_wait(proc, w->kind, slot);
		proc->runs++;
	}
}

static __always_inline struct hwsig_sched_stats *this_cpu_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_stats, &zero);
}

/* ---- victim x culprit ---- */

#define PF_KTHREAD 0x00200000

/* A task's class from its tgid, flags and comm (read by the caller: direct
 * loads for tp_btf, probe reads for raw_tp). */
static __always_inline __u32 class_from(__u32 tgid, __u32 flags, const char *comm)
{
	__u32 *vm = bpf_map_lookup_elem(&vm_of, &tgid);

	if (vm)
		return *vm;
	if (!(flags & PF_KTHREAD))
		return HWSIG_CLASS_OTHER;
	/* vhost-<owner pid>: the 6.1-style worker (6.4+ workers are threads
	 * of QEMU, found above as their VM). */
	if (comm[0] == 'v' && comm[1] == 'h' && comm[2] == 'o' && comm[3] == 's' &&
	    comm[4] == 't' && comm[5] == '-')
		return HWSIG_CLASS_VHOST;
	return HWSIG_CLASS_KERNEL;
}

static __always_inline void add_blame(__u32 victim, __u32 culprit, __u64 wait_ns, __u64 preemptions)
{
	__u32 cell = victim * HWSIG_SCHED_CLASSES + culprit;
	struct hwsig_sched_blame *b;
	__u32 cpu;
	__u64 word, bit;

	if (victim >= HWSIG_SCHED_MAX_VMS || culprit >= HWSIG_SCHED_CLASSES)
		return;
	b = bpf_map_lookup_elem(&blame, &cell);
	if (!b)
		return;
	if (preemptions) {
		__sync_fetch_and_add(&b->preemptions, preemptions);
		return;
	}
	__sync_fetch_and_add(&b->wait_ns, wait_ns);
	__sync_fetch_and_add(&b->waits, 1);
	/* Where the wait happened, for "waits behind X on CPUs L": both
	 * program sets blame a wait on the CPU whose run queue it ended on.
	 * The bit needs setting once per CPU between two userspace reads, so
	 * a plain load first spares the locked or (and the cache line
	 * bouncing between CPUs) on nearly every wait. The load races with
	 * userspace taking the word: a stale bit loses this CPU for one
	 * read only if no later wait there sets it again. */
	cpu = bpf_get_smp_processor_id();
	/* The index is checked and used in one register (barrier_var):
	 * clang otherwise recomputes it from the helper's return value, which
	 * a 6.1 verifier does not bound, and the access is refused. */
	word = cpu >> 6;
	barrier_var(word);
	if (word >= HWSIG_SCHED_CPU_WORDS)
		return;
	bit = 1ULL << (cpu & 63);
	if (!(b->cpus[word] & bit))
		__sync_fetch_and_or(&b->cpus[word], bit);
}

static __always_inline struct cpu_holder *this_cpu_holder(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_holder, &zero);
}

/* A switch on this CPU from a task of class prev_cls to one of class
 * next_cls, which had waited wait_ns (when has_wait) behind prev_cls;
 * prev left still runnable when involuntary. Used by raw_tp, which sees
 * both tasks' waits and classes at the switch. */
static __always_inline void blame_switch(__u32 prev_cls, __u32 next_cls, bool involuntary,
					 bool has_wait, __u64 wait_ns)
{
	if (involuntary && prev_cls < HWSIG_SCHED_MAX_VMS)
		add_blame(prev_cls, next_cls, 0, 1);
	if (has_wait && next_cls < HWSIG_SCHED_MAX_VMS)
		add_blame(next_cls, prev_cls, wait_ns, 0);
}

/* ---- tp_btf: the kernel's sched_info, task-local storage ---- */

/* prev's process stats, from the index cached in its storage. */
static __always_inline struct hwsig_sched_stats *proc_cached(struct task_seen *seen, __u32 tgid)
{
	__u32 gen = selection_gen;
	__u32 *index;

	if (!nr_selected)
		return NULL;
	if (seen->selection_gen != gen) {
		index = bpf_map_lookup_elem(&selected, &tgid);
		seen->proc_index = index ? *index : NOT_SELECTED;
		seen->selection_gen = gen;
	}
	if (seen->proc_index == NOT_SELECTED)
		return NULL;
	return bpf_map_lookup_elem(&proc_stats, &seen->proc_index);
}

static __always_inline __u32 btf_class(struct task_struct *prev)
{
	char comm[6];

	comm[0] = prev->comm[0];
	comm[1] = prev->comm[1];
	comm[2] = prev->comm[2];
	comm[3] = prev->comm[3];
	comm[4] = prev->comm[4];
	comm[5] = prev->comm[5];
	return class_from(prev->tgid, prev->flags, comm);
}

/* prev's class, cached in its storage until vm_gen moves. */
static __always_inline __u32 class_cached(struct task_seen *seen, struct task_struct *prev)
{
	__u32 gen = vm_gen;

	if (seen->vm_gen != gen) {
		seen->cls = btf_class(prev);
		seen->vm_gen = gen;
	}
	return seen->cls;
}

/* At the switch-out of a task of class cls, with VMs known: see struct
 * cpu_holder. wait_ns is its wait that ended when it came on this CPU,
 * when counted. */
static __always_inline void btf_blame(__u32 pid, __u32 cls, bool counted, __u64 wait_ns,
				      __u64 involuntary)
{
	struct cpu_holder *h = this_cpu_holder();

	if (!h)
		return;
	/* The task that left last is this one: what ran in between left
	 * unseen (a switch this program did not see), so who held the CPU
	 * is not known. */
	if ((h->flags & HOLDER_KNOWN) && h->pid != pid) {
		if (counted && cls < HWSIG_SCHED_MAX_VMS)
			add_blame(cls, h->before, wait_ns, 0);
		if ((h->flags & HOLDER_PREEMPTED) && h->before < HWSIG_SCHED_MAX_VMS)
			add_blame(h->before, cls, 0, 1);
	}
	h->before = cls;
	h->flags = HOLDER_KNOWN | (involuntary ? HOLDER_PREEMPTED : 0);
	h->pid = pid;
}

/* The idle task leaves this CPU: what comes next waited behind nothing. */
static __always_inline void idle_leaves(void)
{
	struct cpu_holder *h = this_cpu_holder();

	if (!h)
		return;
	h->before = HWSIG_CLASS_IDLE;
	h->flags = HOLDER_KNOWN;
	h->pid = 0;
}

/*
 * Everything happens at the switch-out of prev; next is not read. This runs
 * on every context switch of the host, so every instruction counts
 * (bench/bench_bpf.cpp): the kind picks the histogram by offset rather than
 * by a branch, the slot costs no divide and mostly one table load
 * (hwsig_time_slot), and a selected process's index is cached in the task's
 * storage instead of being looked up in a hash at every switch.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct hwsig_sched_stats *cpu, *proc;
	struct task_seen *seen;
	__u64 run_delay, pcount, nivcsw, runnable, involuntary, index, state;

	if (!prev->pid) {
		if (nr_vms)
			idle_leaves();
		return 0;
	}
	cpu = this_cpu_stats();
	if (!cpu)
		return 0;
	seen = bpf_task_storage_get(&task_seen, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!seen) {
		/* Creating the storage can fail (no memory, or another task
		 * storage user holds this CPU's lock while its task was
		 * preempted). The CPU still changes hands: without this, the
		 * next task to leave would blame its wait on whatever left
		 * before this one (a VM on itself). Its own wait is unknown
		 * here, and preempt stands for involuntary. */
		if (nr_vms)
			btf_blame(prev->pid, btf_class(prev), false, 0, preempt);
		return 0;
	}
	/* Direct loads through the BTF pointers: no bpf_probe_read_kernel() calls.
	 * Involuntary: preempted, or called schedule() in TASK_RUNNING
	 * (state 0: 0 - 1 wraps). ctx[3] is read only where it exists: the
	 * verifier drops the branch a frozen has_prev_state rules out. */
	if (has_prev_state)
		state = (__u32)ctx[3];
	else
		state = (__u32)hwsig_task_state_btf(prev);
	runnable = (preempt | (state - 1) >> 63) & 1;
	run_delay = prev->sched_info.run_delay;
	pcount = prev->sched_info.pcount;
	/* Involuntary as the kernel counts it: __schedule() has bumped nivcsw
	 * or nvcsw before this tracepoint. A sleep cut short by a signal
	 * stays queued (runnable above; newer kernels pass prev_state as
	 * TASK_RUNNING too) but is an nvcsw. Only a task's first switch-out
	 * seen (pcount 0 stored) has no count to compare with. */
	nivcsw = prev->nivcsw;
	involuntary = seen->pcount ? nivcsw != seen->nivcsw : runnable;
	/* The wait's index into waits[]: wakeup_wait, then preempt_wait,
	 * by how prev left a CPU before the arrival that ended it. */
	index = seen->left_runnable * HWSIG_SCHED_PREEMPT_AT +
		hwsig_time_slot(run_delay - seen->run_delay, in_ms, HWSIG_SCHED_SLOTS);
	/* Exactly one arrival since the last switch-out: the growth of
	 * run_delay is its wait. Anything else (a storage just created for an
	 * older task, a switch-out missed) is not counted. */
	if (pcount != seen->pcount + 1 || run_delay < seen->run_delay)
		index = HWSIG_SCHED_WAIT_SLOTS;
	if (nr_vms)
		btf_blame(prev->pid, class_cached(seen, prev), index < HWSIG_SCHED_WAIT_SLOTS,
			  run_delay - seen->run_delay, involuntary);
	seen->run_delay = run_delay;
	seen->pcount = pcount;
	seen->nivcsw = nivcsw;
	seen->left_runnable = runnable;

	cpu->runs++;
	cpu->involuntary += involuntary;
	barrier_var(index);
	if (index < HWSIG_SCHED_WAIT_SLOTS)
		cpu->waits[index]++;
	proc = proc_cached(seen, prev->tgid);
	if (proc) {
		proc->runs++;
		proc->involuntary += involuntary;
		if (index < HWSIG_SCHED_WAIT_SLOTS)
			proc->waits[index]++;
	}
	return 0;
}

/* ---- raw_tp fallback: pid-keyed hash ---- */

static __always_inline int raw_wait_starts(struct task_struct *p, __u32 kind, __u64 now)
{
	__u32 pid = BPF_CORE_READ(p, pid);
	struct task_wait w = { .start_ns = now, .kind = kind };

	if (!pid)
		return 0;
	bpf_map_update_elem(&pid_wait, &pid, &w, BPF_ANY);
	return 0;
}

static __always_inline __u32 raw_class(struct task_struct *p)
{
	char comm[6] = {};

	bpf_probe_read_kernel(comm, sizeof(comm), &p->comm);
	return class_from(BPF_CORE_READ(p, tgid), BPF_CORE_READ(p, flags), comm);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_sched_wakeup, struct task_struct *p)
{
	return raw_wait_starts(p, HWSIG_WAIT_WAKEUP, bpf_ktime_get_ns());
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_sched_wakeup_new, struct task_struct *p)
{
	return raw_wait_starts(p, HWSIG_WAIT_WAKEUP, bpf_ktime_get_ns());
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct hwsig_sched_stats *cpu = this_cpu_stats();
	__u64 now = bpf_ktime_get_ns();
	__u32 prev_pid = BPF_CORE_READ(prev, pid);
	__u32 next_pid = BPF_CORE_READ(next, pid);
	__u64 state = has_prev_state ? (__u32)ctx[3] : (__u32)hwsig_task_state(prev);
	bool involuntary = prev_pid && (preempt || state == TASK_RUNNING);
	struct task_wait *w;

	if (!cpu)
		return 0;
	if (involuntary) {
		count_involuntary(cpu, nr_selected ? BPF_CORE_READ(prev, tgid) : 0);
		raw_wait_starts(prev, HWSIG_WAIT_PREEMPT, now);
	}
	if (!next_pid)
		return 0;
	w = bpf_map_lookup_elem(&pid_wait, &next_pid);
	if (nr_vms)
		blame_switch(prev_pid ? raw_class(prev) : HWSIG_CLASS_IDLE, raw_class(next),
			     involuntary, w && w->kind != HWSIG_WAIT_NONE && now >= w->start_ns,
			     w ? now - w->start_ns : 0);
	switch_in(cpu, nr_selected ? BPF_CORE_READ(next, tgid) : 0, now, w);
	if (w)
		bpf_map_delete_elem(&pid_wait, &next_pid);
	return 0;
}
