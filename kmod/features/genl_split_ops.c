// SPDX-License-Identifier: GPL-2.0
/* struct genl_split_ops: 6.2 passes it (not struct genl_ops) to pre_doit. */
#include <net/genetlink.h>

int hwsig_feature_check(const struct genl_split_ops *ops, struct sk_buff *skb,
			struct genl_info *info);
int hwsig_feature_check(const struct genl_split_ops *ops, struct sk_buff *skb,
			struct genl_info *info)
{
	struct genl_family f = { .pre_doit = hwsig_feature_check };

	return f.pre_doit != NULL;
}
