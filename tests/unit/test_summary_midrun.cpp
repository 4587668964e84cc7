// The run summary of a scope first seen mid-run (issue 34 item 3): a
// counter that counts from zero and was absent before had counted nothing
// -- it was there, not absent. A part of a scope that existed (a culprit of
// a VM, a disk idle until then) is averaged over the whole run, zero before
// it appeared, so that its parts never add to more than the whole; only a
// scope that did not exist (a VM started mid-run) covers its own life.
//
// Ground truth: every interval derived on its own; a rate's summary is the
// sum of value x interval over the intervals / the span covered.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "derive_check.h"
#include "hwsig/derive.h"
#include "hwsig/series.h"

using namespace hwsig;

namespace {

const Metric *find(const Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == scope)
			return &m;
	return nullptr;
}

Snapshot at(int seconds)
{
	Snapshot s;
	s.mono_ns = static_cast<std::uint64_t>(seconds) * 1'000'000'000ull;
	s.realtime_ns = 1700000000000000000ull + s.mono_ns;
	for (const char *name : {series::kVmWaitBehindNs, series::kVmPreemptedBy, series::kInvoluntarySwitches,
				 series::kIoReads, series::kIoWrites, series::kIoReadBytes, series::kIoWriteBytes,
				 series::kIoLatencyUs})
		s.set_counts_from_zero(name);
	return s;
}

constexpr int kIntervals = 12;

// Snapshots at 0, 1, ..., 12 s, each filled by fill(snapshot, t).
std::vector<Snapshot> run_of(const std::function<void(Snapshot &, int)> &fill)
{
	std::vector<Snapshot> s;
	for (int t = 0; t <= kIntervals; ++t) {
		s.push_back(at(t));
		fill(s.back(), t);
	}
	return s;
}

Interval summary_of(const std::vector<Snapshot> &s, const std::vector<std::string> &ids)
{
	RunStart run;
	for (const auto &x : s)
		run.observe(x);
	return checked_summary(run, s.back(), ids);
}

// Sum over the intervals of value x interval_s, and in how many it had a value.
struct Truth {
	double integral = 0;
	int intervals = 0;
};
Truth truth(const std::vector<Snapshot> &s, const std::vector<std::string> &ids, const std::string &id,
	    const std::string &scope)
{
	Truth t;
	for (std::size_t i = 1; i < s.size(); ++i) {
		auto iv = checked_derive(s[i - 1], s[i], ids);
		if (const Metric *m = find(iv, id, scope)) {
			t.integral += m->value * iv.interval_s;
			++t.intervals;
		}
	}
	return t;
}

// Counter values at time t of a rate that is `per_s` in intervals from..12
// (interval i runs from i-1 to i s): 0 before, absent where it is 0 at
// the end of an interval before `from` (a BPF map entry not made yet).
double cumulative(int t, int from, double per_s)
{
	return t < from ? 0 : per_s * (t - from + 1);
}

const std::vector<std::string> kSchedIds = {"sched.wait_behind_ratio", "sched.preempted_by_ps",
					    "sched.vcpu_wait_ratio", "sched.involuntary_ctxsw_ps"};

} // namespace

TEST_CASE("summary: a culprit first seen mid-run of a VM there all along is over the whole run",
	  "[derive][summary][midrun]")
{
	// vm:solo from the start: its vCPU waits 0.4 s/s throughout; the
	// host's kernel threads are blamed for all of it in intervals 1-3
	// and 0.1 s/s after; a second spinner (host:other) starts at 3 s and
	// is blamed for 0.3 s/s in intervals 4-12. Its BPF map cell appears
	// in the snapshot at 4 s, counted from zero since 3 s.
	const std::string vm = "vm:solo", kernel = "vm:solo/culprit:host:kernel",
			  other = "vm:solo/culprit:host:other";
	auto s = run_of([&](Snapshot &x, int t) {
		x.add_gauge(series::kVmVcpus, vm, 1, "procfs");
		x.add_counter(series::kVcpuRunDelayNs, vm, 0.4e9 * t, "procfs");
		x.add_counter(series::kVmWaitBehindNs, kernel, 0.4e9 * std::min(t, 3) + 0.1e9 * std::max(t - 3, 0),
			      "bpf");
		if (t >= 4)
			x.add_counter(series::kVmWaitBehindNs, other, 1e9 * cumulative(t, 4, 0.3), "bpf");
	});
	auto sum = summary_of(s, kSchedIds);
	CHECK(sum.interval_s == Approx(12.0));

	const Truth t_other = truth(s, kSchedIds, "sched.wait_behind_ratio", other);
	CHECK(t_other.intervals == 9);
	CHECK(t_other.integral == Approx(2.7));
	const Metric *o = find(sum, "sched.wait_behind_ratio", other);
	REQUIRE(o);
	// 2.7 s of wait over the 12 s run: 0.225 s/s (was 0.3 "over its last 9.00 s").
	CHECK(o->value == Approx(t_other.integral / 12.0));
	CHECK(o->value == Approx(0.225));
	CHECK(o->note.empty());

	const Metric *k = find(sum, "sched.wait_behind_ratio", kernel);
	REQUIRE(k);
	CHECK(k->value == Approx(truth(s, kSchedIds, "sched.wait_behind_ratio", kernel).integral / 12.0));
	CHECK(k->value == Approx(0.175));

	// The parts add to the whole, not more.
	const Metric *own = find(sum, "sched.vcpu_wait_ratio", vm);
	REQUIRE(own);
	CHECK(own->value == Approx(0.4));
	CHECK(o->value + k->value <= own->value + 1e-9);
}

TEST_CASE("summary: a VM started mid-run covers its own life, its later parts the same span",
	  "[derive][summary][midrun]")
{
	// vm:late starts at 3 s (first in the snapshot at 4 s): 10
	// preemptions/s of its threads in intervals 4-12, the host's kernel
	// threads taking the CPU 10/s in intervals 4-6 and 4/s after, another
	// process (host:other) 6/s from interval 7 (its cell first in the
	// snapshot at 7 s).
	const std::string vm = "vm:late", kernel = "vm:late/culprit:host:kernel",
			  other = "vm:late/culprit:host:other";
	auto s = run_of([&](Snapshot &x, int t) {
		x.add_counter(series::kInvoluntarySwitches, "system", 20.0 * t, "bpf");
		if (t < 4)
			return;
		x.add_gauge(series::kVmVcpus, vm, 1, "procfs");
		x.add_counter(series::kInvoluntarySwitches, vm, cumulative(t, 4, 10), "bpf");
		x.add_counter(series::kVmPreemptedBy, kernel, 10.0 * (std::min(t, 6) - 3) + 4.0 * std::max(t - 6, 0),
			      "bpf");
		if (t >= 7)
			x.add_counter(series::kVmPreemptedBy, other, cumulative(t, 7, 6), "bpf");
	});
	auto sum = summary_of(s, kSchedIds);

	// The VM: 90 preemptions over its 9 s.
	const Truth t_vm = truth(s, kSchedIds, "sched.involuntary_ctxsw_ps", vm);
	CHECK(t_vm.intervals == 9);
	const Metric *whole = find(sum, "sched.involuntary_ctxsw_ps", vm);
	REQUIRE(whole);
	CHECK(whole->value == Approx(t_vm.integral / 9.0));
	CHECK(whole->value == Approx(10.0));
	CHECK(whole->note == "first seen 3.00 s into the run: over its last 9.00 s");

	const Metric *k = find(sum, "sched.preempted_by_ps", kernel);
	REQUIRE(k);
	CHECK(k->value == Approx(truth(s, kSchedIds, "sched.preempted_by_ps", kernel).integral / 9.0));
	CHECK(k->value == Approx(6.0));
	CHECK(k->note == "first seen 3.00 s into the run: over its last 9.00 s");

	// host:other, first seen at 6 s: over the VM's 9 s, 0 before (was
	// 6/s "over its last 6.00 s").
	const Truth t_other = truth(s, kSchedIds, "sched.preempted_by_ps", other);
	CHECK(t_other.intervals == 6);
	const Metric *o = find(sum, "sched.preempted_by_ps", other);
	REQUIRE(o);
	CHECK(o->value == Approx(t_other.integral / 9.0));
	CHECK(o->value == Approx(4.0));
	CHECK(o->note == "its VM first seen 3.00 s into the run: over its last 9.00 s");
	CHECK(k->value + o->value <= whole->value + 1e-9);

	// The host, there all along, over the whole run.
	const Metric *sys = find(sum, "sched.involuntary_ctxsw_ps", "system");
	REQUIRE(sys);
	CHECK(sys->value == Approx(20.0));
	CHECK(sys->note.empty());
}

TEST_CASE("summary: a disk idle until mid-run is over the whole run, its percentiles of its requests",
	  "[derive][summary][midrun]")
{
	// dev:vda reads 100/s throughout; dev:vdb is idle until 3 s (no map
	// entry), then reads 50/s of 4 KiB, each taking 64-127 us.
	auto lat = [](double n) {
		Histogram h;
		h.layout = Histogram::Layout::Log2;
		h.counts.assign(12, 0);
		h.counts[6] = static_cast<std::uint64_t>(n); // [64, 128) us
		return h;
	};
	auto disk = [&](Snapshot &x, const char *dev, double reads) {
		x.add_counter(series::kIoReads, dev, reads, "bpf");
		x.add_counter(series::kIoWrites, dev, 0, "bpf");
		x.add_counter(series::kIoReadBytes, dev, reads * 4096, "bpf");
		x.add_counter(series::kIoWriteBytes, dev, 0, "bpf");
		x.add_histogram(series::kIoLatencyUs, dev, lat(reads), "bpf");
	};
	auto s = run_of([&](Snapshot &x, int t) {
		disk(x, "dev:vda", 100.0 * t);
		if (t >= 4)
			disk(x, "dev:vdb", cumulative(t, 4, 50));
	});
	const std::vector<std::string> ids = {"io.iops_read", "io.read_bps", "io.iops_write", "io.latency_p50_us",
					      "io.latency_p99_us"};
	auto sum = summary_of(s, ids);

	const Truth t_vdb = truth(s, ids, "io.iops_read", "dev:vdb");
	CHECK(t_vdb.intervals == 9);
	CHECK(t_vdb.integral == Approx(450.0));
	const Metric *r = find(sum, "io.iops_read", "dev:vdb");
	REQUIRE(r);
	CHECK(r->value == Approx(t_vdb.integral / 12.0)); // 37.5 req/s (was 50 "over its last 9.00 s")
	CHECK(r->note.empty());
	const Metric *b = find(sum, "io.read_bps", "dev:vdb");
	REQUIRE(b);
	CHECK(b->value == Approx(450.0 * 4096 / 12.0));
	const Metric *w = find(sum, "io.iops_write", "dev:vdb");
	REQUIRE(w);
	CHECK(w->value == 0);
	const Metric *a = find(sum, "io.iops_read", "dev:vda");
	REQUIRE(a);
	CHECK(a->value == Approx(100.0));

	// A percentile is of the requests in the run: the idle intervals add
	// none (no zero latencies), so it is the intervals' own.
	const Metric *p99 = find(sum, "io.latency_p99_us", "dev:vdb");
	REQUIRE(p99);
	CHECK(p99->value >= 64);
	CHECK(p99->value < 128);
	CHECK(p99->note.empty());
	auto last = checked_derive(s[kIntervals - 1], s[kIntervals], ids);
	const Metric *p99_last = find(last, "io.latency_p99_us", "dev:vdb");
	REQUIRE(p99_last);
	CHECK(p99->value == Approx(p99_last->value));
}

TEST_CASE("summary: a gauge first seen mid-run is its last reading, not averaged with zeros",
	  "[derive][summary][midrun]")
{
	auto s = run_of([&](Snapshot &x, int t) {
		x.add_gauge(series::kThermalHeadroom, "zone:cpu0", 30, "sysfs");
		if (t >= 4)
			x.add_gauge(series::kThermalHeadroom, "zone:cpu1", 20.0 + t, "sysfs");
	});
	auto sum = summary_of(s, {"thermal.headroom_c"});
	const Metric *g = find(sum, "thermal.headroom_c", "zone:cpu1");
	REQUIRE(g);
	CHECK(g->value == Approx(32.0));
	CHECK(g->note.empty());
}
