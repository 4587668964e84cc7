// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler. One pinned hrtimer per CPU, in hard irq mode so that it
 * keeps its period on PREEMPT_RT too, is the clock: each tick queues the
 * CPU's sampling work on that same CPU, which reads the counters and
 * appends one record. The reading cannot happen in the timer itself:
 * perf_event_read_local(), the only irq-safe reader, is not exported to
 * modules (see pmu.c). A work item never runs concurrently with itself, so
 * each ring still has exactly one writer. A tick that finds the previous
 * work still pending adds nothing: the record is skipped, and the gap
 * shows in time_ns.
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "hwsig_priv.h"

static void hwsig_stat_add(struct hwsig_stat *stat, u64 ns)
{
	WRITE_ONCE(stat->sum_ns, stat->sum_ns + ns);
	if (ns > stat->max_ns)
		WRITE_ONCE(stat->max_ns, ns);
}

static void hwsig_sample_work(struct work_struct *work)
{
	struct hwsig_cpu *pc = container_of(work, struct hwsig_cpu, work);
	struct hwsig_config *cfg = pc->cfg;
	u32 flags = 0;
	u64 start, end, fired;

	/*
	 * Taken first and cleared: once this instance runs, PENDING is clear
	 * and the next tick may queue the next instance and set fired_ns
	 * again while this one is still running. Only a tick between the
	 * two can hand this instance a later fire time (latency then reads
	 * short, never negative); the next instance then finds 0 and
	 * reports no latency.
	 */
	fired = xchg(&pc->fired_ns, 0);

	/* Cleared by every stop, including the hotplug offline callback. */
	if (!READ_ONCE(pc->sampling))
		return;

	start = ktime_get_ns();
	hwsig_pmu_read(pc);
	if (READ_ONCE(pc->first)) {
		flags |= HWSIG_RECORD_F_FIRST;
		WRITE_ONCE(pc->first, false);
	}
	hwsig_ring_publish(cfg->bufs, pc, start, flags, (u32)cfg->generation);
	end = ktime_get_ns();

	WRITE_ONCE(pc->ticks, pc->ticks + 1);
	hwsig_stat_add(&pc->cost, end - start);
	if (fired && fired <= end) {
		WRITE_ONCE(pc->latency_ticks, pc->latency_ticks + 1);
		hwsig_stat_add(&pc->latency, end - fired);
	}
}

static enum hrtimer_restart hwsig_tick(struct hrtimer *timer)
{
	struct hwsig_cpu *pc = container_of(timer, struct hwsig_cpu, timer);
	u64 overruns;

	/*
	 * A pinned timer leaves its CPU only if the CPU dies with the timer
	 * queued (a start racing with the offline callback): stop there.
	 */
	if (unlikely(smp_processor_id() != pc->cpu))
		return HRTIMER_NORESTART;

	/*
	 * The queued instance runs on this CPU, so not before this handler
	 * returns: fired_ns is set in time. A work still pending keeps its
	 * older fire time, so its latency includes the wait.
	 */
	if (queue_work_on(pc->cpu, hwsig.wq, &pc->work))
		WRITE_ONCE(pc->fired_ns, ktime_get_ns());
	else
		WRITE_ONCE(pc->ticks_skipped, pc->ticks_skipped + 1);
	/* More than one period forwarded: the timer fired that much late. */
	overruns = hrtimer_forward_now(timer, ns_to_ktime(pc->cfg->interval_ns));
	if (overruns > 1)
		WRITE_ONCE(pc->ticks_overrun, pc->ticks_overrun + overruns - 1);
	return HRTIMER_RESTART;
}

void hwsig_sampler_init(struct hwsig_cpu *pc)
{
	hrtimer_setup(&pc->timer, hwsig_tick, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	INIT_WORK(&pc->work, hwsig_sample_work);
}

/*
 * IPI handler on pc->cpu (a pinned timer is queued on the CPU that starts
 * it). Starts only if pc still belongs to the active, running
 * configuration and no hotplug callback ran on this CPU since its events
 * were opened; the offline callback runs on this same CPU under the same
 * lock, so a start can never slip in after it.
 */
static void hwsig_start_on_cpu(void *info)
{
	struct hwsig_cpu *pc = info;
	struct hwsig_config *cfg = pc->cfg;

	raw_spin_lock(&hwsig.hp_lock);
	if (hwsig.running && hwsig.active == cfg && pc->opened && !pc->isolated &&
	    cpumask_test_cpu(pc->cpu, &hwsig.live) &&
	    pc->events_epoch == per_cpu(hwsig_hp_epoch, pc->cpu)) {
		WRITE_ONCE(pc->first, true);
		WRITE_ONCE(pc->sampling, true);
		hwsig_buffers_set_online(cfg->bufs, pc->cpu, true);
		hrtimer_start(&pc->timer, ns_to_ktime(cfg->interval_ns),
			      HRTIMER_MODE_REL_PINNED_HARD);
	}
	raw_spin_unlock(&hwsig.hp_lock);
}

/* Process context, hwsig.lock held. A CPU that went away is left alone. */
void hwsig_sample_start_cpu(struct hwsig_cpu *pc)
{
	smp_call_function_single(pc->cpu, hwsig_start_on_cpu, pc, 1);
}

/*
 * Any context that may spin briefly (the offline callback). A sampling
 * work already running may still finish its record.
 */
void hwsig_sample_stop_cpu_atomic(struct hwsig_cpu *pc)
{
	bool was_sampling = READ_ONCE(pc->sampling);

	WRITE_ONCE(pc->sampling, false);
	hrtimer_cancel(&pc->timer);
	/*
	 * Only the sampler's own stop may clear online: the rings may
	 * already belong to the configuration that replaced this one.
	 */
	if (was_sampling)
		hwsig_buffers_set_online(pc->cfg->bufs, pc->cpu, false);
}

/* Process context: afterwards nothing writes pc's ring or reads its events. */
void hwsig_sample_stop_cpu(struct hwsig_cpu *pc)
{
	hwsig_sample_stop_cpu_atomic(pc);
	cancel_work_sync(&pc->work);
}

void hwsig_sample_start_all(struct hwsig_config *cfg)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct hwsig_cpu *pc = per_cpu_ptr(cfg->cpus, cpu);

		if (pc->opened && !pc->isolated)
			hwsig_sample_start_cpu(pc);
		cond_resched();
	}
}

void hwsig_sample_stop_all(struct hwsig_config *cfg)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		hwsig_sample_stop_cpu(per_cpu_ptr(cfg->cpus, cpu));
		cond_resched();
	}
}
