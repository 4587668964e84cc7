// SPDX-License-Identifier: GPL-2.0
/*
 * Counters through the in-kernel perf API only: they are perf events like
 * perf's own, the NMI watchdog's and KVM's vPMU, so the perf core schedules
 * and multiplexes them with everything else. hwsig never touches a PMU
 * register. Counters are CPU-bound but not attr.pinned: a PMU that is
 * overcommitted multiplexes them, which time_enabled/time_running show.
 *
 * What a kernel counter bypasses, and why hwsig may (Documentation/abi.rst,
 * "Privilege"): perf_event_paranoid and the exclude_kernel/exclude_hv
 * checks of perf_event_open() are not applied to in-kernel counters, and
 * neither is the LSM's perf_event_open hook. Every control operation needs
 * CAP_PERFMON or CAP_SYS_ADMIN of both the socket's opener and its writer,
 * which is what perf_event_open() asks for counting the same events
 * system-wide; the LSM's perf_event_alloc hook still sees each counter,
 * with the configuring caller's credentials; and only counting PMUs are
 * accepted: no tracepoint, kprobe, uprobe or breakpoint event, which could
 * name kernel addresses or run code.
 */
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/perf_event.h>
#include <linux/sched/isolation.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "hwsig_priv.h"

/*
 * PMUs with a dynamic type that hwsig counts on: the core PMUs of hybrid
 * CPUs and the memory-controller uncore PMUs the reader resolves
 * (userspace/lib/pmu/pmu_plan_uncore.cpp). A name matches an entry exactly, or
 * starts with an entry that ends in '_' (uncore_imc_0,
 * uncore_imc_free_running_1, amd_umc_3).
 */
static const char *const hwsig_dynamic_pmus[] = {
	"cpu",
	"cpu_core",
	"cpu_atom",
	"uncore_imc",
	"uncore_imc_",
	"amd_umc_",
	"amd_df",
};

static bool hwsig_dynamic_pmu_allowed(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hwsig_dynamic_pmus); i++) {
		const char *ok = hwsig_dynamic_pmus[i];
		size_t len = strlen(ok);

		if (ok[len - 1] == '_' ? !strncmp(name, ok, len) : !strcmp(name, ok))
			return true;
	}
	return false;
}

/*
 * The PMU devices of /sys/bus/event_source carry their struct pmu as
 * driver data (perf's pmu_dev_alloc()); the bus itself is not exported,
 * so it is reached through the device of the software PMU.
 */
static int hwsig_pmu_dev_match(struct device *dev, const void *data)
{
	const struct pmu *pmu = dev_get_drvdata(dev);

	return pmu && pmu->type == *(const u32 *)data;
}

/* The name of the PMU with this dynamic type; -ENOENT when none has it. */
int hwsig_pmu_name(u32 type, char *name, size_t len)
{
	struct device *dev;

	if (!hwsig.pmu_dev)
		return -ENOENT;
	dev = bus_find_device(hwsig.pmu_dev->bus, NULL, &type, hwsig_pmu_dev_match);
	if (!dev)
		return -ENOENT;
	strscpy(name, dev_name(dev), len);
	put_device(dev);
	return 0;
}

/*
 * Accepts the generic counting types and the dynamic PMUs listed above;
 * refuses everything else before any counter is created.
 */
int hwsig_pmu_type_check(u32 type, const struct nlattr *attr,
			 struct netlink_ext_ack *extack)
{
	char name[32];

	switch (type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_SOFTWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return 0;
	case PERF_TYPE_TRACEPOINT:
	case PERF_TYPE_BREAKPOINT:
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "hwsig: tracepoint and breakpoint events are not accepted");
		return -EOPNOTSUPP;
	}
	if (hwsig_pmu_name(type, name, sizeof(name))) {
		NL_SET_BAD_ATTR(extack, attr);
		hwsig_err_fmt(extack, "hwsig: no PMU has this type",
			      "hwsig: no PMU has type %u", type);
		return -ENOENT;
	}
	if (!hwsig_dynamic_pmu_allowed(name)) {
		NL_SET_BAD_ATTR(extack, attr);
		hwsig_err_fmt(extack,
			      "hwsig: PMU not accepted: only core and memory-controller PMUs",
			      "hwsig: PMU %s (type %u) not accepted: only core and memory-controller PMUs",
			      name, type);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Finds the PMU bus through the software PMU's device (see hwsig_pmu_name()). */
int hwsig_pmu_init(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
		.disabled = 1,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, raw_smp_processor_id(),
						 NULL, NULL, NULL);
	if (!IS_ERR(event)) {
		if (event->pmu->dev && event->pmu->dev->bus &&
		    !strcmp(event->pmu->dev->bus->name, "event_source"))
			hwsig.pmu_dev = get_device(event->pmu->dev);
		perf_event_release_kernel(event);
	}
	/* Not fatal: the generic types still work. */
	if (!hwsig.pmu_dev)
		pr_warn("hwsig: PMU bus not found: PMUs with a dynamic type are refused\n");
	return 0;
}

void hwsig_pmu_exit(void)
{
	put_device(hwsig.pmu_dev);
	hwsig.pmu_dev = NULL;
}

/*
 * nohz_full and isolated CPUs are where a hypervisor host runs its vCPUs:
 * they get no timer and no counter unless the configuration asks.
 */
bool hwsig_cpu_sampled(const struct hwsig_config *cfg, unsigned int cpu)
{
	return (cfg->flags & HWSIG_CONFIG_F_ISOLATED_CPUS) ||
	       (housekeeping_cpu(cpu, HK_TYPE_TICK) &&
		housekeeping_cpu(cpu, HK_TYPE_DOMAIN));
}

bool hwsig_event_targets(const struct hwsig_event_spec *spec, unsigned int cpu)
{
	return spec->cpu == HWSIG_EVENT_ALL_CPUS || spec->cpu == (s32)cpu;
}

/*
 * Errors that say "this PMU cannot count this here" (no such hardware,
 * unsupported or busy counter, config the PMU refuses, CPU gone): they
 * are reported per event and CPU and the rest keeps counting. Anything
 * else (no memory, permission) fails the whole configuration.
 */
static bool hwsig_error_is_local(int err)
{
	switch (err) {
	case -ENOENT:
	case -EOPNOTSUPP:
	case -EBUSY:
	case -EINVAL:
	case -ENODEV:
		return true;
	default:
		return false;
	}
}

static void hwsig_event_attr(const struct hwsig_event_spec *spec,
			     struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = spec->type;
	attr->config = spec->config;
	attr->config1 = spec->config1;
	attr->config2 = spec->config2;
}

/*
 * A counter for event i on pc->cpu, created with the configuring caller's
 * credentials; disabled unless the configuration is counting (started).
 */
static struct perf_event *hwsig_pmu_create(struct hwsig_config *cfg,
					   struct hwsig_cpu *pc, u32 i)
{
	struct perf_event_attr attr;
	struct perf_event *event;
	const struct cred *old;

	hwsig_event_attr(&cfg->events[i], &attr);
	attr.disabled = !cfg->counting;
	old = override_creds(cfg->cred);
	event = perf_event_create_kernel_counter(&attr, pc->cpu, NULL, NULL, NULL);
	revert_creds(old);
	return event;
}

/*
 * Some uncore PMUs move an event to the CPU that owns the box; it could
 * then never be read from this CPU's timer. Userspace must pass a CPU from
 * the PMU's cpumask. Publishes the counter (the sampling work may already
 * run on this CPU when a busy counter is retried) or records the error.
 */
static void hwsig_pmu_install(struct hwsig_cpu *pc, u32 i, struct perf_event *event)
{
	if (event->cpu != (int)pc->cpu) {
		perf_event_release_kernel(event);
		WRITE_ONCE(pc->error[i], -EINVAL);
		return;
	}
	WRITE_ONCE(pc->error[i], 0);
	/* Pairs with READ_ONCE() in hwsig_pmu_read(): the event is set up. */
	smp_store_release(&pc->events[i], event);
}

/*
 * Open every event that targets pc->cpu. Process context, hwsig.lock held,
 * the hotplug lock NOT held (see hwsig_priv.h). Returns 0 or the error
 * that fails the configuration; per-CPU failures land in pc->error[].
 */
int hwsig_pmu_open_cpu(struct hwsig_config *cfg, struct hwsig_cpu *pc,
		       const struct hwsig_config_req *req,
		       struct netlink_ext_ack *extack)
{
	struct perf_event *event;
	u32 i;

	for (i = 0; i < cfg->nr_events; i++) {
		const struct hwsig_event_spec *spec = &cfg->events[i];
		int err;

		if (!hwsig_event_targets(spec, pc->cpu))
			continue;
		cfg->pmu_tried |= BIT(i);
		event = hwsig_pmu_create(cfg, pc, i);
		if (IS_ERR(event)) {
			err = PTR_ERR(event);
			pc->error[i] = err;
			if (err != -ENOENT)
				cfg->pmu_found |= BIT(i);
			/* Without a request (hotplug) every error is local. */
			if (hwsig_error_is_local(err) || !req)
				continue;
			if (req)
				NL_SET_BAD_ATTR(extack, req->event_attr[i]);
			hwsig_err_fmt(extack, "hwsig: creating a counter failed",
				      "hwsig: event %s on CPU %u: error %d",
				      spec->name, pc->cpu, err);
			return err;
		}
		cfg->pmu_found |= BIT(i);
		hwsig_pmu_install(pc, i, event);
	}
	return 0;
}

/*
 * Open again the counters of pc->cpu that were busy (-EBUSY: an exclusive
 * PMU held by another user, e.g. the configuration this one replaced).
 * Process context, hwsig.lock held; the CPU may be sampling.
 */
void hwsig_pmu_retry_busy(struct hwsig_config *cfg, struct hwsig_cpu *pc)
{
	struct perf_event *event;
	u32 i;

	for (i = 0; i < cfg->nr_events; i++) {
		if (pc->events[i] || READ_ONCE(pc->error[i]) != -EBUSY ||
		    !hwsig_event_targets(&cfg->events[i], pc->cpu))
			continue;
		event = hwsig_pmu_create(cfg, pc, i);
		if (IS_ERR(event)) {
			WRITE_ONCE(pc->error[i], PTR_ERR(event));
			continue;
		}
		hwsig_pmu_install(pc, i, event);
	}
}

/* Process context, hwsig.lock held, pc's timer stopped. */
void hwsig_pmu_close_cpu(struct hwsig_cpu *pc)
{
	u32 i;

	for (i = 0; i < HWSIG_MAX_EVENTS; i++) {
		if (!pc->events[i])
			continue;
		perf_event_release_kernel(pc->events[i]);
		pc->events[i] = NULL;
	}
	pc->opened = false;
	pc->isolated = false;
}

/*
 * STOP disables every counter, START enables them again: a stopped
 * configuration neither counts nor holds a hardware counter another user
 * of the PMU could schedule (an exclusive PMU stays claimed: perf counts
 * its disabled events too). Process context, hwsig.lock held, pc's
 * sampling stopped before a disable: a disabled event reads as OFF.
 */
void hwsig_pmu_enable_cpu(struct hwsig_cpu *pc, bool enable)
{
	u32 i;

	for (i = 0; i < HWSIG_MAX_EVENTS; i++) {
		if (!pc->events[i])
			continue;
		if (enable)
			perf_event_enable(pc->events[i]);
		else
			perf_event_disable(pc->events[i]);
	}
}

/*
 * Read every open counter of this CPU into pc's last sample. Process
 * context (the sampling work): perf_event_read_local(), the irq-safe
 * reader, is not exported to modules, so this uses perf_event_read_value(),
 * which brings the count and both times up to date on the event's CPU.
 */
void hwsig_pmu_read(struct hwsig_cpu *pc)
{
	u32 valid = 0;
	u32 i;

	for (i = 0; i < HWSIG_MAX_EVENTS; i++) {
		/* Pairs with smp_store_release() in hwsig_pmu_install(). */
		struct perf_event *event = smp_load_acquire(&pc->events[i]);
		u64 value = 0, enabled = 0, running = 0;
		int err = 0;

		if (!event) {
			pc->value[i] = 0;
			pc->enabled[i] = 0;
			pc->running[i] = 0;
			continue;
		}
		value = perf_event_read_value(event, &enabled, &running);
		/* ERROR: a pinned event that could not be scheduled; OFF: detached. */
		switch (READ_ONCE(event->state)) {
		case PERF_EVENT_STATE_ERROR:
			err = -EBUSY;
			break;
		case PERF_EVENT_STATE_OFF:
		case PERF_EVENT_STATE_EXIT:
		case PERF_EVENT_STATE_DEAD:
			err = -ENODEV;
			break;
		default:
			valid |= BIT(i);
			break;
		}
		WRITE_ONCE(pc->error[i], err);
		WRITE_ONCE(pc->value[i], value);
		WRITE_ONCE(pc->enabled[i], enabled);
		WRITE_ONCE(pc->running[i], running);
	}
	WRITE_ONCE(pc->valid_mask, valid);
}
