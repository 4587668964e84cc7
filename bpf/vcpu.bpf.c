// SPDX-License-Identifier: GPL-2.0
/* The scheduler accounting of the vCPU threads, all in one read.
 *
 * /proc/PID/task/TID/schedstat costs a system call per thread per
 * interval (1,600 beside 200 VMs of 8 vCPUs). This task iterator walks
 * every task once per read of its iterator fd and writes a fixed-size
 * record for each thread userspace listed in `wanted`: the same three
 * fields the schedstat file prints. Nothing runs between reads. */
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
