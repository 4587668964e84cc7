// The pmu.vm source on this host, through the path it takes on a host with
// a core PMU (per-thread perf groups, scaled, summed per VM), with software
// events standing in for the hardware ones this machine lacks: task-clock
// as cycles and context switches as instructions. The truth: the same events
// opened by the test on the same thread, and the thread's own schedstat and
// /proc status, each read just before and just after the source's reads, so
// that whatever runs between them (on a loaded machine, anything may) the
// reference's window contains the source's and is contained in another.
#include <catch2/catch.hpp>

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "derive_check.h"
#include "hwsig/fd.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/procfs.h"
#include "hwsig/series.h"
#include "hwsig/snapshot.h"
#include "hwsig/source_pmu.h"
#include "hwsig/vm.h"

using namespace hwsig;

namespace {

struct ThreadTruth {
	std::uint64_t on_cpu_ns = 0, switches = 0;
};

ThreadTruth truth_of(int tid)
{
	ThreadTruth t;
	const std::string task = "/proc/self/task/" + std::to_string(tid);
	auto sched = read_file(task + "/schedstat");
	REQUIRE(sched.data);
	t.on_cpu_ns = parse_task_schedstat(*sched.data).on_cpu_ns;
	auto status = read_file(task + "/status");
	REQUIRE(status.data);
	for (auto line : split_lines(*status.data)) {
		auto f = split_ws(line);
		if (f.size() == 2 && (f[0] == "voluntary_ctxt_switches:" || f[0] == "nonvoluntary_ctxt_switches:"))
			t.switches += parse_u64(f[1]).value_or(0);
	}
	return t;
}

// One software event on a thread, opened with the bare syscall rather than
// through the library's PerfGroup: the count the kernel keeps, for the
// source's to be compared with.
class ThreadEvent {
public:
	ThreadEvent(std::uint64_t config, int tid)
	{
		perf_event_attr attr;
		std::memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = config;
		fd_.reset(static_cast<int>(::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC)));
		REQUIRE(fd_);
	}
	std::uint64_t read() const
	{
		std::uint64_t count = 0;
		REQUIRE(::read(fd_.get(), &count, sizeof(count)) == sizeof(count));
		return count;
	}

private:
	Fd fd_;
};

// Every reference, read at one moment.
struct Reference {
	ThreadTruth truth;
	std::uint64_t task_clock_ns = 0, switches = 0;
};

// The references' growth between two moments of the source: at least the
// growth from just after the first to just before the second, at most the
// growth from just before the first to just after the second.
struct Range {
	double low = 0, high = 0;
	bool holds(double v) const { return v >= low && v <= high; }
};

template <typename Field> Range growth(const Reference (&start)[2], const Reference (&end)[2], Field field)
{
	return {static_cast<double>(field(end[0]) - field(start[1])),
		static_cast<double>(field(end[1]) - field(start[0]))};
}

// On a CPU for `d` of the thread's own CPU time, however long the wait for
// a CPU on a loaded machine.
void spin_for(std::chrono::microseconds d)
{
	auto on_cpu_ns = [] {
		struct timespec ts;
		::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
	};
	const std::int64_t end = on_cpu_ns() + std::chrono::nanoseconds(d).count();
	while (on_cpu_ns() < end) {
	}
}

} // namespace

TEST_CASE("pmu.vm: a VM's vCPU threads counted per thread and summed at vm:NAME (software events)",
	  "[pmu][vm][live][serial]")
{
	std::map<std::string, PerfEventSpec> events = {
		{series::kPmuCycles, {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK}},
		{series::kPmuInstructions, {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES}},
		{series::kPmuLlcReferences, {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK}},
		{series::kPmuLlcMisses, {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES}},
	};
	auto src = make_pmu_vm_source(events);
	CHECK(src->name() == "pmu.vm");
	// The thread blocks on a pipe before and after its work: little of it
	// runs while either side is read.
	int go[2], done[2];
	REQUIRE(::pipe(go) == 0);
	REQUIRE(::pipe(done) == 0);
	std::atomic<int> tid{0};
	std::thread vcpu([&] {
		tid = static_cast<int>(::syscall(SYS_gettid));
		char c;
		if (::read(go[0], &c, 1) != 1)
			return;
		// 100 rounds of 2 ms on a CPU and a 1 ms sleep: 200 ms on a CPU
		// and at least 100 switches.
		for (int i = 0; i < 100; ++i) {
			spin_for(std::chrono::microseconds(2000));
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		if (::write(done[1], "x", 1) != 1)
			return;
		(void)::read(go[0], &c, 1);
	});
	while (!tid.load())
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	std::this_thread::sleep_for(std::chrono::milliseconds(20)); // blocked on go by now
	Vm vm;
	vm.pid = static_cast<int>(::getpid());
	vm.name = "selfvm";
	vm.vcpu_tids = {tid.load()};
	std::vector<Vm> vms{vm};
	SourceContext ctx;
	ctx.vms = &vms;
	const ThreadEvent ref_clock(PERF_COUNT_SW_TASK_CLOCK, tid), ref_switches(PERF_COUNT_SW_CONTEXT_SWITCHES, tid);
	auto reference = [&] { return Reference{truth_of(tid), ref_clock.read(), ref_switches.read()}; };
	Reference start[2], end[2];
	Snapshot s0;
	start[0] = reference();
	s0.mono_ns = monotonic_ns();
	src->collect(ctx, s0);
	start[1] = reference();
	CHECK(s0.unavailable().empty());
	REQUIRE(::write(go[1], "x", 1) == 1);
	char c;
	REQUIRE(::read(done[0], &c, 1) == 1);
	std::this_thread::sleep_for(std::chrono::milliseconds(20)); // blocked on go again
	Snapshot s1;
	end[0] = reference();
	s1.mono_ns = monotonic_ns();
	src->collect(ctx, s1);
	end[1] = reference();
	REQUIRE(::write(go[1], "x", 1) == 1);
	vcpu.join();
	for (int fd : {go[0], go[1], done[0], done[1]})
		::close(fd);

	const CounterPoint *c0 = s0.counter(series::kPmuCycles, "vm:selfvm");
	const CounterPoint *c1 = s1.counter(series::kPmuCycles, "vm:selfvm");
	const CounterPoint *i0 = s0.counter(series::kPmuInstructions, "vm:selfvm");
	const CounterPoint *i1 = s1.counter(series::kPmuInstructions, "vm:selfvm");
	REQUIRE(c0);
	REQUIRE(c1);
	REQUIRE(i0);
	REQUIRE(i1);
	const double task_clock = c1->value - c0->value, switches = i1->value - i0->value;
	const Range clock_ref = growth(start, end, [](const Reference &r) { return r.task_clock_ns; });
	const Range switches_ref = growth(start, end, [](const Reference &r) { return r.switches; });
	const Range on_cpu = growth(start, end, [](const Reference &r) { return r.truth.on_cpu_ns; });
	const Range status = growth(start, end, [](const Reference &r) { return r.truth.switches; });
	INFO("task-clock " << task_clock / 1e6 << " ms, the test's own [" << clock_ref.low / 1e6 << ", "
			   << clock_ref.high / 1e6 << "], schedstat [" << on_cpu.low / 1e6 << ", " << on_cpu.high / 1e6
			   << "]; switches " << switches << ", the test's own [" << switches_ref.low << ", "
			   << switches_ref.high << "], /proc status [" << status.low << ", " << status.high << "]");
	REQUIRE(on_cpu.low > 150e6);
	// The kernel's own counts of the same events over the same window:
	// exact, whatever else ran.
	CHECK(clock_ref.holds(task_clock));
	CHECK(switches_ref.holds(switches));
	// What they mean. Switches: exactly the scheduler's count.
	CHECK(status.holds(switches));
	// Time on a CPU: task-clock runs from perf's sched-in to its sched-out,
	// schedstat's runtime from the scheduler's pick to its next switch; the
	// gap is per switch (10-20 us each here, 0.4-1.9% of the runtime) and
	// grows with how long a switch takes, on a busy host too. A count
	// summed twice or lost is 50-100% off.
	CHECK(task_clock >= 0.75 * on_cpu.low);
	CHECK(task_clock <= 1.25 * on_cpu.high);
	// Never a host-wide point: the pmu source has that.
	CHECK_FALSE(s1.counter(series::kPmuCycles, "system"));
	// Derived as the catalog's IPC at vm:selfvm: switches per ns here.
	Interval iv = checked_derive(s0, s1, src->provides());
	bool found = false;
	for (const Metric &m : iv.metrics)
		if (m.id == "cpu.ipc" && m.scope == "vm:selfvm") {
			found = true;
			CHECK(m.value == Approx((i1->value - i0->value) / (c1->value - c0->value)));
		}
	CHECK(found);
	// The bandwidth estimate: 64 B per "miss" (a switch here) per second.
	const CounterPoint *m0 = s0.counter(series::kPmuLlcMisses, "vm:selfvm");
	const CounterPoint *m1 = s1.counter(series::kPmuLlcMisses, "vm:selfvm");
	REQUIRE(m0);
	REQUIRE(m1);
	CHECK(switches_ref.holds(m1->value - m0->value));
	found = false;
	for (const Metric &m : iv.metrics)
		if (m.id == "mem.llc_miss_bps" && m.scope == "vm:selfvm") {
			found = true;
			CHECK(m.value == Approx(64 * (m1->value - m0->value) / iv.interval_s));
		}
	CHECK(found);
}

TEST_CASE("pmu.vm: no core PMU said once at vm:*, a VM without vCPU threads at vm:NAME, with why",
	  "[pmu][vm]")
{
	// An event no kernel has: the same path as a host without the PMU.
	std::map<std::string, PerfEventSpec> events = {
		{series::kPmuCycles, {"cycles", PERF_TYPE_MAX + 7, 0}},
	};
	auto src = make_pmu_vm_source(events);
	Vm a;
	a.pid = static_cast<int>(::getpid());
	a.name = "a";
	a.vcpu_tids = {static_cast<int>(::syscall(SYS_gettid))};
	Vm b;
	b.pid = 1;
	b.name = "b";
	std::vector<Vm> vms{a, b};
	SourceContext ctx;
	ctx.vms = &vms;
	Snapshot s;
	src->collect(ctx, s);
	std::map<std::string, std::string> note_of;
	for (const auto &n : s.unavailable())
		note_of[n.id + " " + n.scope] = n.reason;
	// The missing PMU is every VM's: said once, at vm:*, not per VM.
	REQUIRE(note_of.count("cpu.ipc vm:*"));
	CHECK(note_of["cpu.ipc vm:*"].rfind("per-VM counting needs the core PMU: ", 0) == 0);
	CHECK(!note_of.count("cpu.ipc vm:a"));
	CHECK(note_of["cpu.llc_mpki vm:b"] == "no vCPU threads ('CPU n/KVM') to count on");
	CHECK(note_of["mem.llc_miss_bps vm:b"] == "no vCPU threads ('CPU n/KVM') to count on");
	CHECK(note_of.size() == 8); // 4 metrics at vm:*, 4 at vm:b
	// And so in the next interval, without trying to open again.
	Snapshot again;
	src->collect(ctx, again);
	std::size_t at_all = 0, at_a = 0;
	for (const auto &n : again.unavailable()) {
		at_all += n.scope == "vm:*";
		at_a += n.scope == "vm:a";
	}
	CHECK(at_all == 4);
	CHECK(at_a == 0);
	// No VM: nothing said (the pmu source speaks for the host).
	std::vector<Vm> none;
	ctx.vms = &none;
	Snapshot quiet;
	src->collect(ctx, quiet);
	CHECK(quiet.unavailable().empty());
	CHECK(quiet.counters().empty());
}
