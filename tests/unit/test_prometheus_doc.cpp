// Documentation/prometheus.rst is the exporter's contract and the series
// registry (series.h) is what render_prometheus() iterates: its Families
// table must list every family of the registry with its type, labels, source
// series and the catalog ids that read it, and "HELP text" every family's
// HELP line, word for word.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hwsig/catalog.h"
#include "hwsig/series.h"

namespace {

namespace s = hwsig::series;

struct Row {
	std::string type, labels, source, ids;
};

std::string trim(const std::string &t)
{
	const auto b = t.find_first_not_of(' ');
	return b == std::string::npos ? "" : t.substr(b, t.find_last_not_of(' ') - b + 1);
}

std::string prometheus_rst()
{
	std::ifstream f(std::string(HWSIG_SOURCE_DIR) + "/Documentation/prometheus.rst");
	std::stringstream text;
	text << f.rdbuf();
	return text.str();
}

// The rows of the simple table after "Families": its "===" ruler gives the
// columns.
std::map<std::string, Row> families_table(const std::string &text)
{
	std::map<std::string, Row> rows;
	std::istringstream in(text.substr(text.find("\nFamilies\n")));
	std::string line, ruler;
	int rulers = 0;
	while (rulers < 3 && std::getline(in, line)) {
		if (line.rfind("====", 0) == 0) {
			ruler = line;
			++rulers;
			continue;
		}
		if (rulers != 2)
			continue; // before the table, or its header
		std::vector<std::string> cols;
		for (std::size_t at = 0; at < ruler.size();) {
			const std::size_t end = std::min(ruler.find(' ', at), ruler.size());
			// The last column runs to the end of the line.
			const std::size_t len = end == ruler.size() ? std::string::npos : end - at;
			cols.push_back(at < line.size() ? trim(line.substr(at, len)) : "");
			at = ruler.find('=', end);
		}
		rows[cols[0]] = {cols[1], cols[2], cols[3], cols[4]};
	}
	return rows;
}

// "``hwsig_x``" on a line, its HELP text indented on the next.
std::map<std::string, std::string> help_section(const std::string &text)
{
	static const std::regex name(R"(^``(hwsig_[a-z0-9_]+)``$)");
	std::map<std::string, std::string> out;
	std::istringstream in(text.substr(text.find("\nHELP text\n")));
	std::string line, family;
	while (std::getline(in, line)) {
		std::smatch m;
		if (std::regex_match(line, m, name))
			family = m[1].str();
		else if (!family.empty() && line.rfind("   ", 0) == 0)
			out[family] = line.substr(3);
		else
			family.clear();
	}
	return out;
}

// The labels column as the page writes it: the breakdown labels of the host
// family, then what the vm scopes export to hwsig_vm_*.
std::string labels_cell(const s::Def &d)
{
	std::string host;
	if (d.at & s::kAtVq)
		host = "vm, queue";
	for (const auto &[bit, label] : std::vector<std::pair<unsigned, const char *>>{
		     {s::kAtCpu, "[cpu]"}, {s::kAtSocket, "socket"}, {s::kAtNode, "node"},
		     {s::kAtHugepages, "size"}, {s::kAtZone, "zone"}, {s::kAtDev, "device"}})
		if (d.at & bit)
			host += (host.empty() ? "" : ", ") + std::string(label);
	std::string vm;
	if (d.vm == s::VmExport::All && (d.at & s::kAtVm))
		vm = "vm in hwsig_vm_*";
	else if (d.vm != s::VmExport::None && (d.at & s::kAtVmVcpu))
		vm = "vm, vcpu; hwsig_vm_* only";
	else if (d.vm != s::VmExport::None && (d.at & s::kAtVmCulprit))
		vm = "vm, culprit"; // the page adds "(hwsig_vm_*)"
	return host.empty() || vm.empty() ? host + vm : host + "; " + vm;
}

// A trailing "(TX queues)", "(hwsig_vm_*)" in the labels column is a remark.
std::string without_remark(const std::string &cell)
{
	const auto paren = cell.rfind(" (");
	return paren != std::string::npos && cell.back() == ')' ? cell.substr(0, paren) : cell;
}

bool id_matches(const std::string &pattern, const std::string &id)
{
	const auto star = pattern.find('*');
	if (star == std::string::npos)
		return pattern == id;
	const std::string head = pattern.substr(0, star), tail = pattern.substr(star + 1);
	return id.size() >= head.size() + tail.size() && id.compare(0, head.size(), head) == 0 &&
	       id.compare(id.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<std::string> split_ids(const std::string &cell)
{
	std::vector<std::string> out;
	if (cell.empty() || cell[0] == '(')
		return out; // "(the kernel's 10 s average)": a remark, no catalog id
	std::istringstream in(cell);
	std::string id;
	while (std::getline(in, id, ','))
		out.push_back(trim(id));
	return out;
}

const char *type_letter(s::Kind k)
{
	return k == s::Kind::Counter ? "C" : k == s::Kind::Gauge ? "G" : "H";
}

std::string source_cell(const s::Def &d)
{
	if (d.scale == 1)
		return d.name;
	std::ostringstream o;
	o << d.name << " (\xC3\x97 " << d.scale << ")"; // "imc.cas_reads (× 64)"
	return o.str();
}

} // namespace

TEST_CASE("prometheus.rst lists every family of the series registry as exported", "[render][docs]")
{
	const auto rows = families_table(prometheus_rst());
	REQUIRE(rows.size() > 40); // the parser found the table
	std::set<std::string> expected = {"hwsig_unavailable", "hwsig_build_info", "hwsig_vm_info"};
	for (const s::Def &d : s::kRegistry) {
		if (!d.family)
			continue;
		std::vector<std::pair<std::string, std::string>> families = {{"hwsig_" + std::string(d.family),
									       labels_cell(d)}};
		if (d.at & s::kAtNodeHugepages)
			families.push_back({"hwsig_node_" + std::string(d.family), "node, size"});
		if (d.pmu)
			for (const char *times : {"hwsig_pmu_enabled_seconds_total", "hwsig_pmu_running_seconds_total"})
				expected.insert(times);
		const auto reading = hwsig::metrics_reading({d.name});
		for (const auto &[family, labels] : families) {
			expected.insert(family);
			INFO(family << " (" << d.name << ")");
			const auto row = rows.find(family);
			REQUIRE(row != rows.end());
			CHECK(row->second.type == (family.rfind("hwsig_node_", 0) == 0 ? "G" : type_letter(d.kind)));
			CHECK(without_remark(row->second.labels) == labels);
			CHECK(row->second.source == source_cell(d));
			const auto listed = split_ids(row->second.ids);
			for (const std::string &id : reading) {
				bool found = false;
				for (const auto &pattern : listed)
					found = found || id_matches(pattern, id);
				INFO("catalog id " << id << " reads it");
				CHECK(found);
			}
			for (const auto &pattern : listed) {
				bool known = false;
				for (const auto &m : hwsig::catalog())
					known = known || id_matches(pattern, m.id);
				INFO("listed id " << pattern);
				CHECK(known);
			}
		}
	}
	for (const auto &[family, row] : rows) {
		INFO("documented family " << family);
		CHECK(expected.count(family) == 1);
	}
}

TEST_CASE("prometheus.rst has every registry family's HELP text", "[render][docs]")
{
	const auto help = help_section(prometheus_rst());
	REQUIRE(help.size() > 40);
	std::set<std::string> families;
	for (const s::Def &d : s::kRegistry) {
		if (!d.family)
			continue;
		const std::string family = "hwsig_" + std::string(d.family);
		families.insert(family);
		INFO("``" << family << "``\n   " << d.help);
		REQUIRE(help.count(family) == 1);
		CHECK(help.at(family) == d.help);
	}
	for (const auto &[family, text] : help) {
		INFO("documented family " << family);
		CHECK(families.count(family) == 1);
	}
}

TEST_CASE("the prometheus.rst table parser reads columns and remarks", "[render][docs]")
{
	const auto rows = families_table("x\nFamilies\n--------\n"
					 "=======  ====  ===============  ===  ========\n"
					 "family   type  labels           src  ids\n"
					 "=======  ====  ===============  ===  ========\n"
					 "hwsig_a  C     vm, queue (TX)   a.b  x.y, x.z\n"
					 "hwsig_b  G                      c.d  (a remark)\n"
					 "=======  ====  ===============  ===  ========\n"
					 "hwsig_after  C\n");
	REQUIRE(rows.size() == 2);
	CHECK(rows.at("hwsig_a").labels == "vm, queue (TX)");
	CHECK(rows.at("hwsig_a").source == "a.b");
	CHECK(split_ids(rows.at("hwsig_a").ids) == std::vector<std::string>{"x.y", "x.z"});
	CHECK(rows.at("hwsig_b").type == "G");
	CHECK(rows.at("hwsig_b").labels.empty());
	CHECK(split_ids(rows.at("hwsig_b").ids).empty());
	CHECK(split_ids("cpu.ipc, cpu.*_mpki") == std::vector<std::string>{"cpu.ipc", "cpu.*_mpki"});
	CHECK(id_matches("cpu.*_mpki", "cpu.l2_mpki"));
	CHECK_FALSE(id_matches("cpu.*_mpki", "cpu.ipc"));
	CHECK(without_remark("vm, queue (TX queues)") == "vm, queue");
}
