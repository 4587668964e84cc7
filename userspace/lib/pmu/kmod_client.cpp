// Generic-netlink client of hwsig.ko (family HWSIG_GENL_NAME) over libnl-genl.
// Replies are parsed with nla_parse + policies and, on top of libnl's minimum
// length check, exact sizes: a u32 that arrives as 8 bytes is an error, not a
// truncation. Errors keep errno and the kernel's extack message.

#include "hwsig/kmod.h"

#include <cerrno>
#include <cstring>
#include <array>
#include <exception>
#include <functional>
#include <memory>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "hwsig/error.h"

namespace hwsig {

namespace {

// libnl reports its own codes; map the ones a caller can act on back to errno.
int errno_of_nlerr(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_PERM: return EPERM;
	case NLE_NOMEM: return ENOMEM;
	case NLE_OBJ_NOTFOUND: return ENOENT;
	case NLE_AGAIN: return EAGAIN;
	case NLE_INTR: return EINTR;
	case NLE_INVAL: return EINVAL;
	case NLE_BUSY: return EBUSY;
	case NLE_RANGE: return ERANGE;
	case NLE_OPNOTSUPP: return EOPNOTSUPP;
	case NLE_MSGSIZE: return EMSGSIZE;
	case NLE_NOACCESS: return EACCES;
	default: return EIO;
	}
}

[[noreturn]] void throw_nl(const std::string &doing, int nlerr)
{
	throw Error(doing + " (" + nl_geterror(nlerr) + ")", errno_of_nlerr(nlerr));
}

struct MsgDeleter {
	void operator()(nl_msg *m) const { nlmsg_free(m); }
};
using MsgPtr = std::unique_ptr<nl_msg, MsgDeleter>;
struct CbDeleter {
	void operator()(nl_cb *c) const { nl_cb_put(c); }
};
using CbPtr = std::unique_ptr<nl_cb, CbDeleter>;

const char *command_name(int cmd)
{
	switch (cmd) {
	case HWSIG_CMD_GET_INFO: return "GET_INFO";
	case HWSIG_CMD_CONFIGURE: return "CONFIGURE";
	case HWSIG_CMD_START: return "START";
	case HWSIG_CMD_STOP: return "STOP";
	case HWSIG_CMD_GET_STATUS: return "GET_STATUS";
	default: return "?";
	}
}

// ---- policies: the types the ABI header documents ----
//
// One row per attribute of <linux/hwsig.h>, HWSIG_ATTR_PAD included (the
// module's nla_put_u64_64bit() may send it; it carries nothing). The
// policies are built from these tables and kmod_attr_known() answers from
// them, so a unit test sees an attribute the ABI gained and this client not.

struct AttrType {
	int attr;
	std::uint16_t type;
};

constexpr AttrType kTopAttrs[] = {
	{HWSIG_ATTR_PAD, NLA_UNSPEC},
	{HWSIG_ATTR_ABI_VERSION, NLA_U32},
	{HWSIG_ATTR_COMPAT_VERSION, NLA_U32},
	{HWSIG_ATTR_NR_CPU_IDS, NLA_U32},
	{HWSIG_ATTR_NR_ONLINE_CPUS, NLA_U32},
	{HWSIG_ATTR_RING_RECORDS, NLA_U32},
	{HWSIG_ATTR_RECORD_SIZE, NLA_U32},
	{HWSIG_ATTR_MMAP_SIZE, NLA_U64},
	{HWSIG_ATTR_SAMPLE_INTERVAL_NS, NLA_U64},
	{HWSIG_ATTR_MAX_EVENTS, NLA_U32},
	{HWSIG_ATTR_MIN_INTERVAL_NS, NLA_U64},
	{HWSIG_ATTR_MAX_INTERVAL_NS, NLA_U64},
	{HWSIG_ATTR_MAX_RING_RECORDS, NLA_U32},
	{HWSIG_ATTR_EVENTS, NLA_NESTED},
	{HWSIG_ATTR_EVENT, NLA_NESTED},
	{HWSIG_ATTR_RUNNING, NLA_U8},
	{HWSIG_ATTR_CONFIG_GENERATION, NLA_U64},
	{HWSIG_ATTR_SAMPLE_COST_AVG_NS, NLA_U64},
	{HWSIG_ATTR_SAMPLE_COST_MAX_NS, NLA_U64},
	{HWSIG_ATTR_RECORDS_WRITTEN, NLA_U64},
	{HWSIG_ATTR_RECORDS_OVERWRITTEN, NLA_U64},
	{HWSIG_ATTR_STATUS, NLA_NESTED},
	{HWSIG_ATTR_STATUS_ENTRY, NLA_NESTED},
	{HWSIG_ATTR_SAMPLE_LATENCY_AVG_NS, NLA_U64},
	{HWSIG_ATTR_SAMPLE_LATENCY_MAX_NS, NLA_U64},
	{HWSIG_ATTR_TICKS_OVERRUN, NLA_U64},
	{HWSIG_ATTR_TICKS_SKIPPED, NLA_U64},
	{HWSIG_ATTR_CONFIG_FLAGS, NLA_U32},
	{HWSIG_ATTR_RING_BYTES_MAX, NLA_U64},
	{HWSIG_ATTR_RING_BYTES, NLA_U64},
	{HWSIG_ATTR_STATUS_CPU, NLA_U32},
};

constexpr AttrType kEventAttrs[] = {
	{HWSIG_EVENT_ATTR_PAD, NLA_UNSPEC},
	{HWSIG_EVENT_ATTR_NAME, NLA_NUL_STRING},
	{HWSIG_EVENT_ATTR_PMU_TYPE, NLA_U32},
	{HWSIG_EVENT_ATTR_CONFIG, NLA_U64},
	{HWSIG_EVENT_ATTR_CONFIG1, NLA_U64},
	{HWSIG_EVENT_ATTR_CONFIG2, NLA_U64},
	{HWSIG_EVENT_ATTR_CPU, NLA_U32}, // s32 on the wire
};

constexpr AttrType kStatusAttrs[] = {
	{HWSIG_STATUS_ATTR_PAD, NLA_UNSPEC},
	{HWSIG_STATUS_ATTR_EVENT_INDEX, NLA_U32},
	{HWSIG_STATUS_ATTR_CPU, NLA_U32},
	{HWSIG_STATUS_ATTR_ERROR, NLA_U32}, // s32 on the wire
	{HWSIG_STATUS_ATTR_TIME_ENABLED, NLA_U64},
	{HWSIG_STATUS_ATTR_TIME_RUNNING, NLA_U64},
	{HWSIG_STATUS_ATTR_VALUE, NLA_U64},
};

template <std::size_t Max, std::size_t N> std::array<nla_policy, Max + 1> make_policy(const AttrType (&rows)[N])
{
	std::array<nla_policy, Max + 1> a{};
	for (const auto &r : rows)
		a[static_cast<std::size_t>(r.attr)].type = r.type;
	return a;
}

nla_policy *top_policy()
{
	static auto policy = make_policy<HWSIG_ATTR_MAX>(kTopAttrs);
	return policy.data();
}

nla_policy *event_policy()
{
	static auto policy = [] {
		auto a = make_policy<HWSIG_EVENT_ATTR_MAX>(kEventAttrs);
		a[HWSIG_EVENT_ATTR_NAME].maxlen = HWSIG_EVENT_NAME_MAX;
		return a;
	}();
	return policy.data();
}

nla_policy *status_policy()
{
	static auto policy = make_policy<HWSIG_STATUS_ATTR_MAX>(kStatusAttrs);
	return policy.data();
}

template <std::size_t N> bool listed(const AttrType (&rows)[N], int attr)
{
	for (const auto &r : rows)
		if (r.attr == attr)
			return true;
	return false;
}

// Exact-size accessors: the policy checked the minimum, these the maximum.
[[noreturn]] void bad_reply(const std::string &what)
{
	throw Error("parsing hwsig reply: " + what, EPROTO);
}

template <typename T> T get_exact(nlattr *a, const char *name)
{
	if (nla_len(a) != static_cast<int>(sizeof(T)))
		bad_reply(std::string(name) + " has " + std::to_string(nla_len(a)) + " bytes, expected " +
			  std::to_string(sizeof(T)));
	T v;
	std::memcpy(&v, nla_data(a), sizeof(T));
	return v;
}

template <typename T> void take(nlattr **tb, int attr, const char *name, T &out)
{
	if (tb[attr])
		out = get_exact<T>(tb[attr], name);
}

KmodEvent parse_event(nlattr *nest)
{
	nlattr *tb[HWSIG_EVENT_ATTR_MAX + 1];
	if (int r = nla_parse_nested(tb, HWSIG_EVENT_ATTR_MAX, nest, event_policy()); r < 0)
		throw_nl("parsing hwsig reply: event", r);
	KmodEvent e;
	if (!tb[HWSIG_EVENT_ATTR_NAME] || !tb[HWSIG_EVENT_ATTR_PMU_TYPE] || !tb[HWSIG_EVENT_ATTR_CONFIG])
		bad_reply("event without NAME, PMU_TYPE or CONFIG");
	e.name = nla_get_string(tb[HWSIG_EVENT_ATTR_NAME]);
	take(tb, HWSIG_EVENT_ATTR_PMU_TYPE, "event PMU_TYPE", e.pmu_type);
	take(tb, HWSIG_EVENT_ATTR_CONFIG, "event CONFIG", e.config);
	take(tb, HWSIG_EVENT_ATTR_CONFIG1, "event CONFIG1", e.config1);
	take(tb, HWSIG_EVENT_ATTR_CONFIG2, "event CONFIG2", e.config2);
	take(tb, HWSIG_EVENT_ATTR_CPU, "event CPU", e.cpu);
	return e;
}

std::vector<KmodEvent> parse_events(nlattr *events)
{
	std::vector<KmodEvent> out;
	nlattr *a;
	int rem;
	nla_for_each_nested(a, events, rem) {
		if (nla_type(a) != HWSIG_ATTR_EVENT)
			continue;
		out.push_back(parse_event(a));
	}
	return out;
}

KmodStatusEntry parse_status_entry(nlattr *nest)
{
	nlattr *tb[HWSIG_STATUS_ATTR_MAX + 1];
	if (int r = nla_parse_nested(tb, HWSIG_STATUS_ATTR_MAX, nest, status_policy()); r < 0)
		throw_nl("parsing hwsig reply: status entry", r);
	if (!tb[HWSIG_STATUS_ATTR_EVENT_INDEX] || !tb[HWSIG_STATUS_ATTR_CPU])
		bad_reply("status entry without EVENT_INDEX or CPU");
	KmodStatusEntry e;
	take(tb, HWSIG_STATUS_ATTR_EVENT_INDEX, "status EVENT_INDEX", e.event_index);
	take(tb, HWSIG_STATUS_ATTR_CPU, "status CPU", e.cpu);
	take(tb, HWSIG_STATUS_ATTR_ERROR, "status ERROR", e.error);
	take(tb, HWSIG_STATUS_ATTR_TIME_ENABLED, "status TIME_ENABLED", e.time_enabled);
	take(tb, HWSIG_STATUS_ATTR_TIME_RUNNING, "status TIME_RUNNING", e.time_running);
	take(tb, HWSIG_STATUS_ATTR_VALUE, "status VALUE", e.value);
	return e;
}

struct Exchange {
	std::function<void(nlmsghdr *)> on_reply;
	int err = 0; // positive errno from the kernel
	std::string extack;
	bool done = false;
	std::exception_ptr parse_error; // thrown by on_reply; rethrown after the ACK
};

int on_valid(nl_msg *msg, void *arg)
{
	auto *x = static_cast<Exchange *>(arg);
	if (!x->on_reply || x->parse_error)
		return NL_OK;
	// Exceptions must not unwind through libnl's C frames.
	try {
		x->on_reply(nlmsg_hdr(msg));
	} catch (...) {
		x->parse_error = std::current_exception();
	}
	return NL_OK;
}

int on_ack(nl_msg *, void *arg)
{
	static_cast<Exchange *>(arg)->done = true;
	return NL_STOP;
}

// NLMSG_DONE: the end of a dump (dumps are not ACKed).
int on_finish(nl_msg *, void *arg)
{
	static_cast<Exchange *>(arg)->done = true;
	return NL_STOP;
}

int on_error(sockaddr_nl *, nlmsgerr *e, void *arg)
{
	auto *x = static_cast<Exchange *>(arg);
	x->err = e->error < 0 ? -e->error : e->error;
	// libnl hands us the payload; the message starts one header before it.
	const auto *hdr = reinterpret_cast<const nlmsghdr *>(reinterpret_cast<const char *>(e) - NLMSG_HDRLEN);
	x->extack = netlink_extack_message(hdr, hdr->nlmsg_len);
	x->done = true;
	return NL_STOP;
}

} // namespace

std::string netlink_extack_message(const void *message, std::size_t length)
{
	if (!message || length < NLMSG_HDRLEN + sizeof(nlmsgerr))
		return {};
	const auto *hdr = static_cast<const nlmsghdr *>(message);
	if (hdr->nlmsg_type != NLMSG_ERROR || !(hdr->nlmsg_flags & NLM_F_ACK_TLVS) || hdr->nlmsg_len > length ||
	    hdr->nlmsg_len < NLMSG_HDRLEN + sizeof(nlmsgerr))
		return {};
	const auto *payload = static_cast<const char *>(message) + NLMSG_HDRLEN;
	nlmsgerr e;
	std::memcpy(&e, payload, sizeof(e));
	// The echoed request is whole unless NLM_F_CAPPED; the TLVs follow it.
	std::size_t off = sizeof(nlmsgerr);
	if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) {
		if (e.msg.nlmsg_len < NLMSG_HDRLEN)
			return {};
		off += e.msg.nlmsg_len - NLMSG_HDRLEN;
	}
	off = NLMSG_ALIGN(off);
	const std::size_t payload_len = hdr->nlmsg_len - NLMSG_HDRLEN;
	if (off >= payload_len)
		return {};
	// Walk the TLVs by hand (read-only, every length checked) for the message.
	std::size_t pos = off;
	while (pos + sizeof(nlattr) <= payload_len) {
		nlattr a;
		std::memcpy(&a, payload + pos, sizeof(a));
		if (a.nla_len < sizeof(nlattr) || pos + a.nla_len > payload_len)
			return {};
		if ((a.nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			const char *s = payload + pos + sizeof(nlattr);
			return std::string(s, strnlen(s, a.nla_len - sizeof(nlattr)));
		}
		pos += NLA_ALIGN(a.nla_len);
	}
	return {};
}

struct KmodClient::Impl {
	nl_sock *sock = nullptr;
	int family = -1;

	~Impl()
	{
		if (sock)
			nl_socket_free(sock);
	}

	// Sends one request and reads until its ACK or error (a dump: until
	// its NLMSG_DONE). Returns false when the kernel marked the dump
	// interrupted (NLM_F_DUMP_INTR: the data changed under it; read whole,
	// to be done again).
	bool exchange(int cmd, const std::function<void(nl_msg *)> &fill,
		      const std::function<void(nlmsghdr *)> &on_reply, bool dump = false)
	{
		const std::string doing = std::string("hwsig ") + command_name(cmd);
		MsgPtr msg(nlmsg_alloc());
		if (!msg)
			throw Error("building " + doing, ENOMEM);
		if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, dump ? NLM_F_DUMP : 0,
				 static_cast<std::uint8_t>(cmd), HWSIG_GENL_VERSION))
			throw Error("building " + doing, ENOMEM);
		if (fill)
			fill(msg.get());
		CbPtr cb(nl_cb_clone(nl_socket_get_cb(sock)));
		if (!cb)
			throw Error("building " + doing, ENOMEM);
		Exchange x;
		x.on_reply = on_reply;
		nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &x);
		nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, on_ack, &x);
		nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &x);
		nl_cb_err(cb.get(), NL_CB_CUSTOM, on_error, &x);
		if (int r = nl_send_auto(sock, msg.get()); r < 0)
			throw_nl("sending " + doing, r);
		bool interrupted = false;
		while (!x.done) {
			int r = nl_recvmsgs(sock, cb.get());
			// libnl reads an interrupted dump to its end, then says so.
			if (r == -NLE_DUMP_INTR)
				interrupted = true;
			else if (r < 0 && !x.done)
				throw_nl("receiving the reply to " + doing +
					 (r == -NLE_AGAIN ? " (timed out: is hwsig.ko stuck?)" : ""), r);
		}
		if (x.err) {
			// "hwsig CONFIGURE (kernel: unknown PMU type 30583): Invalid argument"
			std::string what = doing;
			if (!x.extack.empty())
				what += " (kernel: " + x.extack + ")";
			else if (x.err == EPERM)
				what += " (needs CAP_PERFMON or CAP_SYS_ADMIN)";
			throw Error(what, x.err);
		}
		if (x.parse_error)
			std::rethrow_exception(x.parse_error);
		return !interrupted;
	}
};

KmodClient::KmodClient() : impl_(std::make_unique<Impl>())
{
	impl_->sock = nl_socket_alloc();
	if (!impl_->sock)
		throw Error("allocating a netlink socket", ENOMEM);
	if (int r = genl_connect(impl_->sock); r < 0)
		throw_nl("connecting to generic netlink", r);
	const int fd = nl_socket_get_fd(impl_->sock);
	int one = 1;
	// Without this the kernel drops NL_SET_ERR_MSG texts; old kernels
	// refuse the option and simply send none.
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	// A module that never answers must not hang hwsigctl.
	timeval tv{5, 0};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	impl_->family = genl_ctrl_resolve(impl_->sock, HWSIG_GENL_NAME);
	if (impl_->family < 0) {
		if (impl_->family == -NLE_OBJ_NOTFOUND)
			throw KmodNotLoaded("resolving generic netlink family \"" HWSIG_GENL_NAME
				    "\" (is hwsig.ko loaded?)",
				    ENOENT);
		throw_nl("resolving generic netlink family \"" HWSIG_GENL_NAME "\"", impl_->family);
	}
}

KmodNotLoaded::KmodNotLoaded(const std::string &doing, int err) : Error(doing, err) {}

bool kmod_attr_known(KmodAttrSet set, int attr)
{
	switch (set) {
	case KmodAttrSet::Top: return listed(kTopAttrs, attr);
	case KmodAttrSet::Event: return listed(kEventAttrs, attr);
	case KmodAttrSet::StatusEntry: return listed(kStatusAttrs, attr);
	}
	return false;
}

KmodClient::~KmodClient() = default;
KmodClient::KmodClient(KmodClient &&) noexcept = default;
KmodClient &KmodClient::operator=(KmodClient &&) noexcept = default;

int KmodClient::family_id() const noexcept
{
	return impl_ ? impl_->family : -1;
}

namespace {

void parse_top(nlmsghdr *h, nlattr **tb, const char *what)
{
	if (int r = genlmsg_parse(h, 0, tb, HWSIG_ATTR_MAX, top_policy()); r < 0)
		throw_nl(std::string("parsing the hwsig ") + what + " reply", r);
}

} // namespace

KmodInfo KmodClient::get_info()
{
	KmodInfo info;
	bool got = false;
	impl_->exchange(HWSIG_CMD_GET_INFO, nullptr, [&](nlmsghdr *h) {
		nlattr *tb[HWSIG_ATTR_MAX + 1];
		parse_top(h, tb, "GET_INFO");
		if (!tb[HWSIG_ATTR_ABI_VERSION] || !tb[HWSIG_ATTR_COMPAT_VERSION])
			bad_reply("GET_INFO without ABI_VERSION/COMPAT_VERSION");
		take(tb, HWSIG_ATTR_ABI_VERSION, "ABI_VERSION", info.abi_version);
		take(tb, HWSIG_ATTR_COMPAT_VERSION, "COMPAT_VERSION", info.compat_version);
		take(tb, HWSIG_ATTR_NR_CPU_IDS, "NR_CPU_IDS", info.nr_cpu_ids);
		take(tb, HWSIG_ATTR_NR_ONLINE_CPUS, "NR_ONLINE_CPUS", info.nr_online_cpus);
		take(tb, HWSIG_ATTR_RING_RECORDS, "RING_RECORDS", info.ring_records);
		take(tb, HWSIG_ATTR_RECORD_SIZE, "RECORD_SIZE", info.record_size);
		take(tb, HWSIG_ATTR_MMAP_SIZE, "MMAP_SIZE", info.mmap_size);
		take(tb, HWSIG_ATTR_SAMPLE_INTERVAL_NS, "SAMPLE_INTERVAL_NS", info.sample_interval_ns);
		take(tb, HWSIG_ATTR_MAX_EVENTS, "MAX_EVENTS", info.max_events);
		take(tb, HWSIG_ATTR_MIN_INTERVAL_NS, "MIN_INTERVAL_NS", info.min_interval_ns);
		take(tb, HWSIG_ATTR_MAX_INTERVAL_NS, "MAX_INTERVAL_NS", info.max_interval_ns);
		take(tb, HWSIG_ATTR_MAX_RING_RECORDS, "MAX_RING_RECORDS", info.max_ring_records);
		std::uint8_t running = 0;
		take(tb, HWSIG_ATTR_RUNNING, "RUNNING", running);
		info.running = running != 0;
		take(tb, HWSIG_ATTR_CONFIG_GENERATION, "CONFIG_GENERATION", info.config_generation);
		take(tb, HWSIG_ATTR_CONFIG_FLAGS, "CONFIG_FLAGS", info.config_flags);
		take(tb, HWSIG_ATTR_RING_BYTES_MAX, "RING_BYTES_MAX", info.ring_bytes_max);
		take(tb, HWSIG_ATTR_RING_BYTES, "RING_BYTES", info.ring_bytes);
		if (tb[HWSIG_ATTR_EVENTS])
			info.events = parse_events(tb[HWSIG_ATTR_EVENTS]);
		got = true;
	});
	if (!got)
		throw Error("hwsig GET_INFO: the module sent no reply", EPROTO);
	if (std::string why = abi_mismatch(info.abi_version, info.compat_version); !why.empty())
		throw Error("refusing hwsig.ko: " + why, EPROTO);
	return info;
}

void KmodClient::configure(const KmodConfig &config)
{
	if (config.events.size() > HWSIG_MAX_EVENTS)
		throw Error("configuring hwsig: " + std::to_string(config.events.size()) +
				    " events, the module takes at most " + std::to_string(HWSIG_MAX_EVENTS),
			    EINVAL);
	for (const auto &e : config.events)
		if (e.name.empty() || e.name.size() >= HWSIG_EVENT_NAME_MAX)
			throw Error("configuring hwsig: event name \"" + e.name + "\" must be 1.." +
					    std::to_string(HWSIG_EVENT_NAME_MAX - 1) + " bytes",
				    EINVAL);
	impl_->exchange(
		HWSIG_CMD_CONFIGURE,
		[&](nl_msg *m) {
			int r = nla_put_u64(m, HWSIG_ATTR_SAMPLE_INTERVAL_NS, config.sample_interval_ns);
			if (r >= 0 && config.ring_records)
				r = nla_put_u32(m, HWSIG_ATTR_RING_RECORDS, *config.ring_records);
			if (r >= 0 && config.flags)
				r = nla_put_u32(m, HWSIG_ATTR_CONFIG_FLAGS, config.flags);
			nlattr *events = r >= 0 ? nla_nest_start(m, HWSIG_ATTR_EVENTS) : nullptr;
			if (!events)
				throw Error("building hwsig CONFIGURE", EMSGSIZE);
			for (const auto &e : config.events) {
				nlattr *ev = nla_nest_start(m, HWSIG_ATTR_EVENT);
				if (!ev || nla_put_string(m, HWSIG_EVENT_ATTR_NAME, e.name.c_str()) < 0 ||
				    nla_put_u32(m, HWSIG_EVENT_ATTR_PMU_TYPE, e.pmu_type) < 0 ||
				    nla_put_u64(m, HWSIG_EVENT_ATTR_CONFIG, e.config) < 0 ||
				    nla_put_u64(m, HWSIG_EVENT_ATTR_CONFIG1, e.config1) < 0 ||
				    nla_put_u64(m, HWSIG_EVENT_ATTR_CONFIG2, e.config2) < 0 ||
				    nla_put_s32(m, HWSIG_EVENT_ATTR_CPU, e.cpu) < 0)
					throw Error("building hwsig CONFIGURE", EMSGSIZE);
				nla_nest_end(m, ev);
			}
			nla_nest_end(m, events);
		},
		nullptr);
}

void KmodClient::start()
{
	impl_->exchange(HWSIG_CMD_START, nullptr, nullptr);
}

void KmodClient::stop()
{
	impl_->exchange(HWSIG_CMD_STOP, nullptr, nullptr);
}

// GET_STATUS is a dump: the summary, then one message per CPU with that
// CPU's entries, each message carrying the configuration's generation. A
// dump the kernel marks interrupted, or whose messages name two
// generations, is done again: entries of two configurations are never
// mixed.
KmodStatus KmodClient::get_status()
{
	constexpr int kAttempts = 10;
	for (int attempt = 1;; attempt++) {
		KmodStatus st;
		bool got_summary = false, mixed = false;
		std::int64_t last_cpu = -1;
		const bool whole = impl_->exchange(
			HWSIG_CMD_GET_STATUS, nullptr,
			[&](nlmsghdr *h) {
				nlattr *tb[HWSIG_ATTR_MAX + 1];
				parse_top(h, tb, "GET_STATUS");
				if (!tb[HWSIG_ATTR_CONFIG_GENERATION])
					bad_reply("GET_STATUS message without CONFIG_GENERATION");
				std::uint64_t gen = 0;
				take(tb, HWSIG_ATTR_CONFIG_GENERATION, "CONFIG_GENERATION", gen);
				if (!tb[HWSIG_ATTR_STATUS_CPU]) {
					if (got_summary)
						bad_reply("GET_STATUS dump with two summaries");
					got_summary = true;
					std::uint8_t running = 0;
					take(tb, HWSIG_ATTR_RUNNING, "RUNNING", running);
					st.running = running != 0;
					st.config_generation = gen;
					take(tb, HWSIG_ATTR_SAMPLE_INTERVAL_NS, "SAMPLE_INTERVAL_NS", st.sample_interval_ns);
					take(tb, HWSIG_ATTR_SAMPLE_COST_AVG_NS, "SAMPLE_COST_AVG_NS", st.sample_cost_avg_ns);
					take(tb, HWSIG_ATTR_SAMPLE_COST_MAX_NS, "SAMPLE_COST_MAX_NS", st.sample_cost_max_ns);
					take(tb, HWSIG_ATTR_SAMPLE_LATENCY_AVG_NS, "SAMPLE_LATENCY_AVG_NS",
					     st.sample_latency_avg_ns);
					take(tb, HWSIG_ATTR_SAMPLE_LATENCY_MAX_NS, "SAMPLE_LATENCY_MAX_NS",
					     st.sample_latency_max_ns);
					take(tb, HWSIG_ATTR_TICKS_OVERRUN, "TICKS_OVERRUN", st.ticks_overrun);
					take(tb, HWSIG_ATTR_TICKS_SKIPPED, "TICKS_SKIPPED", st.ticks_skipped);
					take(tb, HWSIG_ATTR_RECORDS_WRITTEN, "RECORDS_WRITTEN", st.records_written);
					take(tb, HWSIG_ATTR_RECORDS_OVERWRITTEN, "RECORDS_OVERWRITTEN",
					     st.records_overwritten);
					return;
				}
				if (!got_summary)
					bad_reply("GET_STATUS dump: a CPU's entries before the summary");
				if (gen != st.config_generation)
					mixed = true;
				std::uint32_t cpu = 0;
				take(tb, HWSIG_ATTR_STATUS_CPU, "STATUS_CPU", cpu);
				if (static_cast<std::int64_t>(cpu) <= last_cpu)
					bad_reply("GET_STATUS dump: CPU " + std::to_string(cpu) + " out of order");
				last_cpu = cpu;
				if (!tb[HWSIG_ATTR_STATUS])
					bad_reply("GET_STATUS dump: CPU " + std::to_string(cpu) + " without entries");
				nlattr *a;
				int rem;
				nla_for_each_nested(a, tb[HWSIG_ATTR_STATUS], rem) {
					if (nla_type(a) != HWSIG_ATTR_STATUS_ENTRY)
						continue;
					KmodStatusEntry e = parse_status_entry(a);
					if (e.cpu != cpu)
						bad_reply("GET_STATUS dump: an entry of CPU " + std::to_string(e.cpu) +
							  " in CPU " + std::to_string(cpu) + "'s message");
					st.entries.push_back(e);
				}
			},
			true);
		if (!got_summary)
			throw Error("hwsig GET_STATUS: the module sent no summary", EPROTO);
		if (whole && !mixed)
			return st;
		if (attempt == kAttempts)
			throw Error("hwsig GET_STATUS: the configuration changed during each of " +
					    std::to_string(kAttempts) + " dumps",
				    EAGAIN);
	}
}

} // namespace hwsig
