// SPDX-License-Identifier: GPL-2.0
/* hrtimer_setup() replaced hrtimer_init() + ->function (6.13; init gone in 6.15). */
#include <linux/hrtimer.h>

static enum hrtimer_restart hwsig_probe_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

void hwsig_probe(struct hrtimer *t);
void hwsig_probe(struct hrtimer *t)
{
	hrtimer_setup(t, hwsig_probe_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
}
