// SPDX-License-Identifier: GPL-2.0
/* Empty programs: the benchmarks' floor (the cost of having any BPF program
 * on the tracepoint at all). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

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
