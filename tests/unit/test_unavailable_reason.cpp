// The unavailable notes' codes: their names (a contract of /metrics, JSON
// and the snapshot wire), what an errno maps to, and that /metrics exports
// the code alone and only the lasting ones.
#include <catch2/catch.hpp>

#include <cerrno>
#include <set>
#include <sstream>
#include <string>

#include "fixture_exposition.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/unavailable_reason.h"

using namespace hwsig;

namespace {

constexpr UnavailableCode kAll[] = {
	UnavailableCode::disabled,   UnavailableCode::unsupported, UnavailableCode::permission,
	UnavailableCode::read_error, UnavailableCode::malformed,   UnavailableCode::capacity,
	UnavailableCode::no_target,  UnavailableCode::no_events,   UnavailableCode::incomplete,
	UnavailableCode::unknown,
};

// The reason labels of hwsig_unavailable in an exposition.
std::multiset<std::string> reasons(const std::string &text)
{
	std::multiset<std::string> out;
	std::istringstream in(text);
	for (std::string line; std::getline(in, line);) {
		if (line.rfind("hwsig_unavailable{", 0) != 0)
			continue;
		const auto at = line.find("reason=\"");
		REQUIRE(at != std::string::npos);
		const auto from = at + 8;
		out.insert(line.substr(from, line.find('"', from) - from));
	}
	return out;
}

} // namespace

TEST_CASE("unavailable codes: every name reads back as its code, and only those", "[unavailable]")
{
	std::set<std::string> names;
	for (UnavailableCode c : kAll) {
		const std::string name(code_name(c));
		INFO(name);
		CHECK(parse_unavailable_code(name) == c);
		CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
		names.insert(name);
	}
	CHECK(names.size() == std::size(kAll));
	CHECK(names.count("no_events"));
	CHECK_FALSE(parse_unavailable_code(""));
	CHECK_FALSE(parse_unavailable_code("Unsupported"));
	CHECK_FALSE(parse_unavailable_code("too few requests (3 in the interval, 16 needed)"));
}

TEST_CASE("unavailable codes: transient ones and unknown are not exported", "[unavailable]")
{
	std::set<std::string> exported;
	for (UnavailableCode c : kAll)
		if (alertable(c))
			exported.insert(std::string(code_name(c)));
	CHECK(exported == std::set<std::string>{"disabled", "unsupported", "permission", "read_error", "malformed",
						"capacity", "no_target"});
	CHECK(transient(UnavailableCode::no_events));
	CHECK(transient(UnavailableCode::incomplete));
	CHECK_FALSE(transient(UnavailableCode::unknown));
}

TEST_CASE("unavailable codes: what a failed call's errno says", "[unavailable]")
{
	CHECK(errno_code(EACCES) == UnavailableCode::permission);
	CHECK(errno_code(EPERM) == UnavailableCode::permission);
	CHECK(errno_code(ENOENT) == UnavailableCode::unsupported);
	CHECK(errno_code(EOPNOTSUPP) == UnavailableCode::unsupported);
	CHECK(errno_code(ENODEV) == UnavailableCode::unsupported);
	CHECK(errno_code(EIO) == UnavailableCode::read_error);
	CHECK(errno_code(EINVAL) == UnavailableCode::read_error);
}

TEST_CASE("unavailable codes: a fixture host's /metrics has lasting codes only", "[unavailable][render_prometheus]")
{
	const std::set<std::string> lasting = {"disabled", "unsupported", "permission", "read_error",
					       "malformed", "capacity",    "no_target"};
	for (const char *fixture : {"kvm-host", "debian12-host", "xeon-2s-256cpu-8node", "garbled"}) {
		INFO(fixture);
		const auto fx = hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/" + fixture, false);
		bool any_transient = false;
		for (const auto &n : fx.interval.unavailable) {
			INFO(n.id << " at " << n.scope << ": " << n.reason);
			CHECK(n.code != UnavailableCode::unknown);
			any_transient |= transient(n.code);
		}
		const auto got = reasons(render_prometheus(fx.input(false), ExpositionFormat::Prometheus004));
		CHECK_FALSE(got.empty());
		for (const auto &r : got) {
			INFO(r);
			CHECK(lasting.count(r));
		}
		// The notes had transient ones for the exposition to leave out.
		if (std::string(fixture) == "kvm-host")
			CHECK(any_transient);
	}
}
