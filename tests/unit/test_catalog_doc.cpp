// Documentation/metrics.rst is the user-visible contract and catalog.cpp
// is what the program emits: they cannot drift apart. Every id the document
// defines (a row of the CPU table, or a definition heading "id, id *(ext)*
// (unit; scopes)") is in the catalog, in the same order, with the same unit,
// and the other way round, except for a gauge read as it is (one series,
// scale 1): its catalog line and its series' registry help define it, and
// `hwsigctl metrics` shows them; the page may define it at more length.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hwsig/catalog.h"
#include "hwsig/series.h"

namespace {

using IdUnit = std::pair<std::string, std::string>;

// The document's unit spelling -> the catalog's.
std::string catalog_unit(std::string unit)
{
	static const std::regex literal("``([^`]+)``");
	std::smatch m;
	if (std::regex_search(unit, m, literal))
		return m[1].str(); // "°C, unit ``degC``"
	if (unit == "\xC2\xB5s")    // µs
		return "us";
	return unit;
}

std::vector<IdUnit> documented(const std::string &text)
{
	static const std::regex table_row(R"(^([a-z]+\.[a-z0-9_]+) {2,}(\S+) {2,}\S.*$)");
	static const std::regex heading(
		R"(^([a-z]+\.[a-z0-9_]+(?: \*\(ext\)\*)?(?:, [a-z]+\.[a-z0-9_]+(?: \*\(ext\)\*)?)*) \(([^;)]+)[;)].*$)");
	static const std::regex id(R"([a-z]+\.[a-z0-9_]+)");
	std::vector<IdUnit> out;
	std::istringstream in(text);
	std::string line;
	while (std::getline(in, line)) {
		std::smatch m;
		if (std::regex_match(line, m, table_row)) {
			out.emplace_back(m[1].str(), m[2].str());
		} else if (std::regex_match(line, m, heading)) {
			const std::string ids = m[1].str(), unit = catalog_unit(m[2].str());
			for (std::sregex_iterator it(ids.begin(), ids.end(), id), end; it != end; ++it)
				out.emplace_back(it->str(), unit);
		}
	}
	return out;
}

} // namespace

TEST_CASE("metrics.rst and the catalog list the same ids, in order, with the same units", "[catalog][docs]")
{
	std::ifstream f(std::string(HWSIG_SOURCE_DIR) + "/Documentation/metrics.rst");
	REQUIRE(f);
	std::stringstream text;
	text << f.rdbuf();
	const auto doc = documented(text.str());
	auto in_doc = [&doc](const std::string &id) {
		return std::any_of(doc.begin(), doc.end(), [&id](const IdUnit &d) { return d.first == id; });
	};
	std::vector<IdUnit> cat;
	for (const auto &def : hwsig::catalog()) {
		const auto &r = def.rule;
		const bool plain_gauge = r.kind == hwsig::Rule::Kind::Gauge && r.num.size() == 1 && r.scale == 1.0;
		if (plain_gauge && !in_doc(def.id)) {
			INFO(def.id << ": a plain gauge the page leaves to its catalog line and registry help");
			const hwsig::series::Def *row = hwsig::series::find(r.num[0]);
			REQUIRE(row);
			CHECK(std::string(row->help).size() > 20);
			CHECK(def.description.size() > 20);
			continue;
		}
		cat.emplace_back(def.id, def.unit);
	}
	REQUIRE(doc.size() > 30); // the parser found the document's definitions
	for (const auto &[id, unit] : cat) {
		bool listed = false;
		for (const auto &d : doc)
			listed = listed || d.first == id;
		INFO("catalog id " << id << " (" << unit << ")");
		CHECK(listed);
	}
	for (const auto &[id, unit] : doc) {
		bool in_catalog = false;
		for (const auto &c : cat)
			in_catalog = in_catalog || c.first == id;
		INFO("documented id " << id << " (" << unit << ")");
		CHECK(in_catalog);
	}
	// Same order, same units.
	for (std::size_t i = 0; i < std::min(doc.size(), cat.size()); ++i) {
		INFO("position " << i);
		CHECK(doc[i] == cat[i]);
	}
	CHECK(doc.size() == cat.size());
}

TEST_CASE("the metrics.rst parser reads both forms", "[catalog][docs]")
{
	auto d = documented("cpu.ipc                insn/cycle  Δinstructions / Δcycles\n"
			    "io.read_bps, io.write_bps *(ext)* (B/s)\n"
			    "   body text io.not_a_heading (x)\n"
			    "thermal.headroom_c (\xC2\xB0""C, unit ``degC``; ``zone:NAME``)\n"
			    "sched.runq_wait_p50_us, sched.runq_wait_p99_us (\xC2\xB5s; ``system``)\n");
	std::vector<IdUnit> want = {{"cpu.ipc", "insn/cycle"},        {"io.read_bps", "B/s"},
				    {"io.write_bps", "B/s"},              {"thermal.headroom_c", "degC"},
				    {"sched.runq_wait_p50_us", "us"},     {"sched.runq_wait_p99_us", "us"}};
	CHECK(d == want);
}
