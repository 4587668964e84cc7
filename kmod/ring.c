// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU rings: allocation, lifetime and the producer side of the
 * protocol described at struct hwsig_ring_header in <linux/hwsig.h> and in
 * Documentation/abi.rst. Barrier letters (A)..(F) are the header's.
 */
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "hwsig_priv.h"

static void hwsig_buffers_free(struct hwsig_buffers *bufs)
{
	unsigned int cpu;

	for (cpu = 0; cpu < bufs->nr_rings; cpu++)
		vfree(bufs->rings[cpu]);
	kfree(bufs);
}

/*
 * Rings for every CPU id below nr_cpu_ids, zeroed (vzalloc): nothing the
 * kernel held before is ever visible through the mapping, and a record
 * with seq 0 reads as never written.
 */
struct hwsig_buffers *hwsig_buffers_alloc(u32 ring_records)
{
	struct hwsig_buffers *bufs;
	unsigned int cpu;

	bufs = kzalloc(struct_size(bufs, rings, nr_cpu_ids), GFP_KERNEL);
	if (!bufs)
		return NULL;
	kref_init(&bufs->ref);
	bufs->ring_records = ring_records;
	bufs->ring_stride = PAGE_ALIGN(PAGE_SIZE +
				       (size_t)ring_records * sizeof(struct hwsig_record));
	bufs->nr_rings = nr_cpu_ids;
	for (cpu = 0; cpu < bufs->nr_rings; cpu++) {
		int node = cpu_possible(cpu) ? cpu_to_node(cpu) : NUMA_NO_NODE;

		bufs->rings[cpu] = vzalloc_node(bufs->ring_stride, node);
		if (!bufs->rings[cpu])
			goto err_free_rings;
		hwsig_ring_header(bufs, cpu)->cpu = cpu;
	}
	return bufs;

err_free_rings:
	hwsig_buffers_free(bufs);
	return NULL;
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
