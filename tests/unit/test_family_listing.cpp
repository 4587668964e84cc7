// `hwsigctl metrics --prometheus` lists prometheus_families(); the exporter
// is render_prometheus(). Both read the series registry, by two pieces of
// code: the exposition of fixture hosts (their own series and the
// synthetic PMU, uncore and BPF ones) holds the listing to what is really
// exported: every family it shows is listed, with its type, HELP text and
// a superset of the label names of its samples.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "fixture_exposition.h"
#include "hwsig/family_listing.h"
#include "hwsig/render_prometheus.h"

using namespace hwsig;

namespace {

struct Exported {
	std::string type, help;
	std::set<std::string> labels;
};

// The 0.0.4 text: # HELP, # TYPE and the label names of each sample.
std::map<std::string, Exported> exported_families(const std::string &text)
{
	static const std::regex meta(R"(^# (HELP|TYPE) (\S+) (.*)$)");
	static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$)");
	static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=\"(?:[^\"\\]|\\.)*\")");
	std::map<std::string, Exported> out;
	std::istringstream in(text);
	std::string line, family;
	while (std::getline(in, line)) {
		std::smatch m;
		if (std::regex_match(line, m, meta)) {
			family = m[2].str();
			(m[1] == "HELP" ? out[family].help : out[family].type) = m[3].str();
		} else if (std::regex_match(line, m, sample)) {
			const std::string labels = m[2].str();
			for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it)
				if ((*it)[1] != "le")
					out[family].labels.insert((*it)[1].str());
		}
	}
	return out;
}

std::string exposition(const std::string &fixture, bool per_cpu)
{
	const auto fx = hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/" + fixture, true);
	return render_prometheus(fx.input(per_cpu), ExpositionFormat::Prometheus004);
}

} // namespace

TEST_CASE("the family listing is what fixture hosts export", "[render][listing][fixture]")
{
	std::map<std::string, FamilyRow> listed;
	for (const FamilyRow &f : prometheus_families()) {
		INFO(f.family);
		CHECK(listed.emplace(f.family, f).second); // each family once
	}
	REQUIRE(listed.size() > 60);
	std::set<std::string> seen;
	for (const char *fixture : {"xeon-2s-256cpu-8node", "kvm-host", "amd-1s-64cpu-4node", "resctrl-xeon-2s"}) {
		for (bool per_cpu : {false, true}) {
			for (const auto &[family, e] : exported_families(exposition(fixture, per_cpu))) {
				INFO(fixture << (per_cpu ? " per-CPU: " : ": ") << family);
				const auto row = listed.find(family);
				REQUIRE(row != listed.end());
				// 0.0.4 has no info type: an info family is a gauge.
				CHECK(e.type == (row->second.type == "info" ? "gauge" : row->second.type));
				CHECK(e.help == row->second.help);
				for (const std::string &name : e.labels) {
					INFO("label " << name);
					CHECK(std::count(row->second.labels.begin(), row->second.labels.end(), name) == 1);
				}
				seen.insert(family);
			}
		}
	}
	// The fixtures and synthetic series reach most families; the rest
	// (per-VM block, culprit cells...) are held by test_render_prometheus.
	INFO("exported " << seen.size() << " of " << listed.size() << " listed families");
	CHECK(seen.size() * 10 >= listed.size() * 6);
}

TEST_CASE("the family listing names series, scale and the ids that read them", "[render][listing]")
{
	std::map<std::string, FamilyRow> listed;
	for (const FamilyRow &f : prometheus_families())
		listed.emplace(f.family, f);
	const FamilyRow &steal = listed.at("hwsig_cpu_steal_seconds_total");
	CHECK(steal.type == "counter");
	CHECK(steal.source == "stat.steal");
	CHECK(steal.scale == "\xC3\xB7 100"); // ÷ 100: USER_HZ ticks to seconds
	CHECK(steal.labels == std::vector<std::string>{"cpu"});
	CHECK(steal.ids == std::vector<std::string>{"sched.steal_ratio"});
	CHECK(listed.at("hwsig_dram_read_bytes_total").scale == "\xC3\x97 64");
	CHECK(listed.at("hwsig_node_hugepage_utilization_ratio").labels == std::vector<std::string>{"node", "size"});
	CHECK(listed.at("hwsig_vm_runq_wait_seconds").type == "histogram");
	CHECK(listed.at("hwsig_vm_runq_wait_seconds").labels == std::vector<std::string>{"vm"});
	CHECK(listed.at("hwsig_vm_wait_behind_seconds_total").labels == std::vector<std::string>{"vm", "culprit"});
	CHECK(listed.count("hwsig_cpu_steal_seconds") == 0);
	CHECK(listed.at("hwsig_build_info").type == "info");
}
