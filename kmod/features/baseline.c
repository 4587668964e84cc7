// SPDX-License-Identifier: GPL-2.0
/* Must always compile: proves the feature-check flags themselves work. */
#include <linux/module.h>
#include <linux/mm.h>

int hwsig_feature_check(void);
int hwsig_feature_check(void)
{
	return PAGE_SIZE > 0;
}
