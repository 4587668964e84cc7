// hwsigctl top's rows from a hand-made interval whose answers are known:
// culprits and their shares, the verdict rules (and their absence), the
// host line, sorting, the table's width and the JSON.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/parse.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/snapshot_wire.h"
#include "hwsig/top_view.h"
#include "hwsig/units.h"

using namespace hwsig;

namespace {

void add(Interval &iv, const std::string &id, const std::string &scope, double value)
{
	Metric m;
	m.id = id;
	m.scope = scope;
	m.value = value;
	iv.metrics.push_back(m);
}

Vm vm(int pid, const std::string &name, int vcpus)
{
	Vm v;
	v.pid = pid;
	v.name = name;
	for (int i = 0; i < vcpus; ++i)
		v.vcpu_tids.push_back(pid + 1 + i);
	return v;
}

const TopRow &row(const std::vector<TopRow> &rows, const std::string &name)
{
	for (const TopRow &r : rows)
		if (r.name == name)
			return r;
	FAIL("no row " << name);
	return rows.front();
}

struct Fixture {
	Interval iv;
	std::vector<Vm> vms = {vm(100, "victim", 4), vm(200, "batch7", 2), vm(300, "quiet", 1),
			       vm(400, "crowded", 2), vm(500, "tenant", 1), vm(600, "net", 1)};
	Fixture()
	{
		iv.realtime_ns = 1795766403000000000ull;
		iv.interval_s = 1;
		// Host: 2 CPUs, half busy; two disks.
		add(iv, "sched.cpu_busy_ratio", "system", 0.5);
		add(iv, "sched.cpu_busy_ratio", "cpu:0", 0.4);
		add(iv, "sched.cpu_busy_ratio", "cpu:1", 0.6);
		add(iv, "sched.runq_wait_p99_us", "system", 4000);
		add(iv, "io.iops_read", "dev:vda", 10);
		add(iv, "io.iops_write", "dev:vda", 5);
		add(iv, "io.iops_read", "dev:vdb", 1);
		add(iv, "io.latency_p99_us", "dev:vda", 200);
		add(iv, "io.latency_p99_us", "dev:vdb", 900);
		add(iv, "cpu.ipc", "system", 1.25);
		// victim: waits 40% of its vCPU time, 80% of it behind batch7.
		add(iv, "sched.vcpu_wait_ratio", "vm:victim", 0.40);
		add(iv, "sched.vcpu_cpus", "vm:victim", 2.4);
		add(iv, "sched.wait_behind_ratio", "vm:victim/culprit:vm:batch7", 0.60);
		add(iv, "sched.wait_behind_ratio", "vm:victim/culprit:idle", 0.10);
		add(iv, "sched.wait_behind_ratio", "vm:victim/culprit:host:kernel", 0.05);
		add(iv, "sched.vcpu_wait_ratio", "vm:batch7", 0.02);
		add(iv, "sched.wait_behind_ratio", "vm:batch7/culprit:vm:victim", 0.04);
		// quiet: one culprit, but 1% wait: no verdict.
		add(iv, "sched.vcpu_wait_ratio", "vm:quiet", 0.01);
		add(iv, "sched.wait_behind_ratio", "vm:quiet/culprit:host:other", 0.009);
		add(iv, "sched.wait_behind_ratio", "vm:quiet/culprit:idle", 0.001);
		// crowded: 20% wait, spread: the top culprit has 30 / 80.
		add(iv, "sched.vcpu_wait_ratio", "vm:crowded", 0.20);
		add(iv, "sched.wait_behind_ratio", "vm:crowded/culprit:host:other", 0.30);
		add(iv, "sched.wait_behind_ratio", "vm:crowded/culprit:vm:victim", 0.25);
		add(iv, "sched.wait_behind_ratio", "vm:crowded/culprit:idle", 0.25);
		// tenant: waits behind host processes.
		add(iv, "sched.vcpu_wait_ratio", "vm:tenant", 0.10);
		add(iv, "sched.wait_behind_ratio", "vm:tenant/culprit:host:other", 0.09);
		add(iv, "sched.wait_behind_ratio", "vm:tenant/culprit:idle", 0.01);
		// net: RX ring stalls, no vCPU wait figure.
		add(iv, "vhost.ring_stalls_ps", "vm:net", 3);
		add(iv, "vhost.queue_depth_p99", "vm:net", 255);
	}
};

} // namespace

TEST_CASE("top: rows, culprits, shares and verdicts from a known interval", "[top]")
{
	Fixture f;
	auto rows = top_rows(f.iv, f.vms);
	REQUIRE(rows.size() == 7);
	const TopRow &host = rows.front();
	CHECK(host.host);
	CHECK(host.name == "host");
	CHECK(*host.cpus == Approx(1.0)); // 0.5 of 2 CPUs
	CHECK(*host.iops == Approx(16));
	CHECK(*host.io_p99_us == Approx(900)); // the worst disk
	CHECK(*host.runq_p99_us == Approx(4000));
	CHECK(*host.ipc == Approx(1.25));
	CHECK(host.verdict.empty());

	const TopRow &victim = row(rows, "victim");
	CHECK(*victim.vcpus == 4);
	CHECK(*victim.cpus == Approx(2.4));
	CHECK(victim.culprit == "vm:batch7");
	CHECK(*victim.culprit_share == Approx(0.60 / 0.75));
	CHECK(victim.verdict == "waits behind vm:batch7 (80.0% of its wait; vCPUs wait 40.0%)");
	CHECK_FALSE(victim.iops); // not measured per VM

	// batch7 waited behind victim, all of its wait, but only 2%: no verdict.
	const TopRow &batch7 = row(rows, "batch7");
	CHECK(batch7.culprit == "vm:victim");
	CHECK(*batch7.culprit_share == Approx(1.0));
	CHECK(batch7.verdict.empty());
	CHECK(row(rows, "quiet").verdict.empty());
	CHECK(row(rows, "quiet").culprit == "host:other");
	// No culprit holds half: none named in words.
	const TopRow &crowded = row(rows, "crowded");
	CHECK(crowded.culprit == "host:other");
	CHECK(*crowded.culprit_share == Approx(0.30 / 0.80));
	CHECK(crowded.verdict.empty());
	CHECK(row(rows, "tenant").verdict == "waits behind host processes (90.0% of its wait; vCPUs wait 10.0%)");
	CHECK(row(rows, "net").verdict == "RX ring stalls: the guest posts too few receive buffers");
	CHECK_FALSE(row(rows, "net").culprit_share);

	SECTION("other thresholds")
	{
		TopRules strict;
		strict.min_share = 0.9;
		auto r = top_rows(f.iv, f.vms, strict);
		CHECK(row(r, "victim").verdict.empty()); // 80% < 90%
		CHECK_FALSE(row(r, "tenant").verdict.empty());
	}
}

TEST_CASE("top: culprit names in words", "[top]")
{
	CHECK(culprit_text("host:other") == "host processes");
	CHECK(culprit_text("host:kernel") == "kernel threads");
	CHECK(culprit_text("host:vhost") == "vhost workers");
	CHECK(culprit_text("vm:db2") == "vm:db2");
}

TEST_CASE("top: sorting keeps the host first, rows without the value last", "[top]")
{
	Fixture f;
	auto rows = top_rows(f.iv, f.vms);
	auto names = [](const std::vector<TopRow> &rs) {
		std::vector<std::string> n;
		for (const auto &r : rs)
			n.push_back(r.name);
		return n;
	};
	const TopColumn *wait = find_top_column("wait%");
	REQUIRE(wait);
	CHECK(wait == find_top_column("vcpu_wait_ratio"));
	sort_top_rows(rows, *wait, false);
	CHECK(names(rows) == std::vector<std::string>{"host", "victim", "crowded", "tenant", "batch7", "quiet", "net"});
	sort_top_rows(rows, *wait, true);
	CHECK(names(rows) == std::vector<std::string>{"host", "quiet", "batch7", "tenant", "crowded", "victim", "net"});
	const TopColumn *name = find_top_column("VM");
	REQUIRE(name);
	sort_top_rows(rows, *name, true);
	CHECK(names(rows) == std::vector<std::string>{"host", "batch7", "crowded", "net", "quiet", "tenant", "victim"});
	const TopColumn *culprit = find_top_column("Culprit");
	REQUIRE(culprit);
	sort_top_rows(rows, *culprit, true);
	// Text columns: empty last, then by name.
	CHECK(names(rows).back() == "net");
	CHECK(find_top_column("no-such-column") == nullptr);
}

TEST_CASE("top: the table fits the terminal, marks the sort column and says '-' for nothing", "[top]")
{
	Fixture f;
	auto rows = top_rows(f.iv, f.vms);
	TopTableOptions o;
	o.title = "hwsig top  title";
	o.sort = find_top_column("WAIT%");
	o.width = 72;
	o.footer = "keys: q quit";
	std::string t = render_top_table(rows, o);
	INFO(t);
	std::istringstream in(t);
	std::vector<std::string> lines;
	for (std::string line; std::getline(in, line);)
		lines.push_back(line);
	REQUIRE(lines.size() >= 1 + 1 + 7 + 1 + 1);
	CHECK(lines[0] == "hwsig top  title");
	CHECK(lines[1].find("WAIT%v") != std::string::npos);
	CHECK(lines[1].rfind("VM ", 0) == 0);
	for (const auto &line : lines)
		CHECK(display_width(line) <= 72);
	CHECK(lines[2].rfind("host ", 0) == 0);
	CHECK(lines.back() == "keys: q quit");
	// Too narrow for every column: the verdict stays, with room for its
	// start, and the line before the keys names what is hidden.
	const auto verdict_at = lines[1].find("VERDICT");
	REQUIRE(verdict_at != std::string::npos);
	CHECK(verdict_at + 24 <= 72);
	CHECK(lines[1].find("LLC") == std::string::npos);
	CHECK(lines[9].rfind("hidden at 72 columns (a wider terminal, or --format json, shows them):", 0) == 0);
	std::string hint;
	for (std::size_t i = 9; i + 1 < lines.size(); ++i)
		hint += lines[i];
	for (const char *col : {"CULPRIT", "VQ99", "STALL/S", "MEMBW", "LLC"})
		CHECK(hint.find(col) != std::string::npos);
	const auto victim = std::find_if(lines.begin(), lines.end(),
					 [](const std::string &l) { return l.rfind("victim ", 0) == 0; });
	REQUIRE(victim != lines.end());
	CHECK(victim->find("waits behind") != std::string::npos); // its verdict, cut but there
	// The sort column stays whatever the width.
	o.sort = find_top_column("LLC");
	t = render_top_table(rows, o);
	CHECK(t.find("LLCv") != std::string::npos);
	// Unlimited width: every column, whole verdicts, culprits in words.
	o.width = 0;
	t = render_top_table(rows, o);
	CHECK(t.find("hidden at") == std::string::npos);
	CHECK(t.find("waits behind vm:batch7 (80.0% of its wait; vCPUs wait 40.0%)") != std::string::npos);
	CHECK(t.find("host processes") != std::string::npos);
	CHECK(t.find(" 40.0% ") != std::string::npos);
}

TEST_CASE("top: one JSON object per interval, null where nothing was measured", "[top]")
{
	Fixture f;
	auto rows = top_rows(f.iv, f.vms);
	std::string j = render_top_json(f.iv, rows);
	CHECK(j.rfind("{\"time\":1795766403.000,\"interval_s\":1,\"rows\":[{\"host\":true,\"name\":\"host\",", 0) == 0);
	CHECK(j.back() == '\n');
	CHECK(j.find("\"name\":\"victim\",\"vcpus\":4,\"cpus\":2.4,\"vcpu_wait_ratio\":0.4,") != std::string::npos);
	CHECK(j.find("\"culprit\":\"vm:batch7\",\"culprit_share\":0.8,") != std::string::npos);
	CHECK(j.find("\"verdict\":\"waits behind vm:batch7 (80.0% of its wait; vCPUs wait 40.0%)\"") !=
	      std::string::npos);
	CHECK(j.find("\"name\":\"quiet\",") != std::string::npos);
	CHECK(j.find("\"iops\":null") != std::string::npos);
	CHECK(j.find("\"verdict\":null") != std::string::npos);
	CHECK(std::count(j.begin(), j.end(), '\n') == 1);
}

TEST_CASE("top: a VM's own I/O, and the neighbour that issues most of its disk's requests", "[top]")
{
	Interval iv;
	iv.interval_s = 1;
	// vdc: 50 requests/s, 10 of them vm:store's, 40 vm:db2's.
	add(iv, "io.iops_read", "dev:vdc", 45);
	add(iv, "io.iops_write", "dev:vdc", 5);
	add(iv, "io.iops_read", "vm:store", 10);
	add(iv, "io.latency_p99_us", "vm:store", 15000);
	add(iv, "io.iops_read", "vm:store/dev:vdc", 10);
	add(iv, "io.iops_read", "vm:db2", 35);
	add(iv, "io.iops_write", "vm:db2", 5);
	add(iv, "io.latency_p99_us", "vm:db2", 900);
	add(iv, "io.iops_read", "vm:db2/dev:vdc", 35);
	add(iv, "io.iops_write", "vm:db2/dev:vdc", 5);
	std::vector<Vm> vms = {vm(100, "store", 1), vm(200, "db2", 1)};
	auto rows = top_rows(iv, vms);
	const TopRow &store = row(rows, "store");
	CHECK(*store.iops == Approx(10));
	CHECK(*store.io_p99_us == Approx(15000));
	CHECK(store.verdict == "I/O latency p99 15.0 ms with vm:db2 issuing 80.0% of vdc's requests");
	// db2's own latency is low: no verdict for it.
	const TopRow &db2 = row(rows, "db2");
	CHECK(*db2.iops == Approx(40));
	CHECK(db2.verdict.empty());
	CHECK(*rows.front().iops == Approx(50)); // the host: the disk's
	// Below the share: no verdict.
	TopRules strict;
	strict.min_io_share = 0.9;
	CHECK(row(top_rows(iv, vms, strict), "store").verdict.empty());
}

TEST_CASE("format_cpu_list: CPU lists written the kernel's way", "[top][parse]")
{
	CHECK(format_cpu_list({}).empty());
	CHECK(format_cpu_list({3}) == "3");
	CHECK(format_cpu_list({4, 5}) == "4,5");
	CHECK(format_cpu_list({4, 5, 6, 7}) == "4-7");
	CHECK(format_cpu_list({0, 2, 8, 9, 10, 11, 63}) == "0,2,8-11,63");
	// parse_cpu_list reads back what it writes.
	const std::vector<unsigned> cpus = {0, 2, 4, 5, 8, 9, 10, 11, 63};
	CHECK(parse_cpu_list(format_cpu_list(cpus)) == cpus);
}

TEST_CASE("top: the wait verdict names the CPUs of the waits blamed on the culprit", "[top]")
{
	Fixture f;
	// victim's waits behind batch7 were on CPUs 3 and 5, those behind idle
	// on 7; tenant's behind host processes on 3 only. Where their vCPU
	// threads ran last (anywhere else) does not matter.
	auto &where = f.iv.cpus[series::kVmWaitBehindCpus];
	where["vm:victim/culprit:vm:batch7"] = {3, 5};
	where["vm:victim/culprit:idle"] = {7};
	where["vm:tenant/culprit:host:other"] = {3};
	where["vm:crowded/culprit:host:other"] = {0, 1, 2, 3};
	auto rows = top_rows(f.iv, f.vms);
	CHECK(row(rows, "victim").on_cpus == std::vector<unsigned>{3, 5});
	CHECK(row(rows, "victim").verdict ==
	      "waits behind vm:batch7 on CPUs 3,5 (80.0% of its wait; vCPUs wait 40.0%)");
	CHECK(row(rows, "tenant").verdict ==
	      "waits behind host processes on CPU 3 (90.0% of its wait; vCPUs wait 10.0%)");
	// crowded has a culprit and its CPUs, but no verdict: in JSON only.
	CHECK(row(rows, "crowded").on_cpus == std::vector<unsigned>{0, 1, 2, 3});
	CHECK(row(rows, "crowded").verdict.empty());
	// Not known: not named. batch7's culprit (victim) has no CPUs listed.
	CHECK(row(rows, "batch7").culprit == "vm:victim");
	CHECK(row(rows, "batch7").on_cpus.empty());
	CHECK(row(rows, "net").on_cpus.empty());
	std::string j = render_top_json(f.iv, rows);
	CHECK(j.find("\"on_cpus\":\"3,5\"") != std::string::npos);
	CHECK(j.find("\"on_cpus\":\"0-3\"") != std::string::npos);
	CHECK(j.find("\"on_cpus\":null") != std::string::npos);
	// Without any CPU figures (an older hwsigd's snapshots): no "on".
	Fixture old;
	CHECK(row(top_rows(old.iv, old.vms), "victim").verdict ==
	      "waits behind vm:batch7 (80.0% of its wait; vCPUs wait 40.0%)");
}

namespace {

// A VM of one vCPU at `scope`, its waits behind `who` (ns) and where they
// were (CPU counts), its vCPU's run_delay.
void add_waits(Snapshot &s, const std::string &vm, const std::string &who, double wait_ns, CpuCounts where,
	       double vcpu_delay_ns)
{
	const std::string cell = Scope::vm(vm).culprit(Scope::parse(who)).str();
	s.add_counter(series::kVmWaitBehindNs, cell, wait_ns, "bpf");
	s.add_cpu_counts(series::kVmWaitBehindCpus, cell, std::move(where), "bpf");
	s.add_counter(series::kVcpuRunDelayNs, Scope::vm(vm).str(), vcpu_delay_ns, "procfs");
	s.add_counter(series::kVcpuRunDelayNs, Scope::vm(vm).str() + "/vcpu:0", vcpu_delay_ns, "procfs");
	s.set_counts_from_zero(series::kVmWaitBehindNs);
	s.set_counts_from_zero(series::kVmWaitBehindCpus);
}

} // namespace

TEST_CASE("top: from two snapshots, the CPUs whose count grew in the interval, across the wire", "[top][derive][wire]")
{
	std::vector<Vm> vms = {vm(100, "victim", 1)};
	Snapshot prev, cur;
	prev.mono_ns = 10'000'000'000;
	cur.mono_ns = 11'000'000'000;
	// Before: waits behind batch7 on CPUs 3 and 7 (7 since long ago).
	add_waits(prev, "victim", "vm:batch7", 1e9, {{3, 4}, {7, 2}}, 1e9);
	add_waits(prev, "victim", "host:other", 1e8, {{0, 1}}, 1e9);
	// In the interval: 0.6 s more behind batch7, on 3 and 5, not 7; 0.1 s
	// behind host processes, on CPU 0 (where its vCPU ran last, say).
	add_waits(cur, "victim", "vm:batch7", 1.6e9, {{3, 5}, {5, 1}, {7, 2}}, 1.7e9);
	add_waits(cur, "victim", "host:other", 2e8, {{0, 2}}, 1.7e9);
	// A culprit first seen in this interval: from zero.
	const std::string kernel = Scope::vm("victim").culprit(Scope::host(Scope::HostWork::Kernel)).str();
	cur.add_counter(series::kVmWaitBehindNs, kernel, 1e6, "bpf");
	cur.add_cpu_counts(series::kVmWaitBehindCpus, kernel, {{9, 1}}, "bpf");
	const std::vector<std::string> claimed = {"sched.wait_behind_ratio", "sched.vcpu_wait_ratio"};
	// Once directly, once as hwsigctl gets them from the daemon.
	for (bool wire : {false, true}) {
		INFO((wire ? "through the wire" : "direct"));
		Snapshot a = prev, b = cur;
		if (wire) {
			a = decode_snapshot(encode_snapshot(prev, vms, claimed)).snapshot;
			b = decode_snapshot(encode_snapshot(cur, vms, claimed)).snapshot;
		}
		const Interval iv = derive(a, b, claimed);
		const auto &where = iv.cpus.at(series::kVmWaitBehindCpus);
		CHECK(where.at(Scope::vm("victim").culprit(Scope::vm("batch7")).str()) == std::vector<unsigned>{3, 5});
		CHECK(where.at(Scope::vm("victim").culprit(Scope::host(Scope::HostWork::Other)).str()) ==
		      std::vector<unsigned>{0});
		CHECK(where.at(kernel) == std::vector<unsigned>{9});
		auto rows = top_rows(iv, vms);
		const TopRow &victim = row(rows, "victim");
		CHECK(victim.culprit == "vm:batch7");
		CHECK(victim.verdict == "waits behind vm:batch7 on CPUs 3,5 (85.6% of its wait; vCPUs wait 70.0%)");
	}
	// Nothing grew: nothing named.
	CHECK(derive(cur, cur, claimed).cpus.empty());
}

TEST_CASE("cpus_grown: above the count before, or started again", "[derive]")
{
	const CpuCounts before = {{1, 3}, {4, 2}, {9, 1}};
	CHECK(cpus_grown(&before, {{1, 3}, {4, 3}, {9, 1}}) == std::vector<unsigned>{4});
	CHECK(cpus_grown(&before, {{0, 1}, {1, 3}, {2, 1}, {4, 2}, {9, 1}, {10, 1}}) ==
	      std::vector<unsigned>{0, 2, 10});
	CHECK(cpus_grown(nullptr, {{5, 1}, {6, 0}}) == std::vector<unsigned>{5});
	CHECK(cpus_grown(&before, {{1, 1}}) == std::vector<unsigned>{1}); // a VM index reused: counted again
	CHECK(cpus_grown(&before, {}).empty());
}

TEST_CASE("top: memory bandwidth from resctrl where it is on, else the LLC-miss estimate, LLC held", "[top]")
{
	Fixture f;
	add(f.iv, "mem.mbm_total_bps", "vm:victim", 2e9);
	add(f.iv, "mem.llc_miss_bps", "vm:victim", 1e9); // resctrl wins
	add(f.iv, "mem.llc_occupancy_bytes", "vm:victim", 12.0 * 1024 * 1024);
	add(f.iv, "mem.llc_miss_bps", "vm:batch7", 5e8);
	add(f.iv, "mem.llc_miss_bps", "system", 3e9);
	auto rows = top_rows(f.iv, f.vms);
	CHECK(*row(rows, "victim").mem_bps == Approx(2e9));
	CHECK(*row(rows, "victim").llc_bytes == Approx(12.0 * 1024 * 1024));
	CHECK(*row(rows, "batch7").mem_bps == Approx(5e8));
	CHECK_FALSE(row(rows, "batch7").llc_bytes);
	CHECK_FALSE(row(rows, "quiet").mem_bps);
	CHECK(*rows.front().mem_bps == Approx(3e9));

	const TopColumn *bw = find_top_column("membw");
	REQUIRE(bw);
	sort_top_rows(rows, *bw, false);
	CHECK(rows[1].name == "victim");
	CHECK(rows[2].name == "batch7");
	TopTableOptions o;
	o.sort = bw;
	std::string t = render_top_table(rows, o);
	CHECK(t.find("1.86GiB/s") != std::string::npos);
	CHECK(t.find("477MiB/s") != std::string::npos);
	CHECK(t.find("12.0MiB") != std::string::npos);
	std::string j = render_top_json(f.iv, rows);
	CHECK(j.find("\"mem_bps\":2e+09") != std::string::npos);
	CHECK(j.find("\"llc_occupancy_bytes\":12582912") != std::string::npos);
}

// Issue 34, item 6 in top: a p99 that is an upper bound (every wait or
// request under 2 us) reads "<2.00µs" in the RUNQ99 and IO99 columns; the
// worst disk's p99 is a bound only when a bound is the largest.
TEST_CASE("top: a p99 that is an upper bound reads '<'", "[top]")
{
	Interval iv;
	iv.interval_s = 1;
	auto bounded = [&](const std::string &id, const std::string &scope, double value, bool bound) {
		add(iv, id, scope, value);
		iv.metrics.back().upper_bound = bound;
	};
	bounded("sched.runq_wait_p99_us", "system", 2, true);
	bounded("io.latency_p99_us", "dev:vda", 2, true);
	bounded("io.latency_p99_us", "dev:vdb", 1.5, false);
	bounded("sched.runq_wait_p99_us", "vm:idle", 2, true);
	bounded("sched.runq_wait_p99_us", "vm:busy", 3.5, false);
	auto rows = top_rows(iv, {vm(100, "idle", 1), vm(200, "busy", 1)});
	CHECK(row(rows, "host").runq_p99_bound);
	CHECK(row(rows, "host").io_p99_bound);
	CHECK(row(rows, "idle").runq_p99_bound);
	CHECK_FALSE(row(rows, "busy").runq_p99_bound);
	TopTableOptions o;
	o.width = 200;
	std::string t = render_top_table(rows, o);
	INFO(t);
	std::size_t bounds = 0;
	for (std::size_t at = t.find("<2.00µs"); at != std::string::npos; at = t.find("<2.00µs", at + 1))
		++bounds;
	CHECK(bounds == 3); // host RUNQ99 and IO99, idle's RUNQ99
	CHECK(t.find("3.50µs") != std::string::npos);
	// A larger estimate beside the bound: the worst disk is an estimate.
	bounded("io.latency_p99_us", "dev:vdc", 2.5, false);
	CHECK_FALSE(top_rows(iv, {})[0].io_p99_bound);
}
