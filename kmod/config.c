// SPDX-License-Identifier: GPL-2.0
/*
 * Configurations: built complete on the side, swapped in whole.
 *
 * CONFIGURE builds a new struct hwsig_config (per-CPU state, rings, every
 * counter on every live CPU) while the old one keeps sampling. Any failure
 * frees everything built so far and leaves the old configuration running
 * untouched; success swaps the pointer under hp_lock and frees the old one.
 * Rings of the same geometry are reused, so mappings stay valid; rings of
 * another geometry are new, and the old ones live on (marked offline) for
 * as long as a mapping holds them.
 *
 * Every counter is created with the credentials of the caller that sent
 * the CONFIGURE (cfg->cred), whichever context opens it.
 */
#include <linux/cred.h>
#include <linux/errno.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "hwsig_priv.h"

void hwsig_cpu_snapshot(unsigned int cpu, bool *live, unsigned long *epoch)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
	*live = cpumask_test_cpu(cpu, &hwsig.live);
	*epoch = per_cpu(hwsig_hp_epoch, cpu);
	raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);
}

/* The CPUs between the online and the offline callback, all at one moment. */
void hwsig_live_snapshot(struct cpumask *mask)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
	cpumask_copy(mask, &hwsig.live);
	raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);
}

static void hwsig_config_close_all(struct hwsig_config *cfg)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		hwsig_pmu_close_cpu(per_cpu_ptr(cfg->cpus, cpu));
		/* Every release waits for its CPU: hundreds of CPUs add up. */
		cond_resched();
	}
}

/* hwsig.lock held; cfg is not (or no longer) hwsig.active. */
void hwsig_config_free(struct hwsig_config *cfg)
{
	hwsig_sample_stop_all(cfg);
	hwsig_config_close_all(cfg);
	hwsig_buffers_put(cfg->bufs);
	free_percpu(cfg->cpus);
	put_cred(cfg->cred);
	kfree(cfg);
}

/*
 * Why no CPU tried could count dynamic event i: its PMU is gone (-ENOENT),
 * or it counts on none of the online CPUs hwsig samples (-ENODEV).
 */
static int hwsig_config_no_cpu(const struct hwsig_config *cfg, u32 i,
			       const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	const struct hwsig_event_spec *spec = &cfg->events[i];
	char name[32];

	NL_SET_BAD_ATTR(extack, attr);
	if (hwsig_pmu_name(spec->type, name, sizeof(name))) {
		hwsig_err_fmt(extack, "hwsig: no PMU has this type",
			      "hwsig: event %s: no PMU has type %u", spec->name, spec->type);
		return -ENOENT;
	}
	/* Formatted messages end at 80 bytes: the hint is in abi.rst. */
	hwsig_err_fmt(extack,
		      "hwsig: the event's PMU counts on no online CPU hwsig samples",
		      "hwsig: %s: PMU %s counts on no online CPU hwsig samples",
		      spec->name, name);
	return -ENODEV;
}

/* Open the events on every live CPU; fails only on a configuration error. */
static int hwsig_config_open_all(struct hwsig_config *cfg,
				 const struct hwsig_config_req *req,
				 struct netlink_ext_ack *extack)
{
	unsigned int cpu;
	u32 i;
	int err;

	for_each_possible_cpu(cpu) {
		struct hwsig_cpu *pc = per_cpu_ptr(cfg->cpus, cpu);
		unsigned long epoch;
		bool live;

		hwsig_cpu_snapshot(cpu, &live, &epoch);
		if (!live)
			continue;
		pc->opened = true;
		pc->events_epoch = epoch;
		if (!hwsig_cpu_sampled(cfg, cpu)) {
			pc->isolated = true;
			continue;
		}
		err = hwsig_pmu_open_cpu(cfg, pc, req, extack);
		if (err)
			return err;
		cond_resched();
	}

	/*
	 * perf answers -ENOENT both for a type no PMU claims and for a
	 * generic event (HARDWARE, HW_CACHE, RAW) the CPU's PMU lacks. The
	 * generic types always exist, so -ENOENT there is a per-CPU status.
	 * A dynamic type that every CPU tried answered -ENOENT for either
	 * lost its PMU since the type check, or has a PMU that counts only
	 * on CPUs that were not tried: a hybrid CPU's cpu_atom refuses its
	 * P-cores, and every E-core may be offline or isolated.
	 * (An event whose one CPU went offline meanwhile was tried nowhere.)
	 */
	for (i = 0; i < cfg->nr_events; i++) {
		if (cfg->events[i].type < PERF_TYPE_MAX || (cfg->pmu_found & BIT(i)) ||
		    !(cfg->pmu_tried & BIT(i)))
			continue;
		err = hwsig_config_no_cpu(cfg, i, req->event_attr[i], extack);
		if (err)
			return err;
	}
	return 0;
}

static struct hwsig_config *hwsig_config_build(const struct hwsig_config_req *req,
					       struct netlink_ext_ack *extack)
{
	struct hwsig_buffers *current_bufs;
	struct hwsig_config *cfg;
	unsigned int cpu;
	int err;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return ERR_PTR(-ENOMEM);
	cfg->interval_ns = req->interval_ns;
	cfg->flags = req->flags;
	cfg->cred = get_current_cred();
	cfg->generation = hwsig.generation + 1;
	/* Built while sampling: its counters count from the start. */
	cfg->counting = hwsig.running;
	cfg->nr_events = req->nr_events;
	memcpy(cfg->events, req->events, sizeof(cfg->events));

	cfg->cpus = alloc_percpu(struct hwsig_cpu);
	if (!cfg->cpus) {
		err = -ENOMEM;
		goto err_put_cred;
	}
	for_each_possible_cpu(cpu) {
		struct hwsig_cpu *pc = per_cpu_ptr(cfg->cpus, cpu);

		pc->cfg = cfg;
		pc->cpu = cpu;
		hwsig_sampler_init(pc);
	}

	current_bufs = hwsig.active ? hwsig.active->bufs : NULL;
	if (current_bufs && current_bufs->ring_records == req->ring_records) {
		hwsig_buffers_get(current_bufs);
		cfg->bufs = current_bufs;
	} else {
		cfg->bufs = hwsig_buffers_alloc(req->ring_records, extack);
		if (IS_ERR(cfg->bufs)) {
			err = PTR_ERR(cfg->bufs);
			goto err_free_cpus;
		}
	}

	err = hwsig_config_open_all(cfg, req, extack);
	if (err)
		goto err_close_events;
	return cfg;

err_close_events:
	hwsig_config_close_all(cfg);
	hwsig_buffers_put(cfg->bufs);
err_free_cpus:
	free_percpu(cfg->cpus);
err_put_cred:
	put_cred(cfg->cred);
	kfree(cfg);
	return ERR_PTR(err);
}

int hwsig_configure(const struct hwsig_config_req *req, struct netlink_ext_ack *extack)
{
	struct hwsig_config *new, *old;
	unsigned long flags;
	bool running;

	mutex_lock(&hwsig.lock);
	new = hwsig_config_build(req, extack);
	if (IS_ERR(new)) {
		mutex_unlock(&hwsig.lock);
		return PTR_ERR(new);
	}

	old = hwsig.active;
	running = hwsig.running;
	if (old)
		hwsig_sample_stop_all(old);

	raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
	hwsig.active = new;
	hwsig.generation = new->generation;
	hwsig_control_publish_locked();
	raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);

	if (running)
		hwsig_sample_start_all(new);
	if (old)
		hwsig_config_free(old);
	/*
	 * Counters the old configuration kept busy (an exclusive PMU) are
	 * free now: open them, or sending the same configuration again
	 * would lose them for good.
	 */
	hwsig_config_reconcile(new);
	/* CPUs that came or went while the new configuration was built. */
	queue_work(system_unbound_wq, &hwsig.reconcile);
	mutex_unlock(&hwsig.lock);
	return 0;
}

/* Enable or disable every counter of cfg (see hwsig_pmu_enable_cpu()). */
static void hwsig_config_set_counting(struct hwsig_config *cfg, bool counting)
{
	unsigned int cpu;

	cfg->counting = counting;
	for_each_possible_cpu(cpu) {
		hwsig_pmu_enable_cpu(per_cpu_ptr(cfg->cpus, cpu), counting);
		cond_resched();
	}
}

int hwsig_start(struct netlink_ext_ack *extack)
{
	unsigned long flags;

	mutex_lock(&hwsig.lock);
	if (!hwsig.active) {
		mutex_unlock(&hwsig.lock);
		NL_SET_ERR_MSG(extack, "hwsig: nothing configured: send CONFIGURE first");
		return -EINVAL;
	}
	if (!hwsig.running) {
		/* Busy counters may have been released since CONFIGURE. */
		hwsig_config_reconcile(hwsig.active);
		hwsig_config_set_counting(hwsig.active, true);
		raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
		hwsig.running = true;
		hwsig_control_publish_locked();
		raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);
		hwsig_sample_start_all(hwsig.active);
	}
	mutex_unlock(&hwsig.lock);
	return 0;
}

/*
 * Timers stop, then the counters are disabled; the counters (disabled),
 * rings and the configuration stay.
 */
void hwsig_stop(void)
{
	unsigned long flags;

	mutex_lock(&hwsig.lock);
	if (hwsig.running) {
		raw_spin_lock_irqsave(&hwsig.hp_lock, flags);
		hwsig.running = false;
		hwsig_control_publish_locked();
		raw_spin_unlock_irqrestore(&hwsig.hp_lock, flags);
		hwsig_sample_stop_all(hwsig.active);
		hwsig_config_set_counting(hwsig.active, false);
	}
	mutex_unlock(&hwsig.lock);
}

/*
 * Bring cfg in line with the CPUs' hotplug state: release the events of
 * CPUs that went offline since they were opened (perf detached them, they
 * never count again), open events on CPUs that came online, and start
 * their timers when sampling; retry the counters that were busy.
 * hwsig.lock held; process context.
 */
void hwsig_config_reconcile(struct hwsig_config *cfg)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct hwsig_cpu *pc = per_cpu_ptr(cfg->cpus, cpu);
		unsigned long epoch;
		bool live;

		hwsig_cpu_snapshot(cpu, &live, &epoch);
		if (pc->opened && pc->events_epoch != epoch) {
			hwsig_sample_stop_cpu(pc);
			hwsig_pmu_close_cpu(pc);
		}
		if (live && pc->opened && !pc->isolated)
			hwsig_pmu_retry_busy(cfg, pc);
		if (!live || pc->opened)
			continue;
		pc->opened = true;
		pc->events_epoch = epoch;
		if (!hwsig_cpu_sampled(cfg, cpu)) {
			pc->isolated = true;
			continue;
		}
		/* Failures are per event and CPU here: GET_STATUS reports them. */
		hwsig_pmu_open_cpu(cfg, pc, NULL, NULL);
		if (hwsig.running)
			hwsig_sample_start_cpu(pc);
		cond_resched();
	}
}
