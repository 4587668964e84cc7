/* Shared between bpf/vcpu.bpf.c and bpf/vcpu.cpp; include-free
 * (see hwsig_sched.h). */
#ifndef HWSIG_BPF_VCPU_H
#define HWSIG_BPF_VCPU_H

/* Threads whose scheduler accounting one pass reports: every vCPU of
 * 256 VMs of 32 vCPUs. */
#define HWSIG_VCPU_MAX_TASKS 8192

/* One wanted thread's accounting, as /proc/PID/task/TID/schedstat prints
 * it: se.sum_exec_runtime, sched_info.run_delay, sched_info.pcount.
 * Written by the task iterator, one record per wanted thread alive. */
struct hwsig_vcpu_record {
	__u32 tid;
	__u32 tgid;
	__u64 on_cpu_ns;
	__u64 run_delay_ns;
	__u64 timeslices;
};

#endif
