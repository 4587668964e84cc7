// SPDX-License-Identifier: GPL-2.0
/* The scheduler accounting of the vCPU threads, all in one read.
 *
 * /proc/PID/task/TID/schedstat costs a system call per thread per
 * interval (1,600 beside 200 VMs of 8 vCPUs). Two programs give the same
 * three fields the schedstat file prints, for the threads userspace lists;
 * nothing runs between reads of an iterator fd. Userspace loads one:
 *   - look_up_wanted (6.2+: bpf_task_from_pid, and 6.1's task iterator
 *     bound to one task): one run per read, bound to hwsigd's own thread,
 *     looks each listed thread up by tid. Its cost follows the threads
 *     listed, not the host's: walking every task costs about a
 *     microsecond each in the kernel (a pid lookup and a reference per
 *     task), and hosts run thousands beside the vCPUs.
 *   - dump_vcpus, the fallback: runs for every task of the walk and
 *     writes a record for each listed in `wanted`. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "hwsig_vcpu.h"

char LICENSE[] SEC("license") = "GPL";

/* tid -> its process's tgid: the threads to report, maintained by
 * userspace. A tid reused by another process since is not reported. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_VCPU_MAX_TASKS);
	__type(key, __u32);
	__type(value, __u32);
} wanted SEC(".maps");

SEC("iter/task")
int dump_vcpus(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct hwsig_vcpu_record r = {};
	__u32 tid, *tgid;

	if (!task)
		return 0; /* the end of the walk */
	tid = BPF_CORE_READ(task, pid);
	tgid = bpf_map_lookup_elem(&wanted, &tid);
	if (!tgid || *tgid != (__u32)BPF_CORE_READ(task, tgid))
		return 0;
	r.tid = tid;
	r.tgid = *tgid;
	r.on_cpu_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	r.run_delay_ns = BPF_CORE_READ(task, sched_info.run_delay);
	r.timeslices = BPF_CORE_READ(task, sched_info.pcount);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

/* look_up_wanted's list and answers, in .bss (mmapped by userspace, which
 * writes the list between reads and reads the answers after one):
 * thread wanted_tids[i] of process wanted_tgids[i], i < nr_wanted;
 * results[i].tid is 0 when that thread is gone or another process's. */
__u32 nr_wanted = 0;
__u32 wanted_tids[HWSIG_VCPU_MAX_TASKS] = {};
__u32 wanted_tgids[HWSIG_VCPU_MAX_TASKS] = {};
struct hwsig_vcpu_record results[HWSIG_VCPU_MAX_TASKS] = {};
/* The one task the iterator is bound to: runs for any other (a kernel
 * that ignored the binding) do nothing. */
const volatile __u32 bound_tid = 0;
/* Runs that did the look-up: userspace checks a read made one. */
__u64 passes = 0;

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

static long look_up_one(__u32 i, void *unused)
{
	struct hwsig_vcpu_record *r;
	struct task_struct *task;

	if (i >= HWSIG_VCPU_MAX_TASKS)
		return 1;
	r = &results[i];
	r->tid = 0;
	task = bpf_task_from_pid(wanted_tids[i]);
	if (!task)
		return 0;
	/* A trusted pointer (the kfunc's): plain loads, no probe-read
	 * helper call per field. */
	if ((__u32)task->tgid == wanted_tgids[i]) {
		r->tid = wanted_tids[i];
		r->tgid = wanted_tgids[i];
		r->on_cpu_ns = task->se.sum_exec_runtime;
		r->run_delay_ns = task->sched_info.run_delay;
		r->timeslices = task->sched_info.pcount;
	}
	bpf_task_release(task);
	return 0;
}

SEC("iter/task")
int look_up_wanted(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (!task || (__u32)BPF_CORE_READ(task, pid) != bound_tid)
		return 0;
	bpf_loop(nr_wanted, look_up_one, NULL, 0);
	passes++;
	return 0;
}
