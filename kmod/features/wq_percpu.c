// SPDX-License-Identifier: GPL-2.0
/* WQ_PERCPU (6.17): explicit per-CPU workqueues before unbound becomes the default. */
#include <linux/workqueue.h>

unsigned int hwsig_feature_check(void);
unsigned int hwsig_feature_check(void)
{
	return WQ_PERCPU;
}
