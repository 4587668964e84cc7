// SPDX-License-Identifier: GPL-2.0
/* hrtimer_setup() replaced hrtimer_init() + ->function (6.13; init gone in 6.15). */
#include <linux/hrtimer.h>

static enum hrtimer_restart hwsig_feature_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

void hwsig_feature_check(struct hrtimer *t);
void hwsig_feature_check(struct hrtimer *t)
{
	hrtimer_setup(t, hwsig_feature_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
}
