// SPDX-License-Identifier: GPL-2.0
/*
 * empty_hrtimer: the baseline for hwsig's sampling cost. A per-CPU pinned
 * hard-irq hrtimer at the same interval as hwsig's sampler, whose callback
 * does nothing but time itself exactly as hwsig's tick times its work. The ratio
 * of the two costs is what the VM bench reports: TCG inflates both.
 *
 * Parameters: interval_ns (at load). Read-only "stats": "ticks avg_ns max_ns"
 * over all CPUs since load.
 */
#include <linux/cpu.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/smp.h>

struct empty_cpu {
	struct hrtimer timer;
	u64 ticks;
	u64 sum_ns;
	u64 max_ns;
	bool started;
};

static DEFINE_PER_CPU(struct empty_cpu, empty_cpus);

static ulong interval_ns = 1000000;
module_param(interval_ns, ulong, 0444);
MODULE_PARM_DESC(interval_ns, "timer period in ns (>= 100000)");

static enum hrtimer_restart empty_tick(struct hrtimer *timer)
{
	struct empty_cpu *c = container_of(timer, struct empty_cpu, timer);
	u64 start, took;

	/* hwsig times its per-tick work (read the counters, publish a
	 * record) between two ktime_get_ns() calls, outside of which the
	 * timer is forwarded: here the same two calls frame no work. */
	start = ktime_get_ns();
	took = ktime_get_ns() - start;
	/* Only this CPU's callback writes its counters; stats reads race
	 * benignly (a report may be one tick stale). */
	WRITE_ONCE(c->sum_ns, c->sum_ns + took);
	WRITE_ONCE(c->ticks, c->ticks + 1);
	if (took > c->max_ns)
		WRITE_ONCE(c->max_ns, took);
	hrtimer_forward_now(timer, ns_to_ktime(interval_ns));
	return HRTIMER_RESTART;
}

static void empty_start_this_cpu(void *unused)
{
	struct empty_cpu *c = this_cpu_ptr(&empty_cpus);

	hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	c->timer.function = empty_tick;
	c->started = true;
	hrtimer_start(&c->timer, ns_to_ktime(interval_ns), HRTIMER_MODE_REL_PINNED_HARD);
}

static int stats_get(char *buf, const struct kernel_param *kp)
{
	u64 ticks = 0, sum = 0, max = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct empty_cpu *c = per_cpu_ptr(&empty_cpus, cpu);

		ticks += READ_ONCE(c->ticks);
		sum += READ_ONCE(c->sum_ns);
		max = max(max, READ_ONCE(c->max_ns));
	}
	return sysfs_emit(buf, "%llu %llu %llu\n", ticks, ticks ? div64_u64(sum, ticks) : 0, max);
}

static const struct kernel_param_ops stats_ops = { .get = stats_get };
module_param_cb(stats, &stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "ticks avg_ns max_ns over all CPUs");

static int __init empty_init(void)
{
	if (interval_ns < 100000)
		return -EINVAL;
	cpus_read_lock();
	on_each_cpu(empty_start_this_cpu, NULL, 1);
	cpus_read_unlock();
	return 0;
}

static void __exit empty_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct empty_cpu *c = per_cpu_ptr(&empty_cpus, cpu);

		if (c->started)
			hrtimer_cancel(&c->timer);
	}
}

module_init(empty_init);
module_exit(empty_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Empty per-CPU hrtimer: the baseline for hwsig's sampling cost");
