// SPDX-License-Identifier: GPL-2.0
/*
 * hwsig.ko: per-CPU hardware counter sampling into mmap-able rings.
 *
 * Userspace configures events over generic netlink (netlink.c); a pinned
 * hrtimer per CPU (sample.c) has that CPU's work read them through the perf
 * API (pmu.c) and append records to that CPU's ring (ring.c), which userspace maps from
 * /dev/hwsig (chardev.c). hotplug.c follows CPUs; config.c swaps whole
 * configurations. Documentation/abi.rst describes the contract.
 */
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/module.h>
#include <net/genetlink.h>

#include "hwsig_priv.h"

struct hwsig_state hwsig = {
	.lock = __MUTEX_INITIALIZER(hwsig.lock),
	.hp_lock = __RAW_SPIN_LOCK_UNLOCKED(hwsig.hp_lock),
};

/*
 * Cap on the bytes of all ring sets alive at once (the configured one, the
 * one a CONFIGURE builds beside it, old ones still mapped). 0: the
 * default, min(1 GiB, RAM / 8). Fixed at load: root sets it with modprobe.
 */
static unsigned long ring_bytes_max;
module_param(ring_bytes_max, ulong, 0444);
MODULE_PARM_DESC(ring_bytes_max, "cap on all ring memory in bytes (0: min(1 GiB, RAM/8))");

static unsigned long hwsig_ring_bytes_default(void)
{
	return min_t(unsigned long, SZ_1G, (totalram_pages() << PAGE_SHIFT) / 8);
}

static int __init hwsig_init(void)
{
	int err;

	hwsig.ring_bytes_max = hwsig_ring_bytes_default();
	if (ring_bytes_max)
		hwsig.ring_bytes_max = ring_bytes_max;
	hwsig.wq = alloc_workqueue("hwsig", WQ_HIGHPRI | WQ_PERCPU, 0);
	if (!hwsig.wq)
		return -ENOMEM;
	err = hwsig_pmu_init();
	if (err)
		goto err_destroy_wq;
	err = hwsig_chardev_init();
	if (err)
		goto err_pmu_exit;
	err = hwsig_hotplug_init();
	if (err)
		goto err_chardev_exit;
	err = hwsig_netlink_init();
	if (err)
		goto err_hotplug_exit;
	pr_info("hwsig %s: /dev/%s, generic netlink family %s, ABI %u\n",
		HWSIG_VERSION, HWSIG_DEVICE_NAME, HWSIG_GENL_NAME, HWSIG_ABI_VERSION);
	return 0;

err_hotplug_exit:
	hwsig_hotplug_exit();
err_chardev_exit:
	hwsig_chardev_exit();
err_pmu_exit:
	hwsig_pmu_exit();
err_destroy_wq:
	destroy_workqueue(hwsig.wq);
	return err;
}

/*
 * No file is open and nothing is mapped (each holds a module reference),
 * so after the control plane and the hotplug callbacks are gone nothing
 * else can reach the configuration.
 */
static void __exit hwsig_exit(void)
{
	hwsig_netlink_exit();
	hwsig_hotplug_exit();

	mutex_lock(&hwsig.lock);
	if (hwsig.active) {
		hwsig_config_free(hwsig.active);
		hwsig.active = NULL;
	}
	mutex_unlock(&hwsig.lock);

	hwsig_chardev_exit();
	hwsig_pmu_exit();
	destroy_workqueue(hwsig.wq);
}

module_init(hwsig_init);
module_exit(hwsig_exit);

MODULE_DESCRIPTION("hwsig: per-CPU hardware counter sampling into mmap-able rings");
MODULE_LICENSE("GPL");
MODULE_VERSION(HWSIG_VERSION);
MODULE_ALIAS_GENL_FAMILY(HWSIG_GENL_NAME);
