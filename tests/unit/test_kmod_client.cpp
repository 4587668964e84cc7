// What can be checked of the netlink client without hwsig.ko: the extack
// parser on hand-built NLMSG_ERROR messages (as netlink_ack() lays them out),
// the client's refusal when the family is not registered, and its policy
// tables against the ABI header.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <linux/netlink.h>
#include <vector>

#include "hwsig/error.h"
#include "hwsig/kmod.h"

namespace {

void put_attr(std::vector<char> &buf, std::uint16_t type, const std::string &text)
{
	nlattr a;
	a.nla_type = type;
	a.nla_len = static_cast<std::uint16_t>(sizeof(nlattr) + text.size() + 1);
	const std::size_t at = buf.size();
	buf.resize(at + NLA_ALIGN(a.nla_len), 0);
	std::memcpy(buf.data() + at, &a, sizeof(a));
	std::memcpy(buf.data() + at + sizeof(a), text.c_str(), text.size() + 1);
}

// An NLMSG_ERROR for a request with `request_payload` bytes of payload.
std::vector<char> error_message(int err, std::size_t request_payload, bool capped,
				const std::vector<std::pair<std::uint16_t, std::string>> &tlvs)
{
	std::vector<char> buf(NLMSG_HDRLEN + sizeof(nlmsgerr), 0);
	nlmsgerr e{};
	e.error = -err;
	e.msg.nlmsg_len = static_cast<std::uint32_t>(NLMSG_HDRLEN + request_payload);
	e.msg.nlmsg_type = 0x20;
	std::memcpy(buf.data() + NLMSG_HDRLEN, &e, sizeof(e));
	if (!capped)
		buf.resize(buf.size() + request_payload, 'x');
	buf.resize(NLMSG_ALIGN(buf.size()), 0);
	for (const auto &[type, text] : tlvs)
		put_attr(buf, type, text);
	nlmsghdr h{};
	h.nlmsg_len = static_cast<std::uint32_t>(buf.size());
	h.nlmsg_type = NLMSG_ERROR;
	h.nlmsg_flags = static_cast<std::uint16_t>((tlvs.empty() ? 0 : NLM_F_ACK_TLVS) | (capped ? NLM_F_CAPPED : 0));
	std::memcpy(buf.data(), &h, sizeof(h));
	return buf;
}

} // namespace

TEST_CASE("extack message after the echoed request", "[kmod]")
{
	auto m = error_message(EINVAL, 37, false, {{NLMSGERR_ATTR_OFFS, "ab"}, {NLMSGERR_ATTR_MSG, "no PMU has this type"}});
	CHECK(hwsig::netlink_extack_message(m.data(), m.size()) == "no PMU has this type");
}

TEST_CASE("extack message of a capped error", "[kmod]")
{
	auto m = error_message(EPERM, 400, true, {{NLMSGERR_ATTR_MSG, "hwsig: nothing configured"}});
	CHECK(hwsig::netlink_extack_message(m.data(), m.size()) == "hwsig: nothing configured");
}

TEST_CASE("no or malformed extack yields no message, never a read past the end", "[kmod]")
{
	auto none = error_message(EINVAL, 8, false, {});
	CHECK(hwsig::netlink_extack_message(none.data(), none.size()).empty());

	auto m = error_message(EINVAL, 8, false, {{NLMSGERR_ATTR_MSG, "text"}});
	// Claimed longer than the buffer.
	CHECK(hwsig::netlink_extack_message(m.data(), m.size() - 4).empty());
	// An attribute whose length runs past the message.
	auto bad = m;
	nlattr a;
	const std::size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nlmsgerr) + 8);
	std::memcpy(&a, bad.data() + at, sizeof(a));
	a.nla_len = 200;
	std::memcpy(bad.data() + at, &a, sizeof(a));
	CHECK(hwsig::netlink_extack_message(bad.data(), bad.size()).empty());
	// The echoed request claims to be longer than the whole error.
	auto huge = m;
	nlmsgerr e;
	std::memcpy(&e, huge.data() + NLMSG_HDRLEN, sizeof(e));
	e.msg.nlmsg_len = 100000;
	std::memcpy(huge.data() + NLMSG_HDRLEN, &e, sizeof(e));
	CHECK(hwsig::netlink_extack_message(huge.data(), huge.size()).empty());
	CHECK(hwsig::netlink_extack_message(m.data(), 10).empty());
	CHECK(hwsig::netlink_extack_message(nullptr, 100).empty());
}

TEST_CASE("a missing hwsig family is ENOENT with a hint, not a hang", "[kmod]")
{
	// On a host where hwsig.ko is loaded this checks nothing about absence,
	// so it only asserts when the family really is missing.
	try {
		hwsig::KmodClient client;
		CHECK(client.family_id() > 0);
	} catch (const hwsig::KmodNotLoaded &e) {
		// The type says "not loaded"; callers need not read the text.
		CHECK(e.err() == ENOENT);
		CHECK_THAT(e.what(), Catch::Contains("is hwsig.ko loaded?"));
	}
}

TEST_CASE("the client has a policy for every attribute of <linux/hwsig.h>", "[kmod]")
{
	// An attribute the module gains must be added to kmod_client.cpp's
	// tables (and parsed) before this passes again.
	for (int a = 1; a <= HWSIG_ATTR_MAX; a++) {
		INFO("HWSIG_ATTR " << a);
		CHECK(hwsig::kmod_attr_known(hwsig::KmodAttrSet::Top, a));
	}
	for (int a = 1; a <= HWSIG_EVENT_ATTR_MAX; a++) {
		INFO("HWSIG_EVENT_ATTR " << a);
		CHECK(hwsig::kmod_attr_known(hwsig::KmodAttrSet::Event, a));
	}
	for (int a = 1; a <= HWSIG_STATUS_ATTR_MAX; a++) {
		INFO("HWSIG_STATUS_ATTR " << a);
		CHECK(hwsig::kmod_attr_known(hwsig::KmodAttrSet::StatusEntry, a));
	}
	// Nothing beyond the ABI, nothing for the reserved 0.
	CHECK_FALSE(hwsig::kmod_attr_known(hwsig::KmodAttrSet::Top, 0));
	CHECK_FALSE(hwsig::kmod_attr_known(hwsig::KmodAttrSet::Top, HWSIG_ATTR_MAX + 1));
	CHECK_FALSE(hwsig::kmod_attr_known(hwsig::KmodAttrSet::Event, HWSIG_EVENT_ATTR_MAX + 1));
	CHECK_FALSE(hwsig::kmod_attr_known(hwsig::KmodAttrSet::StatusEntry, HWSIG_STATUS_ATTR_MAX + 1));
}

TEST_CASE("abi_mismatch wording carries both versions", "[kmod]")
{
	CHECK(hwsig::abi_mismatch(HWSIG_ABI_VERSION, HWSIG_ABI_COMPAT_VERSION).empty());
	const std::string m = hwsig::abi_mismatch(9, 8);
	CHECK_THAT(m, Catch::Contains("ABI 9"));
	CHECK_THAT(m, Catch::Contains(">= 8"));
	CHECK_THAT(m, Catch::Contains("this reader is ABI " + std::to_string(HWSIG_ABI_VERSION)));
}
