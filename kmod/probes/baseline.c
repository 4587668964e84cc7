// SPDX-License-Identifier: GPL-2.0
/* Must always compile: proves the probe flags themselves work. */
#include <linux/module.h>
#include <linux/mm.h>

int hwsig_probe(void);
int hwsig_probe(void)
{
	return PAGE_SIZE > 0;
}
