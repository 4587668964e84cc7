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
 *     storage). No clock read and no wakeup program: one program run and
 *     one storage lookup per switch. A wait is counted when the task next
 *     leaves the CPU, not when it gets it; waits that span a migration are
 *     whole (the kernel adds the part spent on the old run queue at the
 *     dequeue).
 *   - raw_tp, the fallback for kernels without tp_btf, task storage or
 *     CONFIG_SCHED_INFO: timestamps taken at wakeup and preemption, kept in
 *     a hash keyed by pid (raw_tp task pointers are not BTF pointers, which
 *     task storage requires), the wait taken when sched_switch puts the
 *     task on a CPU. */
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

/* Slots in log2 milliseconds instead of microseconds (hwsigctl hist -m). */
const volatile bool in_ms = false;

/* raw_tp: a wait in progress. */
struct task_wait {
	__u64 start_ns;
	__u32 kind; /* enum hwsig_sched_wait_kind; NONE: not waiting */
	__u32 pad;
};

/* tp_btf: prev's sched_info as of its last switch-out. */
struct task_seen {
	__u64 run_delay;     /* sched_info.run_delay (ns, cumulative) */
	__u64 pcount;        /* sched_info.pcount (arrivals, cumulative) */
	__u32 left_runnable; /* that switch-out was involuntary */
	__u32 valid;         /* 0 in a storage just created */
};

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
		s->preempt_wait[slot]++;
	else
		s->wakeup_wait[slot]++;
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
		slot = hwsig_slot((now - w->start_ns) / (in_ms ? 1000000 : 1000), HWSIG_SCHED_SLOTS);
		add_wait(cpu, w->kind, slot);
	}
	cpu->switch_in++;
	if (proc) {
		if (have_wait)
			add_wait(proc, w->kind, slot);
		proc->switch_in++;
	}
}

static __always_inline struct hwsig_sched_stats *this_cpu_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_stats, &zero);
}

/* ---- tp_btf: the kernel's sched_info, task-local storage ---- */

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct hwsig_sched_stats *cpu = this_cpu_stats();
	struct hwsig_sched_stats *proc;
	struct task_seen *seen;
	__u64 run_delay, pcount;
	bool runnable;

	if (!cpu)
		return 0;
	/* Direct loads through the BTF pointers: no probe-read helper calls. */
	if (next->pid) {
		cpu->switch_in++;
		proc = proc_of(next->tgid);
		if (proc)
			proc->switch_in++;
	}
	if (!prev->pid)
		return 0;
	runnable = preempt || hwsig_task_state_btf(prev) == TASK_RUNNING;
	proc = proc_of(prev->tgid);
	if (runnable) {
		cpu->involuntary++;
		if (proc)
			proc->involuntary++;
	}
	run_delay = prev->sched_info.run_delay;
	pcount = prev->sched_info.pcount;
	seen = bpf_task_storage_get(&task_seen, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!seen)
		return 0;
	/* One arrival since the last switch-out: its wait is the growth. */
	if (seen->valid && pcount == seen->pcount + 1 && run_delay >= seen->run_delay) {
		__u32 kind = seen->left_runnable ? HWSIG_WAIT_PREEMPT : HWSIG_WAIT_WAKEUP;
		__u64 slot = hwsig_slot((run_delay - seen->run_delay) / (in_ms ? 1000000 : 1000),
					HWSIG_SCHED_SLOTS);

		add_wait(cpu, kind, slot);
		if (proc)
			add_wait(proc, kind, slot);
	}
	seen->run_delay = run_delay;
	seen->pcount = pcount;
	seen->left_runnable = runnable;
	seen->valid = 1;
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
	struct task_wait *w;

	if (!cpu)
		return 0;
	if (prev_pid && (preempt || hwsig_task_state(prev) == TASK_RUNNING)) {
		count_involuntary(cpu, nr_selected ? BPF_CORE_READ(prev, tgid) : 0);
		raw_wait_starts(prev, HWSIG_WAIT_PREEMPT, now);
	}
	if (!next_pid)
		return 0;
	w = bpf_map_lookup_elem(&pid_wait, &next_pid);
	switch_in(cpu, nr_selected ? BPF_CORE_READ(next, tgid) : 0, now, w);
	if (w)
		bpf_map_delete_elem(&pid_wait, &next_pid);
	return 0;
}
