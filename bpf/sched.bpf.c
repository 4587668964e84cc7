// SPDX-License-Identifier: GPL-2.0
/* Run-queue wait and involuntary context switches, aggregated in-kernel.
 *
 * A task's wait starts when it is woken (sched_wakeup, sched_wakeup_new) or
 * when it leaves a CPU still runnable (sched_switch with preempt or
 * TASK_RUNNING), and ends when sched_switch puts it on a CPU. The two kinds
 * are kept in separate histograms. The start time lives with the task:
 *   - tp_btf programs keep it in task-local storage (freed with the task,
 *     no map to fill up, no stale pid reuse);
 *   - raw_tp programs, the fallback for kernels without tp_btf or task
 *     storage, keep it in a hash keyed by pid (their task pointers are not
 *     BTF pointers, which task storage requires).
 * Userspace autoloads exactly one of the two sets. */
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

struct task_wait {
	__u64 start_ns;
	__u32 kind; /* enum hwsig_sched_wait_kind; NONE: not waiting */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_wait);
} task_wait SEC(".maps");

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

static __always_inline void add_wait(struct hwsig_sched_stats *s, __u32 kind, __u32 slot)
{
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
	__u32 slot = 0;
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

/* ---- tp_btf: task-local storage ---- */

static __always_inline int btf_wait_starts(struct task_struct *p, __u32 kind, __u64 now)
{
	struct task_wait *w;

	if (!p->pid)
		return 0;
	w = bpf_task_storage_get(&task_wait, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (w) {
		w->start_ns = now;
		w->kind = kind;
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_sched_wakeup, struct task_struct *p)
{
	return btf_wait_starts(p, HWSIG_WAIT_WAKEUP, bpf_ktime_get_ns());
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_sched_wakeup_new, struct task_struct *p)
{
	return btf_wait_starts(p, HWSIG_WAIT_WAKEUP, bpf_ktime_get_ns());
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct hwsig_sched_stats *cpu = this_cpu_stats();
	__u64 now = bpf_ktime_get_ns();
	struct task_wait *w;

	if (!cpu)
		return 0;
	/* Direct loads through the BTF pointers: no probe-read helper calls. */
	if (prev->pid && (preempt || hwsig_task_state_btf(prev) == TASK_RUNNING)) {
		count_involuntary(cpu, prev->tgid);
		btf_wait_starts(prev, HWSIG_WAIT_PREEMPT, now);
	}
	if (!next->pid)
		return 0;
	w = bpf_task_storage_get(&task_wait, next, 0, 0);
	switch_in(cpu, next->tgid, now, w);
	if (w)
		w->kind = HWSIG_WAIT_NONE;
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
