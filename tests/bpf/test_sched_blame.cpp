// Live tests of the victim x culprit matrix: two busy loops pinned to one
// CPU, a watched "victim" VM and an aggressor (a watched VM, or a host
// process). The truth: the victim's own schedstat (the waits to blame) and
// rusage (its preemptions), and who else ran on that CPU.
#include <catch2/catch.hpp>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/snapshot.h"
#include "hwsig/source_bpf.h"
#include "hwsig/vm.h"
#include "require_root.h"
#include "sched_collector.h"
#include "schedstat_truth.h"
#include "workloads.h"

using namespace hwsig;
using hwsig_test::Child;
using hwsig_test::require_root;

namespace {

struct Row {
	std::uint64_t wait_ns = 0, waits = 0, preemptions = 0;
	const Blame *by_culprit = nullptr; // the aggressor's cell, if any
	bool names_a_vm = false;           // any VM as culprit
};

Row row_of(const std::vector<Blame> &cells, Culprit culprit, int culprit_tgid)
{
	Row r;
	for (const Blame &b : cells) {
		r.wait_ns += b.wait_ns;
		r.waits += b.waits;
		r.preemptions += b.preemptions;
		if (b.culprit == Culprit::Vm)
			r.names_a_vm = true;
		if (b.culprit == culprit && (culprit != Culprit::Vm || b.culprit_tgid == culprit_tgid))
			r.by_culprit = &b;
	}
	return r;
}

// The share of the CPU's time, over the waiter's window, that the culprit
// ran, out of all that ran there but the waiter (two loops that are always
// runnable: the CPU is never idle), as the kernel counted it.
double time_share(double window_ns, double waiter_run_ns, double culprit_run_ns)
{
	const double other_ns = std::max(0.0, window_ns - waiter_run_ns - culprit_run_ns);
	return culprit_run_ns / (culprit_run_ns + other_ns);
}

// A wait is blamed on what held the CPU just before the waiter got it
// (bpf.rst). With the two loops nearly alone on their CPU, that is the
// other loop for most waits: a kworker or RCU callback that slips in
// between for microseconds takes a whole wait, up to 10% of them on a
// quiet 2-CPU machine. On a busy one, other tasks take turns between the
// two loops, and the order of the turns, not their length, decides whom a
// wait is blamed on: under stress-ng the aggressor took 12-24% of the
// victim's wait with 34-43% of the others' time. No share follows from
// what the kernel counts then (issue 34, item 12), only the bounds that
// hold whatever the load.
constexpr double kNearlyAlone = 0.9; // the culprit's time share
constexpr double kMostWhenNearlyAlone = 0.75;

// The two loops' run, between the kernel's totals of each: both go, both
// report, both park (their totals are final then).
struct PairRun {
	std::vector<std::uint64_t> victim_report;
	hwsig_test::TaskTotals before, after, aggressor_before, aggressor_after;
};

PairRun run_pair(Child &victim, Child &aggressor)
{
	PairRun r;
	r.before = hwsig_test::task_totals(victim.pid());
	r.aggressor_before = hwsig_test::task_totals(aggressor.pid());
	victim.go();
	aggressor.go();
	r.victim_report = victim.read_report();
	aggressor.read_report();
	r.after = hwsig_test::parked_totals(victim.pid());
	r.aggressor_after = hwsig_test::parked_totals(aggressor.pid());
	return r;
}

void blame_case(BpfAttach how, bool aggressor_is_vm)
{
	require_root();
	constexpr unsigned kMs = 1500;
	SchedCollector collector(how);
	INFO("attached as " << attach_name(collector.attached_as()) << ", aggressor "
			    << (aggressor_is_vm ? "a VM" : "a host process"));
	int cpu = hwsig_test::pick_cpu();
	Child victim = Child::parked_hogs(cpu, 1, kMs);
	Child aggressor = Child::parked_hogs(cpu, 1, kMs);
	// Both block on go() before being watched: no run straddles the start.
	hwsig_test::parked_totals(victim.pid());
	hwsig_test::parked_totals(aggressor.pid());
	REQUIRE(collector.watch_vm(victim.pid()));
	if (aggressor_is_vm)
		REQUIRE(collector.watch_vm(aggressor.pid()));
	const PairRun run = run_pair(victim, aggressor);
	const auto &[victim_report, before, after, aggressor_before, aggressor_after] = run;
	const std::uint64_t victim_arrivals = after.pcount - before.pcount;
	const std::uint64_t aggressor_arrivals = aggressor_after.pcount - aggressor_before.pcount;

	const double truth_ns = static_cast<double>(after.run_delay_ns - before.run_delay_ns);
	const std::uint64_t nivcsw = victim_report[1];
	auto cells = collector.blame(victim.pid());
	Row victim_row = aggressor_is_vm ? row_of(cells, Culprit::Vm, aggressor.pid()) : row_of(cells, Culprit::Other, 0);
	INFO("victim waited " << truth_ns / 1e6 << " ms per schedstat, " << victim_row.wait_ns / 1e6
			      << " ms in the matrix (" << victim_row.waits << " waits); nivcsw " << nivcsw
			      << ", preemptions in the matrix " << victim_row.preemptions);
	// Two loops sharing a CPU for 1.5 s: each waits about half of it.
	REQUIRE(truth_ns > 0.3e9);
	// Every wait is in the matrix, blamed on someone: within 10% of the
	// kernel's own run_delay.
	CHECK(std::abs(static_cast<double>(victim_row.wait_ns) - truth_ns) <= 0.10 * truth_ns);
	// Never more preemptions than the kernel counted (+2 for the moments
	// around the child's rusage), and nearly all of them in the matrix.
	CHECK(victim_row.preemptions <= nivcsw + 2);
	CHECK(victim_row.preemptions + 3 >= nivcsw * 9 / 10);
	// Whom the waits are blamed on (kNearlyAlone above).
	const double window_ns = static_cast<double>(victim_report[2]);
	const double aggressor_run_ns = static_cast<double>(aggressor_after.run_ns - aggressor_before.run_ns);
	const double victim_run_ns = static_cast<double>(after.run_ns - before.run_ns);
	const double other_ns = std::max(0.0, window_ns - victim_run_ns - aggressor_run_ns);
	const double aggressor_share = time_share(window_ns, victim_run_ns, aggressor_run_ns);
	INFO("window " << window_ns / 1e6 << " ms, aggressor ran " << aggressor_run_ns / 1e6 << " ms in "
		       << aggressor_arrivals << " turns, other work " << other_ns / 1e6
		       << " ms: the aggressor's time share " << aggressor_share);
	std::ostringstream row;
	for (const Blame &b : cells)
		row << "\n  culprit class " << static_cast<int>(b.culprit) << " tgid " << b.culprit_tgid << ": "
		    << b.wait_ns / 1e6 << " ms in " << b.waits << " waits, " << b.preemptions << " preemptions";
	INFO("victim " << victim.pid() << ", aggressor " << aggressor.pid() << "; the victim's row:" << row.str());
	REQUIRE(victim_row.by_culprit);
	// Nearly alone, the aggressor is the culprit of most of both.
	if (aggressor_share >= kNearlyAlone) {
		CHECK(static_cast<double>(victim_row.by_culprit->wait_ns) >=
		      kMostWhenNearlyAlone * static_cast<double>(victim_row.wait_ns));
		CHECK(static_cast<double>(victim_row.by_culprit->preemptions) >=
		      kMostWhenNearlyAlone * static_cast<double>(victim_row.preemptions));
	}
	if (aggressor_is_vm) {
		// Whatever the load: a wait blamed on the aggressor VM ends with
		// it leaving the CPU to the victim, a preemption by it gives it the
		// CPU; neither more often than it got the CPU, as the kernel
		// counted (pcount). (A host process's cell is every host process's.)
		CHECK(victim_row.by_culprit->waits <= aggressor_arrivals);
		CHECK(victim_row.by_culprit->preemptions <= aggressor_arrivals);
		// And the other way round: the aggressor waited behind the victim.
		auto back = collector.blame(aggressor.pid());
		Row aggressor_row = row_of(back, Culprit::Vm, victim.pid());
		REQUIRE(aggressor_row.by_culprit);
		CHECK(aggressor_row.by_culprit->waits <= victim_arrivals);
		CHECK(aggressor_row.by_culprit->preemptions <= victim_arrivals);
		if (time_share(window_ns, aggressor_run_ns, victim_run_ns) >= kNearlyAlone)
			CHECK(static_cast<double>(aggressor_row.by_culprit->wait_ns) >=
			      kMostWhenNearlyAlone * static_cast<double>(aggressor_row.wait_ns));
	} else {
		// Host work is never named as a VM.
		CHECK_FALSE(victim_row.names_a_vm);
		// A process that is not watched has no row.
		CHECK(collector.blame(aggressor.pid()).empty());
	}
}

// Pins every thread of a parked (or not yet started) child to one CPU: a
// sleeping task moves there when it is next woken.
void pin_process(int pid, int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(sched_setaffinity(pid, sizeof set, &set) == 0);
}

// The CPU the process's main thread last ran on (field 39 of its stat):
// what the verdict used to name.
int last_cpu(int pid)
{
	std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
	std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	std::istringstream rest(stat.substr(stat.rfind(')') + 2)); // field 3 on
	std::string field;
	for (int i = 3; i <= 39 && rest >> field; ++i)
		;
	return std::stoi(field);
}

std::set<unsigned> cpus_of(const Blame &b)
{
	std::set<unsigned> out;
	for (const auto &[cpu, reads] : b.cpu_reads)
		if (reads)
			out.insert(cpu);
	return out;
}

// The CPUs of the waits blamed on a culprit are where those waits ended,
// not where the victim's threads are now: the victim waits behind the
// aggressor on one CPU, then runs on another, last.
void blame_cpus_case(BpfAttach how)
{
	require_root();
	const int cpu = hwsig_test::pick_cpu();
	int elsewhere = -1;
	cpu_set_t allowed;
	REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
	for (int c = 0; c < CPU_SETSIZE && elsewhere < 0; ++c)
		if (c != cpu && CPU_ISSET(c, &allowed))
			elsewhere = c;
	if (elsewhere < 0)
		FAIL("needs two CPUs allowed: nowhere to move the victim to");
	SchedCollector collector(how);
	INFO("attached as " << attach_name(collector.attached_as()) << "; waits on CPU " << cpu
			    << ", the victim ends on CPU " << elsewhere);
	Child victim = Child::parked_hogs(cpu, 1, 600);
	Child aggressor = Child::parked_hogs(cpu, 1, 600);
	// Pinned from here, before go(): neither runs anywhere else before its
	// own pin, so the aggressor never holds any other CPU.
	pin_process(victim.pid(), cpu);
	pin_process(aggressor.pid(), cpu);
	hwsig_test::parked_totals(victim.pid());
	hwsig_test::parked_totals(aggressor.pid());
	REQUIRE(collector.watch_vm(victim.pid()));
	REQUIRE(collector.watch_vm(aggressor.pid()));
	run_pair(victim, aggressor);
	// A first read in the middle: what it takes stays in the cell.
	const auto first = collector.blame(victim.pid());
	REQUIRE(row_of(first, Culprit::Vm, aggressor.pid()).by_culprit);
	// The victim moves: woken on `elsewhere` (stopped, then continued),
	// it waits and runs there, last.
	pin_process(victim.pid(), elsewhere);
	REQUIRE(kill(victim.pid(), SIGSTOP) == 0);
	for (int i = 0; i < 500 && last_cpu(victim.pid()) != elsewhere; ++i)
		usleep(1000);
	REQUIRE(kill(victim.pid(), SIGCONT) == 0);
	hwsig_test::parked_totals(victim.pid());
	REQUIRE(last_cpu(victim.pid()) == elsewhere);

	auto cells = collector.blame(victim.pid());
	std::ostringstream text;
	std::set<unsigned> all;
	for (const Blame &b : cells) {
		text << "\n  culprit class " << static_cast<int>(b.culprit) << " tgid " << b.culprit_tgid << ": "
		     << b.waits << " waits on CPUs";
		for (const auto &[c, reads] : b.cpu_reads) {
			text << " " << c << " (" << reads << " reads)";
			if (reads)
				all.insert(c);
		}
	}
	INFO("the victim's row:" << text.str());
	const Row row = row_of(cells, Culprit::Vm, aggressor.pid());
	REQUIRE(row.by_culprit);
	REQUIRE(row.by_culprit->waits > 0);
	// The aggressor only ever held `cpu`: every wait blamed on it ended
	// there, and none of the victim's last waits, on `elsewhere`, is.
	CHECK(cpus_of(*row.by_culprit) == std::set<unsigned>{static_cast<unsigned>(cpu)});
	// Those were seen, blamed on what held `elsewhere` (idle, host work).
	CHECK(all.count(static_cast<unsigned>(elsewhere)));
	// Every cell with waits names a CPU; each CPU taken by at most the
	// two reads.
	for (const Blame &b : cells) {
		if (b.waits)
			CHECK_FALSE(b.cpu_reads.empty());
		for (const auto &[c, reads] : b.cpu_reads)
			CHECK(reads <= 2);
	}
	// The aggressor's own waits were all on `cpu`.
	const auto back_cells = collector.blame(aggressor.pid());
	const Row back = row_of(back_cells, Culprit::Vm, victim.pid());
	REQUIRE(back.by_culprit);
	CHECK(cpus_of(*back.by_culprit) == std::set<unsigned>{static_cast<unsigned>(cpu)});
}

} // namespace

TEST_CASE("victim x culprit: the CPUs of the waits blamed on a VM, not the victim's last (tp_btf)",
	  "[sched][blame][cpus]")
{
	blame_cpus_case(BpfAttach::TpBtf);
}

TEST_CASE("victim x culprit: the CPUs of the waits blamed on a VM, not the victim's last (raw_tp fallback)",
	  "[sched][blame][cpus]")
{
	blame_cpus_case(BpfAttach::RawTp);
}

TEST_CASE("victim x culprit: a VM spinning on a VM's CPU is its culprit (tp_btf)", "[sched][blame]")
{
	blame_case(BpfAttach::TpBtf, true);
}

TEST_CASE("victim x culprit: a VM spinning on a VM's CPU is its culprit (raw_tp fallback)", "[sched][blame]")
{
	blame_case(BpfAttach::RawTp, true);
}

TEST_CASE("victim x culprit: a host process spinning on a VM's CPU is host work, not a VM (tp_btf)",
	  "[sched][blame]")
{
	blame_case(BpfAttach::TpBtf, false);
}

TEST_CASE("victim x culprit: a host process spinning on a VM's CPU is host work, not a VM (raw_tp fallback)",
	  "[sched][blame]")
{
	blame_case(BpfAttach::RawTp, false);
}

TEST_CASE("victim x culprit: an unwatched VM's index is reused from zero", "[sched][blame]")
{
	require_root();
	SchedCollector collector(BpfAttach::TpBtf);
	int cpu = hwsig_test::pick_cpu();
	Child a = Child::parked_hogs(cpu, 1, 400), b = Child::parked_hogs(cpu, 1, 400);
	REQUIRE(collector.watch_vm(a.pid()));
	REQUIRE(collector.watch_vm(b.pid()));
	a.go();
	b.go();
	a.read_report();
	b.read_report();
	hwsig_test::parked_totals(a.pid());
	hwsig_test::parked_totals(b.pid());
	REQUIRE_FALSE(collector.blame(a.pid()).empty());
	// b goes; its index, reused by another process, starts from zero both
	// as a victim and as a culprit in a's row.
	collector.unwatch_vm(b.pid());
	CHECK(collector.watched_vms() == std::vector<int>{a.pid()});
	CHECK(collector.blame(b.pid()).empty());
	Child c = Child::parked_hogs(cpu, 1, 10);
	hwsig_test::parked_totals(c.pid());
	REQUIRE(collector.watch_vm(c.pid()));
	CHECK(collector.blame(c.pid()).empty());
	for (const Blame &cell : collector.blame(a.pid()))
		CHECK_FALSE((cell.culprit == Culprit::Vm && cell.culprit_tgid == c.pid()));
	// 64 VMs at most.
	for (int tgid = 1000000; collector.watched_vms().size() < 64; ++tgid)
		REQUIRE(collector.watch_vm(tgid));
	CHECK_FALSE(collector.watch_vm(2000000));
}

TEST_CASE("sched source: the matrix at vm:NAME/culprit:WHO, derived as seconds per second", "[sched][blame][source]")
{
	require_root();
	int cpu = hwsig_test::pick_cpu();
	Child victim = Child::parked_hogs(cpu, 1, 1500), aggressor = Child::parked_hogs(cpu, 1, 1500);
	hwsig_test::parked_totals(victim.pid());
	hwsig_test::parked_totals(aggressor.pid());
	std::vector<Vm> vms(2);
	vms[0].pid = victim.pid();
	vms[0].name = "victim";
	vms[1].pid = aggressor.pid();
	vms[1].name = "batch7";
	SourcePtr source = make_bpf_sched_source();
	SourceContext ctx;
	ctx.vms = &vms;
	Snapshot first;
	first.mono_ns = monotonic_ns();
	source->collect(ctx, first);
	for (const auto &note : first.unavailable())
		FAIL_CHECK(note.id << " at " << note.scope << ": " << note.reason);
	const PairRun run = run_pair(victim, aggressor);
	const auto &[victim_report, before, after, aggressor_before, aggressor_after] = run;
	Snapshot second;
	second.mono_ns = monotonic_ns();
	source->collect(ctx, second);

	const double truth_s = static_cast<double>(after.run_delay_ns - before.run_delay_ns) / 1e9;
	const std::string cell = Scope::vm("victim").culprit(Scope::vm("batch7")).str();
	const CounterPoint *wait = second.counter(series::kVmWaitBehindNs, cell);
	REQUIRE(wait);
	const double aggressor_share =
		time_share(static_cast<double>(victim_report[2]), static_cast<double>(after.run_ns - before.run_ns),
			   static_cast<double>(aggressor_after.run_ns - aggressor_before.run_ns));
	const double aggressor_arrivals = static_cast<double>(aggressor_after.pcount - aggressor_before.pcount);
	INFO("victim waited " << truth_s << " s per schedstat; behind vm:batch7: " << wait->value / 1e9
			      << " s; batch7's time share " << aggressor_share << " in " << aggressor_arrivals
			      << " turns");
	CHECK(wait->value / 1e9 <= 1.10 * truth_s);
	const CounterPoint *preempted = second.counter(series::kVmPreemptedBy, cell);
	REQUIRE(preempted);
	CHECK(preempted->value <= aggressor_arrivals);
	// Most of it when the two had the CPU nearly to themselves (see
	// blame_case: a kworker in between takes a wait; on a busy machine
	// the order of the turns decides).
	if (aggressor_share >= kNearlyAlone) {
		CHECK(wait->value / 1e9 >= kMostWhenNearlyAlone * truth_s);
		CHECK(preempted->value >= 10);
	}
	// And the other way round.
	CHECK(second.counter(series::kVmWaitBehindNs, Scope::vm("batch7").culprit(Scope::vm("victim")).str()));
	// Derived: seconds of wait per second of the interval.
	Interval iv = derive(first, second, source->provides());
	const double elapsed_s = static_cast<double>(second.mono_ns - first.mono_ns) / 1e9;
	bool found = false;
	for (const Metric &m : iv.metrics)
		if (m.id == "sched.wait_behind_ratio" && m.scope == cell) {
			found = true;
			CHECK(m.value == Approx(wait->value / 1e9 / elapsed_s).epsilon(0.05));
		}
	CHECK(found);
}
