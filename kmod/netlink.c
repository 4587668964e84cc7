// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "hwsig": the control plane. Every command needs
 * CAP_PERFMON or CAP_SYS_ADMIN, GET_INFO included: counter values and the
 * host's layout are what perf itself guards. The check is netlink_capable()
 * in the family's pre_doit (and the dump's start), before any attribute is
 * acted on: both the socket's opener and the sender must hold the
 * capability, so a privileged program writing to a netlink socket an
 * unprivileged user handed it (as its stdout, say) is refused. (A sender
 * that names the kernel as destination asks on its own behalf:
 * netlink_capable() then checks the sender alone.)
 * Every attribute has a strict policy; every refusal says why in extack.
 */
#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "hwsig_priv.h"

static struct netlink_range_validation hwsig_interval_range = {
	.min = HWSIG_MIN_INTERVAL_NS,
	.max = HWSIG_MAX_INTERVAL_NS,
};

static struct netlink_range_validation hwsig_ring_range = {
	.min = HWSIG_MIN_RING_RECORDS,
	.max = HWSIG_MAX_RING_RECORDS,
};

static const struct nla_policy hwsig_event_policy[HWSIG_EVENT_ATTR_MAX + 1] = {
	[HWSIG_EVENT_ATTR_NAME] = { .type = NLA_NUL_STRING,
				    .len = HWSIG_EVENT_NAME_MAX - 1 },
	[HWSIG_EVENT_ATTR_PMU_TYPE] = { .type = NLA_U32 },
	[HWSIG_EVENT_ATTR_CONFIG] = { .type = NLA_U64 },
	[HWSIG_EVENT_ATTR_CONFIG1] = { .type = NLA_U64 },
	[HWSIG_EVENT_ATTR_CONFIG2] = { .type = NLA_U64 },
	[HWSIG_EVENT_ATTR_CPU] = NLA_POLICY_MIN(NLA_S32, HWSIG_EVENT_ALL_CPUS),
};

static const struct nla_policy hwsig_events_policy[HWSIG_ATTR_EVENT + 1] = {
	[HWSIG_ATTR_EVENT] = NLA_POLICY_NESTED(hwsig_event_policy),
};

static const struct nla_policy hwsig_configure_policy[HWSIG_ATTR_CONFIG_FLAGS + 1] = {
	[HWSIG_ATTR_RING_RECORDS] = NLA_POLICY_FULL_RANGE(NLA_U32, &hwsig_ring_range),
	[HWSIG_ATTR_SAMPLE_INTERVAL_NS] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &hwsig_interval_range),
	[HWSIG_ATTR_EVENTS] = NLA_POLICY_NESTED(hwsig_events_policy),
	[HWSIG_ATTR_CONFIG_FLAGS] = NLA_POLICY_MASK(NLA_U32, HWSIG_CONFIG_F_ALL),
};

static struct genl_family hwsig_family;

/*
 * netlink_capable(): the capability in the initial user namespace, held
 * both by whoever opened the socket and by the task sending on it.
 */
static bool hwsig_sock_capable(const struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_PERFMON) ||
	       netlink_capable(skb, CAP_SYS_ADMIN);
}

#define HWSIG_PERM_MSG \
	"hwsig: the socket's opener and its sender both need CAP_PERFMON or CAP_SYS_ADMIN"

static int hwsig_pre_doit(const struct hwsig_pre_doit_ops *ops, struct sk_buff *skb,
			  struct genl_info *info)
{
	if (hwsig_sock_capable(skb))
		return 0;
	NL_SET_ERR_MSG(info->extack, HWSIG_PERM_MSG);
	return -EPERM;
}

static int hwsig_parse_event(const struct nlattr *nla, struct hwsig_event_spec *spec,
			     struct netlink_ext_ack *extack)
{
	struct nlattr *tb[HWSIG_EVENT_ATTR_MAX + 1];
	int err;

	err = nla_parse_nested(tb, HWSIG_EVENT_ATTR_MAX, nla, hwsig_event_policy, extack);
	if (err)
		return err;
	if (NL_REQ_ATTR_CHECK(extack, nla, tb, HWSIG_EVENT_ATTR_NAME) ||
	    NL_REQ_ATTR_CHECK(extack, nla, tb, HWSIG_EVENT_ATTR_PMU_TYPE) ||
	    NL_REQ_ATTR_CHECK(extack, nla, tb, HWSIG_EVENT_ATTR_CONFIG)) {
		NL_SET_ERR_MSG(extack, "hwsig: an event needs a name, a PMU type and a config");
		return -EINVAL;
	}
	nla_strscpy(spec->name, tb[HWSIG_EVENT_ATTR_NAME], sizeof(spec->name));
	if (!spec->name[0]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[HWSIG_EVENT_ATTR_NAME],
				    "hwsig: event name is empty");
		return -EINVAL;
	}
	spec->type = nla_get_u32(tb[HWSIG_EVENT_ATTR_PMU_TYPE]);
	err = hwsig_pmu_type_check(spec->type, tb[HWSIG_EVENT_ATTR_PMU_TYPE], extack);
	if (err)
		return err;
	spec->config = nla_get_u64(tb[HWSIG_EVENT_ATTR_CONFIG]);
	spec->config1 = tb[HWSIG_EVENT_ATTR_CONFIG1] ?
			nla_get_u64(tb[HWSIG_EVENT_ATTR_CONFIG1]) : 0;
	spec->config2 = tb[HWSIG_EVENT_ATTR_CONFIG2] ?
			nla_get_u64(tb[HWSIG_EVENT_ATTR_CONFIG2]) : 0;
	spec->cpu = tb[HWSIG_EVENT_ATTR_CPU] ?
		    nla_get_s32(tb[HWSIG_EVENT_ATTR_CPU]) : HWSIG_EVENT_ALL_CPUS;
	if (spec->cpu == HWSIG_EVENT_ALL_CPUS)
		return 0;
	if (spec->cpu >= nr_cpu_ids) {
		NL_SET_ERR_MSG_ATTR(extack, tb[HWSIG_EVENT_ATTR_CPU],
				    "hwsig: event cpu out of range");
		return -EINVAL;
	}
	if (!cpu_online(spec->cpu)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[HWSIG_EVENT_ATTR_CPU],
				    "hwsig: event cpu is offline");
		return -EINVAL;
	}
	return 0;
}

static int hwsig_parse_configure(struct genl_info *info, struct hwsig_config_req *req)
{
	struct netlink_ext_ack *extack = info->extack;
	const struct nlattr *events, *nla;
	int rem, err;

	if (GENL_REQ_ATTR_CHECK(info, HWSIG_ATTR_SAMPLE_INTERVAL_NS)) {
		NL_SET_ERR_MSG(extack, "hwsig: CONFIGURE needs a sample interval");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, HWSIG_ATTR_EVENTS)) {
		NL_SET_ERR_MSG(extack, "hwsig: CONFIGURE needs an event list");
		return -EINVAL;
	}
	req->interval_ns = nla_get_u64(info->attrs[HWSIG_ATTR_SAMPLE_INTERVAL_NS]);
	if (info->attrs[HWSIG_ATTR_CONFIG_FLAGS])
		req->flags = nla_get_u32(info->attrs[HWSIG_ATTR_CONFIG_FLAGS]);
	req->ring_records = HWSIG_DEFAULT_RING_RECORDS;
	if (info->attrs[HWSIG_ATTR_RING_RECORDS]) {
		req->ring_records = nla_get_u32(info->attrs[HWSIG_ATTR_RING_RECORDS]);
		if (!is_power_of_2(req->ring_records)) {
			NL_SET_ERR_MSG_ATTR(extack, info->attrs[HWSIG_ATTR_RING_RECORDS],
					    "hwsig: ring size must be a power of two");
			return -EINVAL;
		}
	}

	events = info->attrs[HWSIG_ATTR_EVENTS];
	nla_for_each_nested(nla, events, rem) {
		if (nla_type(nla) != HWSIG_ATTR_EVENT) {
			NL_SET_ERR_MSG_ATTR(extack, nla,
					    "hwsig: the event list holds only HWSIG_ATTR_EVENT");
			return -EINVAL;
		}
		if (req->nr_events == HWSIG_MAX_EVENTS) {
			NL_SET_ERR_MSG_ATTR(extack, nla, "hwsig: too many events");
			return -E2BIG;
		}
		err = hwsig_parse_event(nla, &req->events[req->nr_events], extack);
		if (err)
			return err;
		req->event_attr[req->nr_events++] = nla;
	}
	if (!req->nr_events) {
		NL_SET_ERR_MSG_ATTR(extack, events, "hwsig: the event list is empty");
		return -EINVAL;
	}
	return 0;
}

static int hwsig_cmd_configure(struct sk_buff *skb, struct genl_info *info)
{
	struct hwsig_config_req *req;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	err = hwsig_parse_configure(info, req);
	if (!err)
		err = hwsig_configure(req, info->extack);
	kfree(req);
	return err;
}

static int hwsig_cmd_start(struct sk_buff *skb, struct genl_info *info)
{
	return hwsig_start(info->extack);
}

static int hwsig_cmd_stop(struct sk_buff *skb, struct genl_info *info)
{
	hwsig_stop();
	return 0;
}

static int hwsig_fill_event(struct sk_buff *msg, const struct hwsig_event_spec *spec)
{
	struct nlattr *nest;

	nest = nla_nest_start(msg, HWSIG_ATTR_EVENT);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(msg, HWSIG_EVENT_ATTR_NAME, spec->name) ||
	    nla_put_u32(msg, HWSIG_EVENT_ATTR_PMU_TYPE, spec->type) ||
	    nla_put_u64_64bit(msg, HWSIG_EVENT_ATTR_CONFIG, spec->config,
			      HWSIG_EVENT_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_EVENT_ATTR_CONFIG1, spec->config1,
			      HWSIG_EVENT_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_EVENT_ATTR_CONFIG2, spec->config2,
			      HWSIG_EVENT_ATTR_PAD) ||
	    nla_put_s32(msg, HWSIG_EVENT_ATTR_CPU, spec->cpu)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* The active configuration's events, in index order. */
static int hwsig_fill_events(struct sk_buff *msg, const struct hwsig_config *cfg)
{
	struct nlattr *list;
	u32 i;

	list = nla_nest_start(msg, HWSIG_ATTR_EVENTS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < cfg->nr_events; i++) {
		if (hwsig_fill_event(msg, &cfg->events[i]))
			return -EMSGSIZE;
	}
	nla_nest_end(msg, list);
	return 0;
}

/* hwsig.lock held. */
static int hwsig_fill_info(struct sk_buff *msg)
{
	struct hwsig_config *cfg = hwsig.active;
	struct hwsig_buffers *bufs = cfg ? cfg->bufs : NULL;

	if (nla_put_u32(msg, HWSIG_ATTR_ABI_VERSION, HWSIG_ABI_VERSION) ||
	    nla_put_u32(msg, HWSIG_ATTR_COMPAT_VERSION, HWSIG_ABI_COMPAT_VERSION) ||
	    nla_put_u32(msg, HWSIG_ATTR_NR_CPU_IDS, nr_cpu_ids) ||
	    nla_put_u32(msg, HWSIG_ATTR_NR_ONLINE_CPUS, num_online_cpus()) ||
	    nla_put_u32(msg, HWSIG_ATTR_RING_RECORDS, bufs ? bufs->ring_records : 0) ||
	    nla_put_u32(msg, HWSIG_ATTR_RECORD_SIZE, sizeof(struct hwsig_record)) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_MMAP_SIZE, hwsig_mmap_size(bufs),
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_SAMPLE_INTERVAL_NS,
			      cfg ? cfg->interval_ns : 0, HWSIG_ATTR_PAD) ||
	    nla_put_u32(msg, HWSIG_ATTR_MAX_EVENTS, HWSIG_MAX_EVENTS) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_MIN_INTERVAL_NS, HWSIG_MIN_INTERVAL_NS,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_MAX_INTERVAL_NS, HWSIG_MAX_INTERVAL_NS,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u32(msg, HWSIG_ATTR_MAX_RING_RECORDS, HWSIG_MAX_RING_RECORDS) ||
	    nla_put_u8(msg, HWSIG_ATTR_RUNNING, hwsig.running) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_CONFIG_GENERATION, hwsig.generation,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u32(msg, HWSIG_ATTR_CONFIG_FLAGS, cfg ? cfg->flags : 0) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_RING_BYTES_MAX, hwsig.ring_bytes_max,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_RING_BYTES,
			      atomic_long_read(&hwsig.ring_bytes), HWSIG_ATTR_PAD))
		return -EMSGSIZE;
	return cfg ? hwsig_fill_events(msg, cfg) : 0;
}

static int hwsig_cmd_get_info(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &hwsig_family, 0, HWSIG_CMD_GET_INFO);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free_msg;
	}
	mutex_lock(&hwsig.lock);
	err = hwsig_fill_info(msg);
	mutex_unlock(&hwsig.lock);
	if (err)
		goto err_free_msg;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free_msg:
	nlmsg_free(msg);
	return err;
}

static size_t hwsig_status_entry_size(void)
{
	return nla_total_size(0) +		/* HWSIG_ATTR_STATUS_ENTRY */
	       3 * nla_total_size(sizeof(u32)) +	/* index, cpu, error */
	       3 * nla_total_size_64bit(sizeof(u64));	/* enabled, running, value */
}

static int hwsig_fill_status_entry(struct sk_buff *msg, const struct hwsig_cpu *pc,
				   u32 index, int error)
{
	struct nlattr *entry;

	entry = nla_nest_start(msg, HWSIG_ATTR_STATUS_ENTRY);
	if (!entry)
		return -EMSGSIZE;
	if (nla_put_u32(msg, HWSIG_STATUS_ATTR_EVENT_INDEX, index) ||
	    nla_put_u32(msg, HWSIG_STATUS_ATTR_CPU, pc->cpu) ||
	    nla_put_s32(msg, HWSIG_STATUS_ATTR_ERROR, error) ||
	    nla_put_u64_64bit(msg, HWSIG_STATUS_ATTR_TIME_ENABLED,
			      READ_ONCE(pc->enabled[index]), HWSIG_STATUS_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_STATUS_ATTR_TIME_RUNNING,
			      READ_ONCE(pc->running[index]), HWSIG_STATUS_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_STATUS_ATTR_VALUE,
			      READ_ONCE(pc->value[index]), HWSIG_STATUS_ATTR_PAD)) {
		nla_nest_cancel(msg, entry);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, entry);
	return 0;
}

/* The summary of every CPU's sampling. hwsig.lock held. */
static int hwsig_fill_summary(struct sk_buff *msg, const struct hwsig_config *cfg)
{
	u64 ticks = 0, cost_sum = 0, cost_max = 0;
	u64 lat_ticks = 0, lat_sum = 0, lat_max = 0;
	u64 written = 0, overwritten = 0, skipped = 0, overrun = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		const struct hwsig_cpu *pc = per_cpu_ptr(cfg->cpus, cpu);
		const struct hwsig_ring_header *hdr = hwsig_ring_header(cfg->bufs, cpu);

		ticks += READ_ONCE(pc->ticks);
		cost_sum += READ_ONCE(pc->cost.sum_ns);
		cost_max = max(cost_max, READ_ONCE(pc->cost.max_ns));
		lat_ticks += READ_ONCE(pc->latency_ticks);
		skipped += READ_ONCE(pc->ticks_skipped);
		overrun += READ_ONCE(pc->ticks_overrun);
		lat_sum += READ_ONCE(pc->latency.sum_ns);
		lat_max = max(lat_max, READ_ONCE(pc->latency.max_ns));
		/* Only a count: no record is read, no ordering needed. */
		written += READ_ONCE(hdr->head);
		overwritten += READ_ONCE(hdr->overwritten);
	}
	if (nla_put_u8(msg, HWSIG_ATTR_RUNNING, hwsig.running) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_CONFIG_GENERATION, hwsig.generation,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_SAMPLE_INTERVAL_NS, cfg->interval_ns,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_SAMPLE_COST_AVG_NS,
			      ticks ? div64_u64(cost_sum, ticks) : 0, HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_SAMPLE_COST_MAX_NS, cost_max,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_SAMPLE_LATENCY_AVG_NS,
			      lat_ticks ? div64_u64(lat_sum, lat_ticks) : 0, HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_SAMPLE_LATENCY_MAX_NS, lat_max,
			      HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_TICKS_OVERRUN, overrun, HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_TICKS_SKIPPED, skipped, HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_RECORDS_WRITTEN, written, HWSIG_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, HWSIG_ATTR_RECORDS_OVERWRITTEN, overwritten,
			      HWSIG_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}

/*
 * The events cpu has an entry for: every event meant for all CPUs while
 * cpu is online, and the events bound to it (-ENODEV while it is offline).
 * Fills them into msg when it is not NULL; returns how many. A CPU that
 * is not sampled (nohz_full/isolated) reports -ECANCELED. hwsig.lock held.
 * live is the caller's one snapshot of the CPU's hotplug state: counting
 * and filling must agree, or a CPU coming online in between grows the
 * message past the size its count checked.
 */
static int hwsig_cpu_entries(struct sk_buff *msg, const struct hwsig_config *cfg,
			     unsigned int cpu, bool live)
{
	const struct hwsig_cpu *pc = per_cpu_ptr(cfg->cpus, cpu);
	int n = 0, err;
	u32 i;

	for (i = 0; i < cfg->nr_events; i++) {
		const struct hwsig_event_spec *spec = &cfg->events[i];

		if (!hwsig_event_targets(spec, cpu))
			continue;
		if (!live && spec->cpu == HWSIG_EVENT_ALL_CPUS)
			continue;
		n++;
		if (!msg)
			continue;
		if (!live || !pc->opened)
			err = -ENODEV;
		else if (pc->isolated)
			err = -ECANCELED;
		else
			err = READ_ONCE(pc->error[i]);
		if (hwsig_fill_status_entry(msg, pc, i, err))
			return -EMSGSIZE;
	}
	return n;
}

static int hwsig_cmd_get_status(struct sk_buff *skb, struct genl_info *info)
{
	const struct hwsig_config *cfg;
	cpumask_var_t live;
	struct sk_buff *msg;
	struct nlattr *list;
	unsigned int cpu;
	size_t entries = 0;
	void *hdr;
	int err;

	if (!alloc_cpumask_var(&live, GFP_KERNEL))
		return -ENOMEM;
	mutex_lock(&hwsig.lock);
	cfg = hwsig.active;
	if (!cfg) {
		NL_SET_ERR_MSG(info->extack, "hwsig: nothing configured: send CONFIGURE first");
		err = -EINVAL;
		goto err_unlock;
	}
	/* One snapshot: the entries counted below are the entries filled. */
	hwsig_live_snapshot(live);
	for_each_possible_cpu(cpu)
		entries += hwsig_cpu_entries(NULL, cfg, cpu, cpumask_test_cpu(cpu, live));
	/* A nest's length is 16 bits: past it, only the dump can answer. */
	if (nla_total_size(entries * hwsig_status_entry_size()) > U16_MAX) {
		hwsig_err_fmt(info->extack,
			      "hwsig: too many status entries for one message: dump GET_STATUS (NLM_F_DUMP)",
			      "hwsig: %zu status entries do not fit one message: dump GET_STATUS (NLM_F_DUMP)",
			      entries);
		err = -EMSGSIZE;
		goto err_unlock;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE + entries * hwsig_status_entry_size(), GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto err_unlock;
	}
	hdr = genlmsg_put_reply(msg, info, &hwsig_family, 0, HWSIG_CMD_GET_STATUS);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free_msg;
	}
	err = hwsig_fill_summary(msg, cfg);
	if (err)
		goto err_free_msg;
	list = nla_nest_start(msg, HWSIG_ATTR_STATUS);
	if (!list) {
		err = -EMSGSIZE;
		goto err_free_msg;
	}
	for_each_possible_cpu(cpu) {
		err = hwsig_cpu_entries(msg, cfg, cpu, cpumask_test_cpu(cpu, live));
		if (err < 0)
			goto err_free_msg;
		cond_resched();
	}
	nla_nest_end(msg, list);
	mutex_unlock(&hwsig.lock);
	free_cpumask_var(live);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free_msg:
	nlmsg_free(msg);
err_unlock:
	mutex_unlock(&hwsig.lock);
	free_cpumask_var(live);
	return err;
}

static int hwsig_status_dump_start(struct netlink_callback *cb)
{
	if (hwsig_sock_capable(cb->skb))
		return 0;
	NL_SET_ERR_MSG(cb->extack, HWSIG_PERM_MSG);
	return -EPERM;
}

/* Message of one CPU's entries; 0, -ENOENT when it has none, or -EMSGSIZE. */
static int hwsig_dump_cpu(struct sk_buff *skb, struct netlink_callback *cb,
			  const struct hwsig_config *cfg, unsigned int cpu)
{
	struct nlattr *list;
	unsigned long epoch;
	bool live;
	void *hdr;

	/* One snapshot for the count and the entries, as in the doit. */
	hwsig_cpu_snapshot(cpu, &live, &epoch);
	if (!hwsig_cpu_entries(NULL, cfg, cpu, live))
		return -ENOENT;
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &hwsig_family, NLM_F_MULTI, HWSIG_CMD_GET_STATUS);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	if (nla_put_u32(skb, HWSIG_ATTR_STATUS_CPU, cpu) ||
	    nla_put_u64_64bit(skb, HWSIG_ATTR_CONFIG_GENERATION, cfg->generation,
			      HWSIG_ATTR_PAD))
		goto err_cancel_msg;
	list = nla_nest_start(skb, HWSIG_ATTR_STATUS);
	if (!list || hwsig_cpu_entries(skb, cfg, cpu, live) < 0)
		goto err_cancel_msg;
	nla_nest_end(skb, list);
	genlmsg_end(skb, hdr);
	return 0;

err_cancel_msg:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * GET_STATUS as a dump: the summary, then one message per CPU with
 * entries. cb->args[0]: 0 before the summary, else 1 + the next CPU id.
 * cb->seq is the configuration's generation: a CONFIGURE between two
 * parts of the dump marks the next message NLM_F_DUMP_INTR.
 */
static int hwsig_status_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct hwsig_config *cfg;
	unsigned int cpu;
	void *hdr;
	int err = 0;

	mutex_lock(&hwsig.lock);
	cfg = hwsig.active;
	if (!cfg) {
		NL_SET_ERR_MSG(cb->extack, "hwsig: nothing configured: send CONFIGURE first");
		err = -EINVAL;
		goto out_unlock;
	}
	cb->seq = (unsigned int)cfg->generation;
	if (!cb->args[0]) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &hwsig_family, NLM_F_MULTI, HWSIG_CMD_GET_STATUS);
		if (!hdr) {
			err = -EMSGSIZE;
			goto out_unlock;
		}
		genl_dump_check_consistent(cb, hdr);
		if (hwsig_fill_summary(skb, cfg)) {
			genlmsg_cancel(skb, hdr);
			err = -EMSGSIZE;
			goto out_unlock;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = 1;
	}
	for (cpu = cb->args[0] - 1; cpu < nr_cpu_ids; cpu++) {
		if (cpu_possible(cpu) && hwsig_dump_cpu(skb, cb, cfg, cpu) == -EMSGSIZE)
			break;
		cb->args[0] = cpu + 2;
	}
	err = skb->len;
out_unlock:
	mutex_unlock(&hwsig.lock);
	return err;
}

/*
 * Commands without a policy take no attributes: the core refuses any
 * (resv_start_op is 0, so every command is validated strictly).
 */
static const struct genl_ops hwsig_ops[] = {
	{
		.cmd = HWSIG_CMD_GET_INFO,
		.doit = hwsig_cmd_get_info,
	},
	{
		.cmd = HWSIG_CMD_CONFIGURE,
		.doit = hwsig_cmd_configure,
		.policy = hwsig_configure_policy,
		.maxattr = ARRAY_SIZE(hwsig_configure_policy) - 1,
	},
	{
		.cmd = HWSIG_CMD_START,
		.doit = hwsig_cmd_start,
	},
	{
		.cmd = HWSIG_CMD_STOP,
		.doit = hwsig_cmd_stop,
	},
	{
		.cmd = HWSIG_CMD_GET_STATUS,
		.doit = hwsig_cmd_get_status,
		.start = hwsig_status_dump_start,
		.dumpit = hwsig_status_dumpit,
	},
};

static struct genl_family hwsig_family __ro_after_init = {
	.name = HWSIG_GENL_NAME,
	.version = HWSIG_GENL_VERSION,
	.module = THIS_MODULE,
	.ops = hwsig_ops,
	.n_ops = ARRAY_SIZE(hwsig_ops),
	.pre_doit = hwsig_pre_doit,
	.netnsok = false,
};

int hwsig_netlink_init(void)
{
	return genl_register_family(&hwsig_family);
}

void hwsig_netlink_exit(void)
{
	genl_unregister_family(&hwsig_family);
}
