// SPDX-License-Identifier: GPL-2.0
/*
 * Counters through the in-kernel perf API only: they are perf events like
 * perf's own, the NMI watchdog's and KVM's vPMU, so the perf core schedules
 * and multiplexes them with everything else. hwsig never touches a PMU
 * register. Counters are CPU-bound but not attr.pinned: a PMU that is
 * overcommitted multiplexes them, which time_enabled/time_running show.
 */
#include <linux/errno.h>
#include <linux/perf_event.h>
#include <linux/smp.h>

#include "hwsig_priv.h"

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
 * Open every event that targets pc->cpu. Process context, hwsig.lock held,
 * the hotplug lock NOT held (see hwsig_priv.h). Returns 0 or the error
 * that fails the configuration; per-CPU failures land in pc->error[].
 */
int hwsig_pmu_open_cpu(struct hwsig_config *cfg, struct hwsig_cpu *pc,
		       const struct hwsig_config_req *req,
		       struct netlink_ext_ack *extack)
{
	struct perf_event_attr attr;
	struct perf_event *event;
	u32 i;

	for (i = 0; i < cfg->nr_events; i++) {
		const struct hwsig_event_spec *spec = &cfg->events[i];
		int err;

		if (!hwsig_event_targets(spec, pc->cpu))
			continue;
		hwsig_event_attr(spec, &attr);
		cfg->pmu_tried |= BIT(i);
		event = perf_event_create_kernel_counter(&attr, pc->cpu, NULL,
							 NULL, NULL);
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
		/*
		 * Some uncore PMUs move an event to the CPU that owns the
		 * box; it could then never be read from this CPU's timer.
		 * Userspace must pass a CPU from the PMU's cpumask.
		 */
		if (event->cpu != (int)pc->cpu) {
			perf_event_release_kernel(event);
			pc->error[i] = -EINVAL;
			continue;
		}
		pc->events[i] = event;
		pc->error[i] = 0;
	}
	return 0;
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
		struct perf_event *event = pc->events[i];
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
