// SPDX-License-Identifier: GPL-2.0
/* Empty programs: the benchmarks' floor (the cost of having any BPF program
 * on the tracepoint at all). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("raw_tp/sched_switch")
int empty_sched_switch(void *ctx)
{
	return 0;
}

/* With empty_sched_switch: the dispatch floor of any wakeup-to-run tracer,
 * which must run on both tracepoints. */
SEC("raw_tp/sched_wakeup")
int empty_sched_wakeup(void *ctx)
{
	return 0;
}

/* Nothing but the task-storage lookup of prev that hwsig's tp_btf scheduler
 * program makes at every switch: the floor of any tracer that keeps state
 * per task across CPUs, which the wakeup/preemption split needs (a bit per
 * task saying how it last left a CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} empty_task_state SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_task_storage_sched_switch, bool preempt, struct task_struct *prev)
{
	__u64 *seen = bpf_task_storage_get(&empty_task_state, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (seen)
		*seen = preempt;
	return 0;
}

/* A classic tracepoint program: resolves its event id through tracefs, so
 * hwsig::Skeleton mounts tracefs before loading it (tested in tests/bpf). */
SEC("tracepoint/sched/sched_switch")
int empty_tracepoint_sched_switch(void *ctx)
{
	return 0;
}

SEC("raw_tp/block_rq_complete")
int empty_block_rq_complete(void *ctx)
{
	return 0;
}
