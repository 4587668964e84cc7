// SPDX-License-Identifier: GPL-2.0
/* Block requests per VM: which QEMU process submitted each read and write.
 *
 * The completion (block_rq_complete) runs in whatever context the driver
 * completes in, and the issue often in a kworker's: neither knows the
 * submitter. block_bio_queue runs in the submitter's context for every bio
 * (submit_bio_noacct), so it tags the bios of the watched VMs' processes
 * (any of their threads: vCPUs, iothreads, io_uring workers) with the VM's
 * index, in an LRU hash keyed by the bio; the completion of a request looks
 * its first bio up. Writes through the page cache are submitted later by
 * the flusher, a kworker: such a bio is tagged by its cgroup instead, the
 * one cgroup v2 writeback charged the dirty pages to (bio->bi_blkg), when
 * userspace found that cgroup to be a VM's own (vm_of_cgroup). A bio of
 * any other process removes a stale tag of a recycled bio pointer. Only
 * loaded while there are VMs; with no VM watched (nr_vms 0) both programs
 * return at once. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hwsig_vmio.h"
#include "bits.bpf.h"
#include "core_fixes.bpf.h"

#define REQ_OP_MASK ((1 << 8) - 1)
#define REQ_OP_READ 0
#define REQ_OP_WRITE 1

char LICENSE[] SEC("license") = "GPL";

/* Number of VMs in vm_of, of cgroups in vm_of_cgroup (userspace writes
 * them through the mmaped .bss). */
__u32 nr_vms;
__u32 nr_cgroups;

/* tgid -> VM index, maintained by userspace from its VM discovery. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_VMIO_MAX_VMS);
	__type(key, __u32);
	__type(value, __u32);
} vm_of SEC(".maps");

/* cgroup v2 id (kernfs node id) of a VM's own cgroup -> VM index. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HWSIG_VMIO_MAX_VMS);
	__type(key, __u64);
	__type(value, __u32);
} vm_of_cgroup SEC(".maps");

/* struct bio * -> VM index of its submitter. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u32);
} bio_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HWSIG_VMIO_MAX_VMS);
	__type(key, __u32);
	__type(value, struct hwsig_vmio_stats);
} vm_io SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, HWSIG_VMIO_MAX_PAIRS);
	__type(key, struct hwsig_vmio_pair);
	__type(value, struct hwsig_vmio_pair_stats);
} vm_dev_io SEC(".maps");

struct request___issue_stamp {
	u64 io_start_time_ns;
} __attribute__((preserve_access_index));

struct bio___blkg {
	struct blkcg_gq *bi_blkg; /* CONFIG_BLK_CGROUP */
} __attribute__((preserve_access_index));

/* The VM whose cgroup the bio is charged to, if userspace mapped it. */
static __always_inline __u32 *vm_of_bio_cgroup(struct bio *bio)
{
	struct bio___blkg *b = (void *)bio;
	struct blkcg_gq *blkg;
	__u64 id;

	if (!bpf_core_field_exists(b->bi_blkg))
		return NULL;
	blkg = b->bi_blkg;
	if (!blkg)
		return NULL;
	id = BPF_CORE_READ(blkg, blkcg, css.cgroup, kn, id);
	return bpf_map_lookup_elem(&vm_of_cgroup, &id);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(vmio_bio_queue, struct bio *bio)
{
	__u32 tgid, *vm;
	__u64 key = (__u64)bio;

	if (!nr_vms)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	vm = bpf_map_lookup_elem(&vm_of, &tgid);
	if (!vm && nr_cgroups)
		vm = vm_of_bio_cgroup(bio);
	if (vm)
		bpf_map_update_elem(&bio_owner, &key, vm, BPF_ANY);
	else
		bpf_map_delete_elem(&bio_owner, &key);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(vmio_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	struct request___issue_stamp *st = (void *)rq;
	struct hwsig_vmio_pair_stats *ps, zero = {};
	struct hwsig_vmio_pair pair = {};
	struct hwsig_vmio_stats *s;
	struct gendisk *disk;
	__u64 key, issue = 0;
	__u32 op, vm, *owner;

	if (!nr_vms || !rq->bio)
		return 0;
	key = (__u64)rq->bio;
	owner = bpf_map_lookup_elem(&bio_owner, &key);
	if (!owner)
		return 0;
	vm = *owner;
	op = rq->cmd_flags & REQ_OP_MASK;
	if (op != REQ_OP_READ && op != REQ_OP_WRITE)
		return 0;
	s = bpf_map_lookup_elem(&vm_io, &vm);
	if (!s)
		return 0;
	if (op == REQ_OP_READ)
		s->read_bytes += nr_bytes;
	else
		s->write_bytes += nr_bytes;
	/* A request is counted once, when its last byte completes. */
	if (nr_bytes < rq->__data_len)
		return 0;
	bpf_map_delete_elem(&bio_owner, &key);
	if (op == REQ_OP_READ)
		s->reads++;
	else
		s->writes++;
	if (bpf_core_field_exists(st->io_start_time_ns))
		issue = st->io_start_time_ns;
	if (issue) {
		__u64 now = bpf_ktime_get_ns();
		__u64 slot = hwsig_time_slot(now > issue ? now - issue : 0, false,
					     HWSIG_VMIO_TIME_SLOTS);

		barrier_var(slot);
		if (slot < HWSIG_VMIO_TIME_SLOTS)
			s->latency[slot]++;
	} else {
		s->untimed++;
	}
	disk = hwsig_request_disk_btf(rq);
	if (!disk)
		return 0;
	pair.vm = vm;
	pair.dev = ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	ps = bpf_map_lookup_elem(&vm_dev_io, &pair);
	if (!ps) {
		bpf_map_update_elem(&vm_dev_io, &pair, &zero, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&vm_dev_io, &pair);
		if (!ps)
			return 0;
	}
	if (op == REQ_OP_READ)
		ps->reads++;
	else
		ps->writes++;
	return 0;
}
