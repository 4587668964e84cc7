// Dump rules (hwsigd's dump-rule): parse errors name the column; a rule
// fires after `for` intervals that hold and re-arms after as many that do
// not; scopes match exactly or by a trailing '*'.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hwsig/docs.h"
#include "hwsig/dump_rule.h"
#include "hwsig/error.h"

using namespace hwsig;

namespace {

Interval with(const std::string &id, const std::string &scope, double value)
{
	Interval iv;
	iv.metrics.push_back({id, scope, value, "pct", "procfs", "", Layer::Cpu});
	return iv;
}

std::string refusal(const std::string &text)
{
	try {
		DumpRule::parse(text);
	} catch (const Error &e) {
		return e.what();
	}
	return "";
}

// Which of the values (one interval each) fire.
std::vector<int> fires(DumpRule r, const std::string &scope, const std::vector<double> &values)
{
	std::vector<int> out;
	for (std::size_t i = 0; i < values.size(); ++i)
		if (r.observe(with("psi.cpu_some_pct", scope, values[i])))
			out.push_back(static_cast<int>(i));
	return out;
}

} // namespace

TEST_CASE("dump rules: fire after N holding intervals, re-arm after N quiet ones", "[dump][rule]")
{
	auto r = DumpRule::parse("psi.cpu_some_pct > 20 for 3");
	CHECK(fires(r, "system", {25, 25, 10, 25, 25, 25, 25, 25, 5, 5, 5, 30, 30, 30}) ==
	      std::vector<int>{5, 13});
	// 20 is not > 20; >= takes it.
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct > 20"), "system", {20, 20.0001}) == std::vector<int>{1});
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct >= 20"), "system", {20}) == std::vector<int>{0});
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct < 1 for 2 intervals"), "system", {0.5, 0.5, 0.5}) ==
	      std::vector<int>{1});
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct <= 1"), "system", {1.5, 1}) == std::vector<int>{1});
}

TEST_CASE("dump rules: scopes", "[dump][rule]")
{
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct > 20"), "vm:web01", {50}).empty()); // default: system
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct{vm:*} > 20"), "vm:web01", {50}) == std::vector<int>{0});
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct{vm:*} > 20"), "system", {50}).empty());
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct{vm:web01} > 20"), "vm:web02", {50}).empty());
	CHECK(fires(DumpRule::parse("psi.cpu_some_pct{vm:web01} > 20"), "vm:web01", {50}) == std::vector<int>{0});
	// Another id does not count.
	DumpRule r = DumpRule::parse("sched.runq_wait_p99_us > 5000");
	CHECK(!r.observe(with("psi.cpu_some_pct", "system", 9999)));
}

TEST_CASE("dump rules: what does not parse says where", "[dump][rule]")
{
	CHECK(refusal("psi.cpu_some_pct > 20 for 3").empty());
	CHECK(refusal("") == "column 1: expected a metric id (e.g. psi.cpu_some_pct)");
	CHECK(refusal("psi.nope > 1") ==
	      "column 1: 'psi.nope' is not a metric id of the catalog (" HWSIG_DOC("metrics.rst") ")");
	CHECK(refusal("psi.cpu_some_pct >> 20") == "column 19: expected a number");
	CHECK(refusal("psi.cpu_some_pct = 20") == "column 18: expected '>', '>=', '<' or '<='");
	CHECK(refusal("psi.cpu_some_pct > 20 during 3") == "column 23: expected 'for N' or the end of the rule");
	CHECK(refusal("psi.cpu_some_pct > 20 for 0") ==
	      "column 27: 'for' takes a whole number of intervals, 1 .. 100000");
	CHECK(refusal("psi.cpu_some_pct > 20 for 2.5") ==
	      "column 27: 'for' takes a whole number of intervals, 1 .. 100000");
	CHECK(refusal("psi.cpu_some_pct{vm:web > 20") == "column 29: expected '}'");
	CHECK(refusal("psi.cpu_some_pct{v*m} > 20") ==
	      "column 22: a scope is 'system', 'vm:NAME', 'dev:*'...: '*' only at its end");
	CHECK(refusal("psi.cpu_some_pct > 20 for 3 intervals now") ==
	      "column 39: nothing may follow 'for N [intervals]'");
}
