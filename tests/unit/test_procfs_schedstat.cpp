// /proc/schedstat and per-task schedstat parsers and the run-queue wait source.
#include <catch2/catch.hpp>

#include <array>
#include <filesystem>

#include "hwsig/docs.h"
#include "hwsig/series.h"
#include "hwsig/vm_discovery.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

namespace {

const char *const kAvg = "sched.runq_wait_avg_us";

Vm make_vm(int pid, std::string name, std::vector<int> vcpus)
{
	Vm vm;
	vm.pid = pid;
	vm.name = std::move(name);
	vm.vcpu_tids = std::move(vcpus);
	return vm;
}

} // namespace

TEST_CASE("schedstat: version 15, 256 CPUs with domain lines", "[procfs][schedstat]")
{
	auto st = parse_schedstat(fixture_text("xeon-2s-256cpu-8node", "/proc/schedstat"));
	REQUIRE(st.error.empty());
	CHECK(st.version == 15);
	REQUIRE(st.cpus.size() == 256);
	CHECK(st.cpus[0].cpu == 0);
	CHECK(st.cpus[0].run_delay_ns == 1000000u);
	CHECK(st.cpus[0].timeslices == 1000u);
	// cpu255 0 0 200255 100000 150000 90000 9000255000 256000000 1255
	CHECK(st.cpus[255].cpu == 255);
	CHECK(st.cpus[255].run_delay_ns == 256000000u);
	CHECK(st.cpus[255].timeslices == 1255u);
}

TEST_CASE("schedstat: versions 16 and 17 have the same cpu lines", "[procfs][schedstat]")
{
	auto v16 = parse_schedstat(fixture_text("amd-1s-64cpu-4node", "/proc/schedstat"));
	REQUIRE(v16.error.empty());
	CHECK(v16.version == 16);
	REQUIRE(v16.cpus.size() == 64);
	// cpu63 0 0 60063 5000 8000 4000 3000000063 2560000 626
	CHECK(v16.cpus[63].run_delay_ns == 2560000u);
	CHECK(v16.cpus[63].timeslices == 626u);

	auto v17 = parse_schedstat("version 17\ntimestamp 4295\ncpu0 0 0 1 2 3 4 5 6 7\n"
				   "domain0 SMT 00000003 1 2 3 4 5\ncpu1 0 0 1 2 3 4 5 66 77\n"
				   "domain0 SMT 00000003 1 2 3 4 5\n");
	REQUIRE(v17.error.empty());
	REQUIRE(v17.cpus.size() == 2);
	CHECK(v17.cpus[1].cpu == 1);
	CHECK(v17.cpus[1].run_delay_ns == 66u);
	CHECK(v17.cpus[1].timeslices == 77u);
}

TEST_CASE("schedstat: unknown version and garbage", "[procfs][schedstat]")
{
	auto v14 = parse_schedstat("version 14\ntimestamp 1\ncpu0 0 0 0 0 1 2 3 4 5 6 7 8\n");
	CHECK(v14.version == 14);
	CHECK(v14.error == "unsupported version 14 (cpu lines are read for versions 15 to 17)");
	CHECK(v14.cpus.empty());

	auto expect_error = [](std::string_view text, std::string_view fragment) {
		auto st = parse_schedstat(text);
		INFO(std::string(text));
		CHECK(st.error.find(fragment) != std::string::npos);
		CHECK(st.cpus.empty());
	};
	expect_error(fixture_text("garbled", "/proc/schedstat"), "line 3: 'cpu0' has 3 fields, 9 expected");
	expect_error("", "empty");
	expect_error("timestamp 1\ncpu0 0 0 1 2 3 4 5 6 7\n", "line 1: expected 'version N' first");
	expect_error("version x\n", "expected 'version N' first");
	expect_error("version 15\ntimestamp 1\n", "no cpu lines");
	expect_error("version 15\ncpu0 0 0 1 2 3 4 5 6 7\ncpu0 0 0 1 2 3 4 5 6 7\n", "line 3: cpu0 listed twice");
	expect_error("version 15\ncpu0 0 0 1 2 3 4 5 6 7 8\n", "has 10 fields");
	expect_error("version 15\ncpu0 0 0 1 2 3 4 5 x 7\n", "field 8 is not a number: 'x'");
	expect_error("version 15\nbogus 1\n", "unexpected line starting 'bogus'");
}

TEST_CASE("task schedstat: captured threads and garbage", "[procfs][schedstat]")
{
	auto t = parse_task_schedstat(fixture_text("debian12-host", "/proc/10129/task/10171/schedstat"));
	REQUIRE(t.error.empty());
	CHECK(t.on_cpu_ns == 102086461u);
	CHECK(t.run_delay_ns == 50525250u);
	CHECK(t.timeslices == 111u);

	CHECK(parse_task_schedstat(fixture_text("garbled", "/proc/77/task/78/schedstat")).error ==
	      "line 1: expected 'on_cpu_ns run_delay_ns timeslices', got 2 fields");
	CHECK(parse_task_schedstat("").error == "empty");
	auto two = parse_task_schedstat("1 2 3\n4 5 6\n");
	CHECK(two.error == "line 2: more than one line");
	CHECK(two.on_cpu_ns == 0u); // an error never comes with the first line's numbers
	CHECK(two.timeslices == 0u);
	auto bad = parse_task_schedstat("1 x 3\n");
	CHECK(bad.error == "line 1: field 2 is not a number: 'x'");
	CHECK(bad.on_cpu_ns == 0u);
}

TEST_CASE("schedstat source: captured host without CONFIG_SCHEDSTATS", "[procfs][schedstat][source]")
{
	auto src = make_schedstat_source();
	// A process of the capturing machine stands in for a VM: the main
	// thread 10129 is not a vCPU.
	std::vector<Vm> vms{make_vm(10129, "captured", {10171, 10172, 10173})};
	auto snap = collect(*src, fixture("debian12-host"), &vms);
	CHECK(note(snap, kAvg, "system") == "/proc/schedstat missing (kernel built without CONFIG_SCHEDSTATS)");
	CHECK(counter(snap, series::kSchedstatRunDelayNs, "vm:captured") == 50525250.0 + 38713646 + 37298831);
	CHECK(counter(snap, series::kSchedstatTimeslices, "vm:captured") == 111.0 + 113 + 108);
	// The mean per vCPU; its threads are not named "CPU n/KVM": no per-vCPU scope.
	CHECK(counter(snap, series::kVcpuRunDelayNs, "vm:captured") == Approx((50525250.0 + 38713646 + 37298831) / 3));
	// Time on a CPU: the sum over the vCPU threads.
	CHECK(counter(snap, series::kVcpuRunNs, "vm:captured") == 102086461.0 + 98294637 + 120216468);
	// The same sum as the VM's schedstat series, and its vCPU count.
	CHECK(counter(snap, series::kSchedstatRunNs, "vm:captured") == 102086461.0 + 98294637 + 120216468);
	CHECK(snap.gauges().at(series::kVmVcpus).by_scope.at("vm:captured") == 3);
	CHECK(series_count(snap) == 6);
}

TEST_CASE("schedstat source: per CPU, system sum and per VM", "[procfs][schedstat][source]")
{
	auto src = make_schedstat_source();
	SECTION("xeon")
	{
		std::vector<Vm> vms{make_vm(4242, "web1", {4250, 4251, 4252, 4253})};
		auto snap = collect(*src, fixture("xeon-2s-256cpu-8node"), &vms);
		CHECK(snap.unavailable().empty());
		CHECK(counter(snap, series::kSchedstatRunDelayNs, "cpu:0") == 1e6);
		CHECK(counter(snap, series::kSchedstatTimeslices, "cpu:255") == 1255.0);
		// sum over i of 1e6 (i + 1) and of 1000 + i
		CHECK(counter(snap, series::kSchedstatRunDelayNs, "system") == 1e6 * 32896);
		CHECK(counter(snap, series::kSchedstatTimeslices, "system") == 256000.0 + 32640);
		CHECK(counter(snap, series::kSchedstatRunDelayNs, "vm:web1") == 1050000.0 + 2050000 + 3050000 + 4050000);
		CHECK(counter(snap, series::kSchedstatTimeslices, "vm:web1") == 20000.0);
		CHECK(counter(snap, series::kVcpuRunDelayNs, "vm:web1") == (1050000.0 + 2050000 + 3050000 + 4050000) / 4);
		CHECK(counter(snap, series::kVcpuRunNs, "vm:web1") == 5e9 + 10e9 + 15e9 + 20e9);
		CHECK(counter(snap, series::kSchedstatRunNs, "vm:web1") == 5e9 + 10e9 + 15e9 + 20e9);
		CHECK(snap.gauges().at(series::kVmVcpus).by_scope.at("vm:web1") == 4);
		CHECK(series_count(snap) == 2 * (256 + 1 + 1) + 4);
	}
	SECTION("amd, version 16, no VMs")
	{
		auto snap = collect(*src, fixture("amd-1s-64cpu-4node"));
		REQUIRE(snap.unavailable().size() == 2);
		CHECK(note(snap, "sched.vcpu_wait_ratio", "vm:*") == "no VMs found (QEMU processes, " HWSIG_DOC("vms.rst") ")");
		CHECK(note(snap, "sched.vcpu_cpus", "vm:*") == "no VMs found (QEMU processes, " HWSIG_DOC("vms.rst") ")");
		CHECK(counter(snap, series::kSchedstatRunDelayNs, "system") == 40000.0 * 2080);
		CHECK(counter(snap, series::kSchedstatTimeslices, "system") == 500.0 * 64 + 2 * 2016);
		CHECK(series_count(snap) == 2 * 65);
	}
}

TEST_CASE("schedstat source: missing, garbled, unsupported", "[procfs][schedstat][source]")
{
	auto src = make_schedstat_source();
	SECTION("missing tree: vCPU thread gone")
	{
		std::vector<Vm> vms{make_vm(4242, "web1", {4250})};
		auto snap = collect(*src, fixture("missing"), &vms);
		CHECK(note(snap, kAvg, "system") == "/proc/schedstat missing (kernel built without CONFIG_SCHEDSTATS)");
		CHECK(note(snap, kAvg, "vm:web1") == "/proc/4242/task/4250/schedstat missing (vCPU thread exited)");
		CHECK(series_count(snap) == 0);
	}
	SECTION("garbled")
	{
		std::vector<Vm> vms{make_vm(77, "bad", {78}), make_vm(78, "novcpu", {})};
		auto snap = collect(*src, fixture("garbled"), &vms);
		CHECK(note(snap, kAvg, "system") == "/proc/schedstat garbled: line 3: 'cpu0' has 3 fields, 9 expected");
		CHECK(note(snap, kAvg, "vm:bad") == "/proc/77/task/78/schedstat garbled: line 1: expected "
						    "'on_cpu_ns run_delay_ns timeslices', got 2 fields");
		CHECK(note(snap, kAvg, "vm:novcpu") == "no vCPU threads ('CPU n/KVM') found");
		CHECK(series_count(snap) == 0);
	}
	SECTION("one unreadable vCPU: no partial VM sum")
	{
		TempTree t;
		t.put("proc/schedstat", "version 99\ntimestamp 1\ncpu0 1\n");
		t.put("proc/500/task/501/schedstat", "10 20 30\n");
		t.mkdir("proc/500/task/502");
		std::vector<Vm> vms{make_vm(500, "half", {501, 502})};
		auto snap = collect(*src, t.root(), &vms);
		CHECK(note(snap, kAvg, "system") ==
		      "/proc/schedstat: unsupported version 99 (cpu lines are read for versions 15 to 17)");
		CHECK(note(snap, kAvg, "vm:half") ==
		      "/proc/500/task/502/schedstat missing (kernel without CONFIG_SCHED_INFO)");
		CHECK(series_count(snap) == 0);
	}
}

TEST_CASE("schedstat source end to end: average wait per timeslice", "[procfs][schedstat][derive]")
{
	auto src = make_schedstat_source();
	std::vector<Vm> vms{make_vm(4242, "web1", {4250, 4251, 4252, 4253})};
	auto iv = derive_between(*src, "xeon-2s-256cpu-8node", "xeon-2s-256cpu-8node-t1", &vms);
	CHECK(metric_count(iv, kAvg) == 256 + 1 + 1);
	// Per CPU 1000 timeslices and 2 ms (socket 0) or 6 ms (socket 1) of wait.
	for (auto [scope, us] : {std::pair<const char *, double>{"cpu:0", 2.0}, {"cpu:64", 6.0}, {"cpu:191", 2.0},
				 {"cpu:255", 6.0}, {"system", 4.0}, {"vm:web1", 3.0}}) {
		const Metric *m = metric(iv, kAvg, scope);
		REQUIRE(m);
		CHECK(m->value == Approx(us));
		CHECK(m->unit == "us");
	}
}

TEST_CASE("schedstat source: a CPU going offline and back moves the system average by nothing of its own",
	  "[procfs][schedstat][derive]")
{
	// cpu<N> yld 0 sched goidle ttwu ttwu_local run_ns run_delay_ns timeslices
	auto schedstat = [](std::vector<std::array<std::uint64_t, 3>> cpus) {
		std::string text = "version 15\ntimestamp 1\n";
		for (const auto &[cpu, delay, slices] : cpus)
			text += "cpu" + std::to_string(cpu) + " 0 0 0 0 0 0 5000 " + std::to_string(delay) + " " +
				std::to_string(slices) + "\n";
		return text;
	};
	auto src = make_schedstat_source();
	TempTree t;
	t.put("proc/schedstat", schedstat({{0, 1000, 10}, {1, 2000, 20}}));
	auto s0 = collect(*src, t.root(), nullptr, 1'000'000'000ull);
	CHECK(counter(s0, series::kSchedstatRunDelayNs, "system") == 3000.0); // the kernel's sum at first
	// CPU 1 offline: the system average is CPU 0's, 500 ns over 5 slices.
	t.put("proc/schedstat", schedstat({{0, 1500, 15}}));
	auto s1 = collect(*src, t.root(), nullptr, 2'000'000'000ull);
	// CPU 1 back with a lifetime of waits (1 s over 30 slices) it did not
	// add in this interval: CPU 0's 1000 ns over 10 slices again.
	t.put("proc/schedstat", schedstat({{0, 2500, 25}, {1, 1'000'000'000, 30}}));
	auto s2 = collect(*src, t.root(), nullptr, 3'000'000'000ull);
	// Both count from there on: (500 + 3000) ns over (5 + 5) slices.
	t.put("proc/schedstat", schedstat({{0, 3000, 30}, {1, 1'000'003'000, 35}}));
	auto s3 = collect(*src, t.root(), nullptr, 4'000'000'000ull);
	const std::pair<const Snapshot *, const Snapshot *> steps[] = {{&s0, &s1}, {&s1, &s2}, {&s2, &s3}};
	const double want_us[] = {0.1, 0.1, 0.35};
	for (std::size_t i = 0; i < 3; ++i) {
		INFO("interval " << i);
		auto iv = checked_derive(*steps[i].first, *steps[i].second, src->provides());
		const Metric *m = metric(iv, kAvg, "system");
		REQUIRE(m);
		CHECK(m->value == Approx(want_us[i]));
	}
}

TEST_CASE("schedstat source with VMs found by discover_vms (kvm-host tree)", "[procfs][schedstat][derive]")
{
	auto src = make_schedstat_source();
	auto vms = discover_vms(fixture("kvm-host"));
	auto before = collect(*src, fixture("kvm-host"), &vms, 10'000'000'000ull);
	// web01 (pid 2101): vCPU threads 2110-2113 only, not QEMU's other threads.
	CHECK(counter(before, series::kSchedstatRunDelayNs, "vm:web01") == 2e6 + 4e6 + 6e6 + 8e6);
	CHECK(counter(before, series::kSchedstatTimeslices, "vm:web01") == 4000.0 + 8000 + 12000 + 16000);
	// db02 runs without debug-threads=on: its vCPU threads have no names.
	CHECK(note(before, kAvg, "vm:db02") == "no vCPU threads ('CPU n/KVM') found");

	// The "after" tree: a copy where each vCPU waited 400 us more over 200 more timeslices.
	TempTree after;
	std::filesystem::copy(fixture("kvm-host"), after.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	for (int j = 1; j <= 4; ++j)
		after.put("proc/2101/task/" + std::to_string(2109 + j) + "/schedstat",
			  std::to_string(8000000000ll * j + 1000000) + " " + std::to_string(2000000 * j + 400000) + " " +
				  std::to_string(4000 * j + 200) + "\n");
	auto later = collect(*src, after.root(), &vms, 12'000'000'000ull);
	auto iv = checked_derive(before, later, src->provides());
	const Metric *web = metric(iv, kAvg, "vm:web01");
	REQUIRE(web);
	CHECK(web->value == Approx(4 * 400000.0 / (4 * 200) / 1000));
	CHECK_FALSE(metric(iv, kAvg, "vm:db02"));
}

TEST_CASE("vCPU wait: per vCPU and the VM's mean, over the interval, none for the VM when its vCPUs change",
	  "[procfs][schedstat][derive]")
{
	const char *const kWait = "sched.vcpu_wait_ratio";
	auto src = make_schedstat_source();
	auto vms = discover_vms(fixture("kvm-host"));
	auto before = collect(*src, fixture("kvm-host"), &vms, 10'000'000'000ull);
	for (int n = 0; n < 4; ++n)
		CHECK(counter(before, series::kVcpuRunDelayNs, "vm:web01/vcpu:" + std::to_string(n)) == 2e6 * (n + 1));
	CHECK(note(before, kWait, "vm:db02") == "no vCPU threads ('CPU n/KVM') found");

	// 2 s later, vCPU n (thread 2110 + n) waited (n + 1) x 200 us more.
	TempTree after;
	std::filesystem::copy(fixture("kvm-host"), after.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	for (int j = 1; j <= 4; ++j)
		after.put("proc/2101/task/" + std::to_string(2109 + j) + "/schedstat",
			  "8000000000 " + std::to_string(2000000 * j + 200000 * j) + " 4000\n");
	SECTION("the same vCPUs")
	{
		auto later = collect(*src, after.root(), &vms, 12'000'000'000ull);
		auto iv = checked_derive(before, later, src->provides());
		for (int n = 0; n < 4; ++n) {
			const Metric *m = metric(iv, kWait, "vm:web01/vcpu:" + std::to_string(n));
			REQUIRE(m);
			CHECK(m->value == Approx(200e-6 * (n + 1) / 2));
			CHECK(m->unit == "ratio");
		}
		const Metric *vm = metric(iv, kWait, "vm:web01");
		REQUIRE(vm);
		CHECK(vm->value == Approx((200e-6 + 400e-6 + 600e-6 + 800e-6) / 4 / 2));
	}
	SECTION("a vCPU thread gone: no mean for that interval, the others still per vCPU")
	{
		auto fewer = vms;
		for (auto &vm : fewer)
			if (vm.name == "web01")
				vm.vcpu_tids.pop_back();
		auto later = collect(*src, after.root(), &fewer, 12'000'000'000ull);
		CHECK_FALSE(later.counters().at(series::kVcpuRunDelayNs).by_scope.count("vm:web01"));
		auto iv = checked_derive(before, later, src->provides());
		CHECK_FALSE(metric(iv, kWait, "vm:web01"));
		REQUIRE(metric(iv, kWait, "vm:web01/vcpu:2"));
		CHECK_FALSE(metric(iv, kWait, "vm:web01/vcpu:3"));
	}
}

TEST_CASE("schedstat source: each vCPU's figures stay its own while a VM's threads go, come back and reorder",
	  "[procfs][schedstat][source]")
{
	// One source over five rounds: a VM's threads are found again without
	// a search while they stay the same, and its kept tasks are dropped
	// and made anew when they change (under ASan, a task kept past its
	// sweep would be a use after free).
	TempTree t;
	std::filesystem::copy(fixture("kvm-host"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	auto set_delay = [&](int tid, long long delay_ns) {
		t.put("proc/2101/task/" + std::to_string(tid) + "/schedstat",
		      "8000000000 " + std::to_string(delay_ns) + " 4000\n");
	};
	auto src = make_schedstat_source();
	auto delay_of = [](const Snapshot &s, int vcpu) {
		return counter(s, series::kVcpuRunDelayNs, "vm:web01/vcpu:" + std::to_string(vcpu));
	};
	const std::vector<int> all = {2110, 2111, 2112, 2113};
	std::vector<Vm> vms = {make_vm(2101, "web01", all)};

	auto s1 = collect(*src, t.root(), &vms);
	for (int n = 0; n < 4; ++n)
		CHECK(delay_of(s1, n) == 2e6 * (n + 1));

	vms[0].vcpu_tids = {2110, 2111, 2112};
	set_delay(2110, 111);
	auto s2 = collect(*src, t.root(), &vms);
	CHECK(delay_of(s2, 0) == 111);
	CHECK(delay_of(s2, 2) == 6e6);
	CHECK_FALSE(delay_of(s2, 3));

	vms[0].vcpu_tids = all;
	set_delay(2113, 333);
	auto s3 = collect(*src, t.root(), &vms);
	CHECK(delay_of(s3, 3) == 333);
	CHECK(delay_of(s3, 0) == 111);

	// The same threads in another order, then again: the scope follows
	// each thread's "CPU n/KVM", not its place in the list.
	vms[0].vcpu_tids = {2113, 2112, 2111, 2110};
	set_delay(2111, 222);
	for (int round = 0; round < 2; ++round) {
		set_delay(2112, 444 + round);
		auto s = collect(*src, t.root(), &vms);
		CHECK(delay_of(s, 0) == 111);
		CHECK(delay_of(s, 1) == 222);
		CHECK(delay_of(s, 2) == 444 + round);
		CHECK(delay_of(s, 3) == 333);
		CHECK(counter(s, series::kSchedstatRunDelayNs, "vm:web01") == 111 + 222 + 444 + round + 333);
	}
}

TEST_CASE("schedstat source: a VM that stays the same keeps its tasks while another VM's threads change",
	  "[procfs][schedstat][source]")
{
	// The tasks of a VM found again without a search are not read by
	// name in that round: the sweep that another VM's change sets off
	// must keep them (under ASan, dropping them is a use after free in
	// the rounds after).
	TempTree t;
	std::filesystem::copy(fixture("kvm-host"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	for (int n = 0; n < 2; ++n) {
		const std::string dir = "proc/2201/task/" + std::to_string(2210 + n);
		t.put(dir + "/comm", "CPU " + std::to_string(n) + "/KVM\n");
		t.put(dir + "/schedstat", "1000 " + std::to_string(70 + n) + " 10\n");
	}
	auto src = make_schedstat_source();
	std::vector<Vm> vms = {make_vm(2101, "web01", {2110, 2111, 2112, 2113}), make_vm(2201, "app02", {2210, 2211})};
	auto app_delay = [](const Snapshot &s, int vcpu) {
		return counter(s, series::kVcpuRunDelayNs, "vm:app02/vcpu:" + std::to_string(vcpu));
	};
	collect(*src, t.root(), &vms);
	collect(*src, t.root(), &vms); // app02 (and web01) from their kept tasks from now on
	for (int round = 0; round < 3; ++round) {
		// web01 loses and regains a vCPU: a sweep each round.
		vms[0].vcpu_tids = round % 2 ? std::vector<int>{2110, 2111, 2112, 2113} : std::vector<int>{2110, 2111};
		t.put("proc/2201/task/2211/schedstat", "1000 " + std::to_string(80 + round) + " 10\n");
		auto s = collect(*src, t.root(), &vms);
		CHECK(app_delay(s, 0) == 70);
		CHECK(app_delay(s, 1) == 80 + round);
		CHECK(counter(s, series::kSchedstatRunDelayNs, "vm:app02") == 70 + 80 + round);
	}
}
