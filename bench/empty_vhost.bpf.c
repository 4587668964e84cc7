// SPDX-License-Identifier: GPL-2.0
/* Empty programs on the vhost collector's hooks: the floor its cost is
 * compared with (vhost-check --bench in the QEMU guest). Loaded one set at a
 * time, like the collector. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("fentry/handle_tx")
int BPF_PROG(empty_fe_handle_tx)
{
	return 0;
}

SEC("fentry/handle_rx")
int BPF_PROG(empty_fe_handle_rx)
{
	return 0;
}

SEC("kprobe/handle_tx")
int BPF_KPROBE(empty_kp_handle_tx)
{
	return 0;
}

SEC("fentry/vhost_enable_notify")
int BPF_PROG(empty_fe_enable_notify)
{
	return 0;
}

SEC("kprobe/vhost_enable_notify")
int BPF_KPROBE(empty_kp_enable_notify)
{
	return 0;
}
