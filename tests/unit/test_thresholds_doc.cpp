// Documentation/thresholds.rst's key table against threshold_defs(): the
// same keys, defaults and units (a changed default must change the page).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "hwsig/thresholds.h"

TEST_CASE("thresholds.rst lists every key with its default", "[thresholds][doc]")
{
	std::ifstream in(std::string(HWSIG_SOURCE_DIR) + "/Documentation/thresholds.rst");
	REQUIRE(in);
	// "``key``  default  unit  source...": the first columns of a row.
	std::map<std::string, std::pair<std::string, std::string>> rows;
	std::string line;
	bool keys_section = false;
	while (std::getline(in, line)) {
		keys_section = keys_section || line == "The keys";
		if (!keys_section || line.rfind("``", 0) != 0)
			continue;
		const auto end = line.find("``", 2);
		std::istringstream cols(line.substr(end + 2));
		std::string def, unit;
		cols >> def >> unit;
		rows[line.substr(2, end - 2)] = {def, unit};
	}
	std::size_t keys = 0;
	for (const auto &d : hwsig::threshold_defs()) {
		++keys;
		INFO(d.key);
		REQUIRE(rows.count(d.key));
		char def[32];
		std::snprintf(def, sizeof(def), "%g", d.value);
		CHECK(rows[d.key].first == def);
		// A unitless key's next column is the source's first word.
		if (*d.unit)
			CHECK(rows[d.key].second == d.unit);
	}
	CHECK(rows.size() == keys); // nothing documented that does not exist
}
