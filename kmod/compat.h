/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference hwsig.ko depends on, in one place.
 *
 * HAS_* comes from the feature checks in Kbuild (features/<feature>.c), so a
 * distribution kernel that backported a feature is handled like the
 * upstream release that introduced it. The code elsewhere is written
 * against the newest API; this file supplies it on older kernels.
 */
#ifndef HWSIG_COMPAT_H
#define HWSIG_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/netlink.h>
#include <linux/workqueue.h>

/* 6.3 made vma->vm_flags const: writes go through vm_flags_{set,clear}(). */
#ifndef HAS_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* 6.13 added hrtimer_setup(); 6.15 removed hrtimer_init(). */
#ifndef HAS_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * Formatted extack messages appeared in 6.2. Before that only string
 * literals can be reported, so every caller also supplies a literal; the
 * offending attribute is always marked, which identifies the event.
 */
#ifdef HAS_NL_SET_ERR_MSG_FMT
#define hwsig_err_fmt(extack, literal, fmt, ...) \
	NL_SET_ERR_MSG_FMT(extack, fmt, ##__VA_ARGS__)
#else
#define hwsig_err_fmt(extack, literal, fmt, ...) \
	NL_SET_ERR_MSG(extack, literal)
#endif

/*
 * 6.17 added WQ_PERCPU ahead of making unbound the default: say per-CPU
 * explicitly where it exists; before, per-CPU is what no flag means.
 */
#ifndef HAS_WQ_PERCPU
#define WQ_PERCPU 0
#endif

/*
 * 6.2 split the ops a family's pre_doit receives (struct genl_split_ops);
 * before, pre_doit got the struct genl_ops itself.
 */
#ifdef HAS_GENL_SPLIT_OPS
#define hwsig_pre_doit_ops genl_split_ops
#else
#define hwsig_pre_doit_ops genl_ops
#endif

#endif /* HWSIG_COMPAT_H */
