// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/hwsig: a misc device whose only job is the read-only mapping of the
 * control page and the rings (layout in <linux/hwsig.h>). Control goes
 * through generic netlink.
 *
 * Lifetime: misc .owner pins the module while a file is open, and every
 * mapping holds its file, so the module cannot go while anything is
 * mapped. Each mapping also holds a reference on the ring set it maps
 * (vm_private_data, taken at mmap and in ->open, dropped in ->close), so
 * a CONFIGURE with another ring size never frees pages still mapped: the
 * old rings stay readable (online = 0, no longer written) until unmapped.
 *
 * Pages are mapped on demand by the fault handler: mmap() itself is O(1)
 * however large the rings (no page-table work under mmap_lock), and a page
 * a reader dropped with MADV_DONTNEED is simply mapped again by its next
 * access.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#include "hwsig_priv.h"

/*
 * Rewrite the control page from the active configuration, under the
 * sequence count described at struct hwsig_control_page. hwsig.lock and
 * hwsig.hp_lock held: hp_lock is also what hwsig_mmap() picks the ring set
 * under, so a reader that copied the page between two equal even counts
 * and then mapped sees either that ring set or a newer count.
 */
void hwsig_control_publish_locked(void)
{
	struct hwsig_control_page *ctl = hwsig.ctl;
	struct hwsig_config *cfg = hwsig.active;
	struct hwsig_buffers *bufs = cfg ? cfg->bufs : NULL;

	lockdep_assert_held(&hwsig.hp_lock);
	WRITE_ONCE(ctl->seq, ctl->seq + 1);
	/*
	 * (G) pairs with the reader's read barrier after its copy (H): a
	 * reader that copied any field written below sees the odd count in
	 * its second load and retries.
	 */
	smp_wmb();
	WRITE_ONCE(ctl->ring_set, bufs ? bufs->id : 0);
	WRITE_ONCE(ctl->mmap_size, hwsig_mmap_size(bufs));
	WRITE_ONCE(ctl->ring_stride, bufs ? bufs->ring_stride : 0);
	WRITE_ONCE(ctl->ring_records, bufs ? bufs->ring_records : 0);
	WRITE_ONCE(ctl->nr_events, cfg ? cfg->nr_events : 0);
	WRITE_ONCE(ctl->sample_interval_ns, cfg ? cfg->interval_ns : 0);
	WRITE_ONCE(ctl->running, hwsig.running);
	WRITE_ONCE(ctl->config_generation, hwsig.generation);
	/*
	 * (I) pairs with the reader's load-acquire of seq before its copy (J):
	 * a reader that sees the even count sees every field written above.
	 */
	smp_wmb();
	WRITE_ONCE(ctl->seq, ctl->seq + 1);
}

static void hwsig_control_init(void)
{
	struct hwsig_control_page *ctl = hwsig.ctl;

	ctl->abi_version = HWSIG_ABI_VERSION;
	ctl->compat_version = HWSIG_ABI_COMPAT_VERSION;
	ctl->page_size = PAGE_SIZE;
	ctl->nr_cpu_ids = nr_cpu_ids;
	ctl->ring_offset = PAGE_SIZE;
	ctl->data_offset = PAGE_SIZE;
	ctl->record_size = sizeof(struct hwsig_record);
	ctl->clock_id = CLOCK_MONOTONIC;
	raw_spin_lock_irq(&hwsig.hp_lock);
	hwsig_control_publish_locked();
	raw_spin_unlock_irq(&hwsig.hp_lock);
}

static void hwsig_vm_open(struct vm_area_struct *vma)
{
	struct hwsig_buffers *bufs = vma->vm_private_data;

	if (bufs)
		hwsig_buffers_get(bufs);
}

static void hwsig_vm_close(struct vm_area_struct *vma)
{
	struct hwsig_buffers *bufs = vma->vm_private_data;

	if (bufs)
		hwsig_buffers_put(bufs);
}

/* The page at byte offset off of the mapping; off is within mmap_size. */
static struct page *hwsig_mmap_page(struct hwsig_buffers *bufs, u64 off)
{
	u64 ring, in_ring;

	if (off < PAGE_SIZE)
		return hwsig.control_page;
	ring = div64_u64_rem(off - PAGE_SIZE, bufs->ring_stride, &in_ring);
	if (!bufs->rings[ring].pages)
		return hwsig.hole_page;
	return bufs->rings[ring].pages[in_ring >> PAGE_SHIFT];
}

/*
 * Maps one page at the faulting address: the control page, a ring page of
 * the ring set this mapping holds, or the zero page of a CPU id with no
 * ring. The mapping is read-only (hwsig_mmap()), so this is never a
 * write fault.
 */
static vm_fault_t hwsig_vm_fault(struct vm_fault *vmf)
{
	struct hwsig_buffers *bufs = vmf->vma->vm_private_data;
	u64 off = (u64)vmf->pgoff << PAGE_SHIFT;

	if (off >= hwsig_mmap_size(bufs))
		return VM_FAULT_SIGBUS;
	vmf->page = hwsig_mmap_page(bufs, off);
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct hwsig_vm_ops = {
	.open = hwsig_vm_open,
	.close = hwsig_vm_close,
	.fault = hwsig_vm_fault,
};

static int hwsig_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hwsig_buffers *bufs = NULL;
	unsigned long flags, pages;
	int err;

	/*
	 * Everything is read-only and nothing is code, for ever: no write or
	 * exec now, none via mprotect.
	 */
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);

	raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
	if (hwsig.active) {
		bufs = hwsig.active->bufs;
		hwsig_buffers_get(bufs);
	}
	raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);

	pages = hwsig_mmap_size(bufs) >> PAGE_SHIFT;
	if (vma->vm_pgoff > pages || vma_pages(vma) > pages - vma->vm_pgoff) {
		err = -EINVAL;
		goto err_put_bufs;
	}
	vma->vm_private_data = bufs;
	vma->vm_ops = &hwsig_vm_ops;
	return 0;

err_put_bufs:
	/* ->close is not called for a mapping that failed. */
	if (bufs)
		hwsig_buffers_put(bufs);
	return err;
}

static const struct file_operations hwsig_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.mmap = hwsig_mmap,
};

static struct miscdevice hwsig_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = HWSIG_DEVICE_NAME,
	.fops = &hwsig_fops,
	.mode = 0600,
};

int hwsig_chardev_init(void)
{
	int err;

	hwsig.control_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!hwsig.control_page)
		return -ENOMEM;
	hwsig.ctl = page_address(hwsig.control_page);
	hwsig_control_init();

	hwsig.hole_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!hwsig.hole_page) {
		err = -ENOMEM;
		goto err_free_control_page;
	}

	err = misc_register(&hwsig_misc);
	if (err)
		goto err_free_hole_page;
	return 0;

err_free_hole_page:
	__free_page(hwsig.hole_page);
err_free_control_page:
	__free_page(hwsig.control_page);
	return err;
}

/*
 * Nothing is mapped any more (a mapping pins the module); a page a
 * mapping once faulted in held its own reference until it was unmapped.
 */
void hwsig_chardev_exit(void)
{
	misc_deregister(&hwsig_misc);
	__free_page(hwsig.hole_page);
	__free_page(hwsig.control_page);
}
