// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug: counters and timers follow CPUs going offline and online.
 *
 * The callbacks run on the CPU being plugged, in the hotplug thread, while
 * the hotplug lock is held for writing. They must not create or release
 * perf events (that takes cpus_read_lock() via static keys: deadlock) nor
 * take hwsig.lock (held by whoever is creating events). So they only
 * record the CPU's state, stop its timer when it goes, and leave opening
 * and releasing events to the reconcile work. Records of a CPU that comes
 * back start with HWSIG_RECORD_F_FIRST, so the gap is visible.
 *
 * The reconcile work is queued on system_unbound_wq: queued on a per-CPU
 * workqueue from the online callback it would run on the CPU that just
 * came up, a nohz_full one included. Unbound workers run only on
 * housekeeping CPUs (the workqueue cpumask leaves out nohz_full and
 * isolcpus= CPUs).
 */
#include <linux/cpuhotplug.h>

#include "hwsig_priv.h"

/*
 * Bumped by every hotplug callback of a CPU: events opened at an older
 * epoch belong to an earlier life of the CPU and are dead.
 */
DEFINE_PER_CPU(unsigned long, hwsig_hp_epoch);

static int hwsig_cpu_online(unsigned int cpu)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
	cpumask_set_cpu(cpu, &hwsig.live);
	per_cpu(hwsig_hp_epoch, cpu)++;
	raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);
	queue_work(system_unbound_wq, &hwsig.reconcile);
	return 0;
}

static int hwsig_cpu_offline(unsigned int cpu)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
	cpumask_clear_cpu(cpu, &hwsig.live);
	per_cpu(hwsig_hp_epoch, cpu)++;
	/* Our own CPU with irqs off: the timer callback cannot be running. */
	if (hwsig.active)
		hwsig_sample_stop_cpu_atomic(per_cpu_ptr(hwsig.active->cpus, cpu));
	raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);
	queue_work(system_unbound_wq, &hwsig.reconcile);
	return 0;
}

static void hwsig_reconcile_work(struct work_struct *work)
{
	mutex_lock(&hwsig.lock);
	if (hwsig.active)
		hwsig_config_reconcile(hwsig.active);
	mutex_unlock(&hwsig.lock);
}

int hwsig_hotplug_init(void)
{
	int ret;

	INIT_WORK(&hwsig.reconcile, hwsig_reconcile_work);
	/* Runs hwsig_cpu_online() on every CPU already online. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "hwsig:online",
				hwsig_cpu_online, hwsig_cpu_offline);
	if (ret < 0)
		return ret;
	hwsig.hp_state = ret;
	return 0;
}

/* Runs hwsig_cpu_offline() on every online CPU: all timers stop. */
void hwsig_hotplug_exit(void)
{
	cpuhp_remove_state(hwsig.hp_state);
	cancel_work_sync(&hwsig.reconcile);
}
