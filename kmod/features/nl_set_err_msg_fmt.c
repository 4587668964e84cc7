// SPDX-License-Identifier: GPL-2.0
/* NL_SET_ERR_MSG_FMT(): formatted extack messages (6.2). */
#include <linux/netlink.h>

void hwsig_feature_check(struct netlink_ext_ack *extack, int cpu);
void hwsig_feature_check(struct netlink_ext_ack *extack, int cpu)
{
	NL_SET_ERR_MSG_FMT(extack, "cpu %d", cpu);
}
