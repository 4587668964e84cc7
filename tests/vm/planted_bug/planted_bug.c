// SPDX-License-Identifier: GPL-2.0
/*
 * planted_bug: the vm-debug tier's negative self-test. Loaded once per
 * parameter value under the debug kernel, each load commits one bug of a
 * kind the tier must catch, harmlessly enough that the guest goes on:
 *
 *   bug=sleep     a GFP_KERNEL allocation under a spinlock ("BUG: sleeping
 *                 function called from invalid context", DEBUG_ATOMIC_SLEEP)
 *   bug=uaf       a read of freed slab memory (KASAN)
 *   bug=timer     kfree() of an armed hrtimer (ODEBUG, DEBUG_OBJECTS_TIMERS;
 *                 the fixup cancels it)
 *   bug=leak      16 allocations whose pointers are dropped (kmemleak; the
 *                 last may survive in a dead stack frame the scan reads)
 *   bug=abba      two mutexes taken in both orders, never contended
 *                 ("possible circular locking dependency", lockdep; any
 *                 earlier report would have switched lockdep off, so it
 *                 goes first)
 *
 * The load fails with -EAGAIN after the bug, so nothing stays loaded.
 * Never load this outside that test.
 */
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

static char *bug = "none";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "sleep, uaf, timer, leak or abba");

static DEFINE_SPINLOCK(planted_lock);
static DEFINE_MUTEX(planted_a);
static DEFINE_MUTEX(planted_b);
static void *planted_leak;

static noinline void planted_leaks(void)
{
	int i;

	for (i = 0; i < 16; i++) {
		WRITE_ONCE(planted_leak, kmalloc(512, GFP_KERNEL));
		WRITE_ONCE(planted_leak, NULL);
	}
}

struct planted_timer {
	struct hrtimer timer;
};

static enum hrtimer_restart planted_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static noinline int planted_uaf(void)
{
	int *p = kmalloc(64, GFP_KERNEL);
	int v;

	if (!p)
		return -ENOMEM;
	p[3] = 1;
	kfree(p);
	v = READ_ONCE(p[3]);
	return v;
}

static int __init planted_init(void)
{
	struct planted_timer *pt;

	if (!strcmp(bug, "sleep")) {
		spin_lock(&planted_lock);
		kfree(kmalloc(64, GFP_KERNEL));
		spin_unlock(&planted_lock);
	} else if (!strcmp(bug, "uaf")) {
		pr_info("planted_bug: read %d\n", planted_uaf());
	} else if (!strcmp(bug, "timer")) {
		pt = kzalloc(sizeof(*pt), GFP_KERNEL);
		if (!pt)
			return -ENOMEM;
		hrtimer_init(&pt->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
		pt->timer.function = planted_fn;
		hrtimer_start(&pt->timer, ms_to_ktime(60000), HRTIMER_MODE_REL);
		kfree(pt);
	} else if (!strcmp(bug, "leak")) {
		planted_leaks();
	} else if (!strcmp(bug, "abba")) {
		mutex_lock(&planted_a);
		mutex_lock(&planted_b);
		mutex_unlock(&planted_b);
		mutex_unlock(&planted_a);
		mutex_lock(&planted_b);
		mutex_lock(&planted_a);
		mutex_unlock(&planted_a);
		mutex_unlock(&planted_b);
	} else {
		return -EINVAL;
	}
	pr_info("planted_bug: planted %s\n", bug);
	return -EAGAIN;
}
module_init(planted_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hwsig vm-debug tier: planted kernel bugs the tier must report");

