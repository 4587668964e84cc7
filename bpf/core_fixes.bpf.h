/* CO-RE shims: fields that moved or were renamed between kernels. Each
 * ___flavour struct names only the field it is about; libbpf matches it to the
 * running kernel's struct by name (the suffix is ignored) and
 * bpf_core_field_exists() picks the branch at load time, so one object runs on
 * both layouts without kernel-version #ifdefs. The flavours are declared here
 * rather than taken from vmlinux.h so that the program compiles whichever
 * kernel vmlinux.h was generated from. */
#ifndef HWSIG_CORE_FIXES_BPF_H
#define HWSIG_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/* 5.14 renamed task_struct::state (long) to __state (unsigned int). */
struct task_struct___post514 {
	unsigned int __state;
} __attribute__((preserve_access_index));

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* For BTF pointers (tp_btf): a direct load, which the verifier allows and
 * which costs nothing, where BPF_CORE_READ would be a helper call (about 60 ns
 * per read on the test host). */
static __always_inline __s64 hwsig_task_state_btf(void *task)
{
	struct task_struct___post514 *t = task;

	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return ((struct task_struct___pre514 *)task)->state;
}

/* For untyped pointers (raw_tp): through bpf_probe_read_kernel. */
static __always_inline __s64 hwsig_task_state(void *task)
{
	struct task_struct___post514 *t = task;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)task, state);
}

/* 5.17 dropped request::rq_disk; the disk is reached through the queue
 * (request_queue::disk, added in 5.15). */
struct request___with_rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct request_queue___with_disk {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct request___with_q {
	struct request_queue___with_disk *q;
} __attribute__((preserve_access_index));

/* Direct loads for BTF pointers (tp_btf). */
static __always_inline struct gendisk *hwsig_request_disk_btf(void *rq)
{
	struct request___with_rq_disk *old = rq;

	if (bpf_core_field_exists(old->rq_disk))
		return old->rq_disk;
	return ((struct request___with_q *)rq)->q->disk;
}

static __always_inline struct gendisk *hwsig_request_disk(void *rq)
{
	struct request___with_rq_disk *old = rq;

	if (bpf_core_field_exists(old->rq_disk))
		return BPF_CORE_READ(old, rq_disk);
	return BPF_CORE_READ((struct request___with_q *)rq, q, disk);
}

#endif
