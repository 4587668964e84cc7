// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU rings: allocation, lifetime and the producer side of the
 * protocol described at struct hwsig_ring_header in <linux/hwsig.h> and in
 * Documentation/abi.rst. Barrier letters (A)..(F) are the header's.
 */
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <net/netlink.h>

#include "hwsig_priv.h"

size_t hwsig_ring_stride(u32 ring_records)
{
	return PAGE_ALIGN(PAGE_SIZE + (size_t)ring_records * sizeof(struct hwsig_record));
}

static void hwsig_ring_free(struct hwsig_ring *ring, unsigned int nr_pages)
{
	unsigned int i;

	if (!ring->pages)
		return;
	if (ring->vaddr)
		vunmap(ring->vaddr);
	for (i = 0; i < nr_pages && ring->pages[i]; i++)
		__free_page(ring->pages[i]);
	kvfree(ring->pages);
	ring->pages = NULL;
	ring->vaddr = NULL;
}

static void hwsig_buffers_free(struct hwsig_buffers *bufs)
{
	unsigned int cpu;

	for (cpu = 0; cpu < bufs->nr_rings; cpu++)
		hwsig_ring_free(&bufs->rings[cpu], bufs->nr_pages);
	atomic_long_sub(bufs->bytes, &hwsig.ring_bytes);
	kfree(bufs);
}

/*
 * Zeroed pages on the CPU's node, charged to the caller's memory cgroup,
 * and one kernel mapping of them for the producer.
 */
static int hwsig_ring_alloc(struct hwsig_ring *ring, unsigned int nr_pages, int node)
{
	unsigned int i;

	ring->pages = kvcalloc(nr_pages, sizeof(*ring->pages), GFP_KERNEL_ACCOUNT);
	if (!ring->pages)
		return -ENOMEM;
	for (i = 0; i < nr_pages; i++) {
		ring->pages[i] = alloc_pages_node(node, GFP_KERNEL_ACCOUNT | __GFP_ZERO, 0);
		if (!ring->pages[i])
			return -ENOMEM;
	}
	ring->vaddr = vmap(ring->pages, nr_pages, VM_MAP, PAGE_KERNEL);
	return ring->vaddr ? 0 : -ENOMEM;
}

/* Charges bytes against the cap; false (and nothing charged) when over it. */
static bool hwsig_ring_bytes_charge(size_t bytes)
{
	long total = atomic_long_add_return(bytes, &hwsig.ring_bytes);

	if (total >= 0 && (unsigned long)total <= hwsig.ring_bytes_max)
		return true;
	atomic_long_sub(bytes, &hwsig.ring_bytes);
	return false;
}

/*
 * Rings for every possible CPU, zeroed: nothing the kernel held before is
 * ever visible through the mapping, and a record with seq 0 reads as never
 * written. Refused when it would take the ring sets alive (including the
 * one it replaces, and old ones still mapped) over the cap. hwsig.lock held.
 */
struct hwsig_buffers *hwsig_buffers_alloc(u32 ring_records, struct netlink_ext_ack *extack)
{
	size_t stride = hwsig_ring_stride(ring_records);
	size_t bytes = (size_t)num_possible_cpus() * stride;
	struct hwsig_buffers *bufs;
	unsigned int cpu;

	if (!hwsig_ring_bytes_charge(bytes)) {
		hwsig_err_fmt(extack,
			      "hwsig: the rings would exceed the ring memory cap (ring_bytes_max)",
			      "hwsig: %zu bytes of rings exceed the ring memory cap: %lu of %lu in use",
			      bytes, atomic_long_read(&hwsig.ring_bytes), hwsig.ring_bytes_max);
		return ERR_PTR(-ENOSPC);
	}
	bufs = kzalloc(struct_size(bufs, rings, nr_cpu_ids), GFP_KERNEL_ACCOUNT);
	if (!bufs) {
		atomic_long_sub(bytes, &hwsig.ring_bytes);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&bufs->ref);
	bufs->id = ++hwsig.ring_sets;
	bufs->ring_records = ring_records;
	bufs->ring_stride = stride;
	bufs->nr_pages = stride >> PAGE_SHIFT;
	bufs->bytes = bytes;
	bufs->nr_rings = nr_cpu_ids;
	for_each_possible_cpu(cpu) {
		struct hwsig_ring_header *hdr;

		if (hwsig_ring_alloc(&bufs->rings[cpu], bufs->nr_pages, cpu_to_node(cpu)))
			goto err_free_rings;
		hdr = hwsig_ring_header(bufs, cpu);
		hdr->cpu = cpu;
		hdr->ring_set = bufs->id;
		hdr->ring_records = ring_records;
		cond_resched();
	}
	return bufs;

err_free_rings:
	hwsig_buffers_free(bufs);
	NL_SET_ERR_MSG(extack, "hwsig: cannot allocate the rings");
	return ERR_PTR(-ENOMEM);
}

void hwsig_buffers_get(struct hwsig_buffers *bufs)
{
	kref_get(&bufs->ref);
}

static void hwsig_buffers_release(struct kref *ref)
{
	hwsig_buffers_free(container_of(ref, struct hwsig_buffers, ref));
}

/* Process context only: the last put vfree()s. */
void hwsig_buffers_put(struct hwsig_buffers *bufs)
{
	kref_put(&bufs->ref, hwsig_buffers_release);
}

void hwsig_buffers_set_online(struct hwsig_buffers *bufs, unsigned int cpu, bool online)
{
	WRITE_ONCE(hwsig_ring_header(bufs, cpu)->online, online);
}

u64 hwsig_mmap_size(const struct hwsig_buffers *bufs)
{
	if (!bufs)
		return PAGE_SIZE;
	return PAGE_SIZE + (u64)bufs->nr_rings * bufs->ring_stride;
}

/*
 * Append one record to pc's ring. Runs only in pc's sampling work on
 * pc->cpu; a work item never runs concurrently with itself and every stop
 * cancels it before another configuration may write the same rings, so it
 * is the one writer of this ring and head needs no atomics.
 * The payload comes from pc's last sample, read before the record is
 * opened so the window in which a reader can see it torn stays short.
 */
void hwsig_ring_publish(struct hwsig_buffers *bufs, const struct hwsig_cpu *pc,
			u64 time_ns, u32 flags, u32 generation)
{
	struct hwsig_ring_header *hdr = hwsig_ring_header(bufs, pc->cpu);
	u32 mask = bufs->ring_records - 1;
	u64 idx = hdr->head;
	struct hwsig_record *rec = &hwsig_ring_records(bufs, pc->cpu)[idx & mask];

	WRITE_ONCE(rec->seq, idx + 1);
	/*
	 * (A) pairs with the reader's smp_rmb() (D): a reader that sees any
	 * byte of the new payload also sees the new seq and drops the record.
	 */
	smp_wmb();
	rec->time_ns = time_ns;
	rec->cpu = pc->cpu;
	rec->flags = flags;
	rec->valid_mask = pc->valid_mask;
	rec->config_generation = generation;
	memcpy(rec->values, pc->value, sizeof(rec->values));
	memcpy(rec->time_enabled, pc->enabled, sizeof(rec->time_enabled));
	memcpy(rec->time_running, pc->running, sizeof(rec->time_running));
	/*
	 * (B) pairs with the reader's load-acquire of seq_end (C): a reader
	 * that sees seq_end == idx + 1 sees the complete payload.
	 */
	smp_wmb();
	WRITE_ONCE(rec->seq_end, idx + 1);
	/*
	 * (E) pairs with the reader's load-acquire of head (F): every record
	 * below the head the reader sees is complete.
	 */
	smp_store_release(&hdr->head, idx + 1);
	if (idx + 1 > bufs->ring_records)
		WRITE_ONCE(hdr->overwritten, idx + 1 - bufs->ring_records);
}
