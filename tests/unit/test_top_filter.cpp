// hwsigctl top on a big host: --filter (VM name globs) and the row limit
// (--rows, the terminal's height) with the line counting what is not shown.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "hwsig/render.h"
#include "hwsig/top_view.h"

using namespace hwsig;

namespace {

std::vector<TopRow> host_and(const std::vector<std::string> &names)
{
	std::vector<TopRow> rows(1);
	rows[0].name = "host";
	rows[0].host = true;
	for (std::size_t i = 0; i < names.size(); ++i) {
		TopRow r;
		r.name = names[i];
		r.cpus = static_cast<double>(i);
		rows.push_back(r);
	}
	return rows;
}

std::vector<std::string> names(const std::vector<TopRow> &rows)
{
	std::vector<std::string> out;
	for (const TopRow &r : rows)
		out.push_back(r.name);
	return out;
}

std::vector<std::string> lines(const std::string &text)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);)
		out.push_back(l);
	return out;
}

std::vector<TopRow> guests(unsigned n)
{
	std::vector<std::string> v;
	for (unsigned i = 0; i < n; ++i)
		v.push_back("vm" + std::to_string(100 + i));
	return host_and(v);
}

std::size_t vm_lines(const std::vector<std::string> &text)
{
	return static_cast<std::size_t>(
		std::count_if(text.begin(), text.end(), [](const std::string &l) { return l.rfind("vm", 0) == 0; }));
}

} // namespace

TEST_CASE("top filter: globs, comma-separated, empty ones refused", "[top]")
{
	auto f = VmNameFilter::parse("web*,db0[1-2]");
	REQUIRE(f);
	CHECK(f->text() == "web*,db0[1-2]");
	CHECK(f->matches("web"));
	CHECK(f->matches("web17"));
	CHECK(f->matches("db01"));
	CHECK(f->matches("db02"));
	CHECK_FALSE(f->matches("db03"));
	CHECK_FALSE(f->matches("myweb"));
	auto exact = VmNameFilter::parse("db01");
	REQUIRE(exact);
	CHECK(exact->matches("db01"));
	CHECK_FALSE(exact->matches("db011"));
	CHECK_FALSE(VmNameFilter::parse(""));
	CHECK_FALSE(VmNameFilter::parse("web*,,db01"));
	CHECK_FALSE(VmNameFilter::parse("web*,"));
	CHECK_FALSE(VmNameFilter::parse(",web*"));
	CHECK(VmNameFilter().matches("anything"));
}

TEST_CASE("top filter: keeps the host and the matching VMs in their order", "[top]")
{
	auto rows = host_and({"web2", "db01", "web1", "batch"});
	filter_top_rows(rows, *VmNameFilter::parse("web*,batch"));
	CHECK(names(rows) == std::vector<std::string>{"host", "web2", "web1", "batch"});
	filter_top_rows(rows, *VmNameFilter::parse("nothing*"));
	CHECK(names(rows) == std::vector<std::string>{"host"});
	auto all = host_and({"a", "b"});
	filter_top_rows(all, VmNameFilter());
	CHECK(all.size() == 3);
}

TEST_CASE("top table: --rows keeps the first N VMs and counts the rest", "[top]")
{
	auto rows = guests(200);
	TopTableOptions o;
	o.title = "title";
	o.max_vms = 10;
	o.more_hint = "--rows N or --filter GLOB shows others";
	const auto text = lines(render_top_table(rows, o));
	// title, header, host, 10 VMs, the count of the others.
	REQUIRE(text.size() == 14);
	CHECK(text[2].rfind("host ", 0) == 0);
	CHECK(vm_lines(text) == 10);
	CHECK(text[3].rfind("vm100 ", 0) == 0);
	CHECK(text[12].rfind("vm109 ", 0) == 0);
	CHECK(text[13] == "190 more VMs not shown: --rows N or --filter GLOB shows others");

	o.max_vms = 199;
	CHECK(lines(render_top_table(rows, o)).back() == "1 more VM not shown: --rows N or --filter GLOB shows others");
	o.max_vms = 200; // all of them: no count line
	const auto all = lines(render_top_table(rows, o));
	CHECK(vm_lines(all) == 200);
	CHECK(all.back().rfind("vm299 ", 0) == 0);
}

TEST_CASE("top table: a terminal's height, the last line left free", "[top]")
{
	auto rows = guests(200);
	TopTableOptions o;
	o.title = "title";
	o.footer = "keys";
	o.width = 200;
	o.more_hint = "hint";
	for (std::size_t height : {8u, 24u, 50u}) {
		o.height = height;
		const auto text = lines(render_top_table(rows, o));
		INFO("height " << height);
		CHECK(text.size() == height - 1);
		// title, header, host, "more", keys: the rest are VMs.
		CHECK(vm_lines(text) == height - 6);
		CHECK(text[text.size() - 2] == std::to_string(200 - (height - 6)) + " more VMs not shown: hint");
		CHECK(text.back() == "keys");
	}
	// Everything fits: no count line.
	auto few = guests(3);
	o.height = 24;
	const auto text = lines(render_top_table(few, o));
	CHECK(text.size() == 7);
	CHECK(vm_lines(text) == 3);
	// --rows below what the terminal fits wins; above, the terminal does.
	o.max_vms = 5;
	CHECK(vm_lines(lines(render_top_table(rows, o))) == 5);
	o.max_vms = 100;
	CHECK(vm_lines(lines(render_top_table(rows, o))) == 24 - 6);
	// A terminal too short for any VM row still says how many there are.
	o.max_vms = 0;
	o.height = 4;
	const auto tiny = lines(render_top_table(rows, o));
	CHECK(vm_lines(tiny) == 0);
	CHECK(std::find(tiny.begin(), tiny.end(), "200 more VMs not shown: hint") != tiny.end());
}

TEST_CASE("top table: a filter matching nothing shows the host and says so", "[top]")
{
	auto rows = guests(5);
	filter_top_rows(rows, *VmNameFilter::parse("web*"));
	TopTableOptions o;
	o.no_rows = "no VM matches 'web*'";
	const auto text = lines(render_top_table(rows, o));
	REQUIRE(text.size() == 3);
	CHECK(text[1].rfind("host ", 0) == 0);
	CHECK(text[2] == "no VM matches 'web*'");
}

namespace {

// One metric at the host and at each VM's scope and first vCPU.
Interval stat_interval(const std::vector<std::string> &vms)
{
	Interval iv;
	auto add = [&](const std::string &id, const std::string &scope) {
		Metric m;
		m.id = id;
		m.scope = scope;
		m.value = 0.5;
		m.unit = "ratio";
		m.layer = Layer::Sched;
		iv.metrics.push_back(m);
	};
	add("sched.cpu_busy_ratio", "system");
	add("sched.cpu_busy_ratio", "dev:sda");
	for (const auto &vm : vms) {
		add("sched.vcpu_wait_ratio", "vm:" + vm);
		add("sched.vcpu_wait_ratio", "vm:" + vm + "/vcpu:0");
	}
	return iv;
}

// The VM scopes of the table's metric lines, sorted.
std::vector<std::string> vm_scopes(const std::string &table)
{
	std::vector<std::string> out;
	for (const auto &l : lines(table)) {
		auto at = l.find("vm:");
		if (at != std::string::npos && l.rfind("  ", 0) == 0)
			out.push_back(l.substr(at));
	}
	std::sort(out.begin(), out.end());
	return out;
}

} // namespace

TEST_CASE("stat table: the scopes of the first VMs by name, a line for the others", "[top][render]")
{
	const Interval iv = stat_interval({"web2", "db01", "web1", "batch"});
	RenderOptions o;
	o.table_vms = 2;
	const std::string text = render_table(iv, o);
	CHECK(vm_scopes(text) == std::vector<std::string>{"vm:batch", "vm:batch/vcpu:0", "vm:db01", "vm:db01/vcpu:0"});
	CHECK(text.find("(2 more VMs' scopes not shown: --vm NAME") != std::string::npos);
	CHECK(text.find("sched.cpu_busy_ratio") != std::string::npos);
	o.table_vms = 4; // all fit: no line
	const std::string all = render_table(iv, o);
	CHECK(vm_scopes(all).size() == 8);
	CHECK(all.find("more VMs") == std::string::npos);
}

TEST_CASE("stat --vm with globs: the matching VMs' scopes and the host's", "[top][render]")
{
	const Interval iv = stat_interval({"web2", "db01", "web1", "batch"});
	RenderOptions o;
	o.vm_filter = *VmNameFilter::parse("web*");
	CHECK(vm_scopes(render_table(iv, o)) ==
	      std::vector<std::string>{"vm:web1", "vm:web1/vcpu:0", "vm:web2", "vm:web2/vcpu:0"});
	CHECK(scope_visible("system", o));
	CHECK_FALSE(scope_visible("dev:sda", o));
	CHECK_FALSE(scope_visible("vm:db01", o));
	CHECK(scope_visible("vm:web1/culprit:vm:db01", o));
	// Every name matches '*', but a scope of no VM is still not one of them.
	o.vm_filter = *VmNameFilter::parse("*");
	CHECK_FALSE(scope_visible("dev:sda", o));
	CHECK(VmNameFilter::parse("db01")->one_name());
	CHECK_FALSE(VmNameFilter::parse("db0?")->one_name());
	CHECK_FALSE(VmNameFilter::parse("db01,db02")->one_name());
}
