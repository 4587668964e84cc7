// SPDX-License-Identifier: GPL-2.0
/*
 * A test PMU for the guest cases: CPU-bound counting events only, and
 * exclusive (PERF_PMU_CAP_EXCLUSIVE, like Intel PT or BTS): a second event
 * on a CPU that already has one is refused with -EBUSY. The guest has no
 * hardware PMU, so this is how the ebusy-retry case gets a counter the old
 * configuration keeps busy. Named like a memory-controller uncore PMU
 * (uncore_imc_*), one of the dynamic PMUs hwsig.ko accepts. Each read adds
 * one to the count.
 *
 * With name=cpu_atom cpu=N exclusive=0 it stands in for a hybrid CPU's
 * E-core PMU instead: events on any CPU but N are refused with -ENOENT,
 * as x86's hybrid PMUs refuse a CPU outside their supported_cpus.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>

static char *name = "uncore_imc_hwsigtest";
module_param(name, charp, 0444);
MODULE_PARM_DESC(name, "PMU name (default uncore_imc_hwsigtest)");
static int only_cpu = -1;
module_param_named(cpu, only_cpu, int, 0444);
MODULE_PARM_DESC(cpu, "the one CPU events may be created on (-1: every CPU)");
static bool exclusive = true;
module_param(exclusive, bool, 0444);
MODULE_PARM_DESC(exclusive, "PERF_PMU_CAP_EXCLUSIVE (default on)");

static struct pmu excl_pmu;

static int excl_event_init(struct perf_event *event)
{
	if (event->attr.type != excl_pmu.type)
		return -ENOENT;
	if (only_cpu >= 0 && event->cpu != only_cpu)
		return -ENOENT;
	if (is_sampling_event(event) || event->cpu < 0)
		return -EINVAL;
	return 0;
}

static void excl_read(struct perf_event *event)
{
	local64_inc(&event->count);
}

static void excl_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
}

static void excl_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
}

static int excl_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		excl_start(event, flags);
	return 0;
}

static void excl_del(struct perf_event *event, int flags)
{
	excl_stop(event, flags);
}

static struct pmu excl_pmu = {
	.module = THIS_MODULE,
	.task_ctx_nr = perf_invalid_context,
	.capabilities = PERF_PMU_CAP_NO_INTERRUPT,
	.event_init = excl_event_init,
	.add = excl_add,
	.del = excl_del,
	.start = excl_start,
	.stop = excl_stop,
	.read = excl_read,
};

static int __init excl_init(void)
{
	if (exclusive)
		excl_pmu.capabilities |= PERF_PMU_CAP_EXCLUSIVE;
	return perf_pmu_register(&excl_pmu, name, -1);
}

static void __exit excl_exit(void)
{
	perf_pmu_unregister(&excl_pmu);
}

module_init(excl_init);
module_exit(excl_exit);
MODULE_DESCRIPTION("hwsig guest test: an exclusive counting PMU");
MODULE_LICENSE("GPL");
