// Live tests of bpf/vcpu.bpf.c: the task iterator reports a thread's
// scheduler accounting exactly as /proc/PID/task/TID/schedstat prints it,
// only for the threads asked for, and not for a tid given with the wrong
// process; the schedstat source gives the same series through it as
// through the files.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hwsig/fs.h"
#include "hwsig/procfs.h"
#include "hwsig/series.h"
#include "hwsig/snapshot.h"
#include "hwsig/source_bpf.h"
#include "hwsig/vm.h"
#include "require_root.h"
#include "trace_helpers.h"
#include "vcpu_collector.h"

using namespace hwsig;
using hwsig_test::require_root;

namespace {

// A thread that spins for a while, then blocks until released: while it
// blocks its accounting does not move, so two reads of it agree exactly.
class ParkedThread {
public:
	ParkedThread()
	{
		thread_ = std::thread([this] {
			tid_ = static_cast<int>(::syscall(SYS_gettid));
			const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
			while (std::chrono::steady_clock::now() < until)
				spins_.fetch_add(1, std::memory_order_relaxed);
			std::unique_lock lock(mu_);
			parked_ = true;
			cv_.notify_all();
			cv_.wait(lock, [this] { return released_; });
		});
		std::unique_lock lock(mu_);
		cv_.wait(lock, [this] { return parked_; });
		// Parked: give the scheduler time to switch it out for good.
		lock.unlock();
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	~ParkedThread()
	{
		{
			std::lock_guard lock(mu_);
			released_ = true;
		}
		cv_.notify_all();
		thread_.join();
	}
	int tid() const { return tid_; }

private:
	std::thread thread_;
	std::mutex mu_;
	std::condition_variable cv_;
	bool parked_ = false, released_ = false;
	std::atomic<int> tid_{0};
	std::atomic<std::uint64_t> spins_{0};
};

// The BPF reader, counting what it reported: a source that fell back to
// the files would give the same figures, so the test must see it used.
class CountingReader final : public TaskSchedReader {
public:
	explicit CountingReader(std::size_t &reported) : reported_(reported), inner_(open_bpf_task_sched_reader()) {}
	void read(const std::vector<std::pair<int, int>> &tasks, std::vector<std::optional<TaskSchedstat>> &out) override
	{
		inner_->read(tasks, out);
		reported_ += static_cast<std::size_t>(std::count_if(out.begin(), out.end(), [](const auto &t) { return t.has_value(); }));
	}

private:
	std::size_t &reported_;
	std::unique_ptr<TaskSchedReader> inner_;
};

std::size_t reported(const std::vector<std::optional<VcpuSched>> &got)
{
	return static_cast<std::size_t>(std::count_if(got.begin(), got.end(), [](const auto &v) { return v.has_value(); }));
}

TaskSchedstat from_file(int pid, int tid)
{
	auto text = read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
	REQUIRE(text.data);
	return parse_task_schedstat(*text.data);
}

// Both passes, each where the kernel has what it needs: on one without
// bpf_task_from_pid (before 6.2) asking for the look-up throws and Auto
// walks; this is the case checked there instead.
std::optional<VcpuCollector> collector_for(VcpuPass pass)
{
	const bool can_look_up = bpf_detail::has_kfunc("bpf_task_from_pid");
	if (pass == VcpuPass::LookUp && !can_look_up) {
		CHECK_THROWS(VcpuCollector(VcpuPass::LookUp));
		CHECK(VcpuCollector().pass() == VcpuPass::Walk);
		return std::nullopt;
	}
	std::optional<VcpuCollector> c;
	c.emplace(pass);
	CHECK(c->pass() == pass);
	if (can_look_up)
		CHECK(VcpuCollector().pass() == VcpuPass::LookUp); // Auto looks up
	return c;
}

} // namespace

TEST_CASE("BPF vcpu: a parked thread's accounting equals its schedstat file", "[bpf][vcpu]")
{
	require_root();
	const VcpuPass pass = GENERATE(VcpuPass::LookUp, VcpuPass::Walk);
	INFO("pass " << (pass == VcpuPass::LookUp ? "look-up" : "walk"));
	auto made = collector_for(pass);
	if (!made)
		return;
	VcpuCollector &collector = *made;
	ParkedThread a, b;
	const int pid = ::getpid();
	std::vector<std::optional<VcpuSched>> got;
	collector.read({{pid, a.tid()}, {pid, b.tid()}}, got);
	REQUIRE(got.size() == 2);
	CHECK(reported(got) == 2);
	for (std::size_t i = 0; i < 2; ++i) {
		const int tid = i == 0 ? a.tid() : b.tid();
		INFO("tid " << tid);
		REQUIRE(got[i]);
		const TaskSchedstat file = from_file(pid, tid);
		REQUIRE(file.error.empty());
		CHECK(file.on_cpu_ns >= 10'000'000u); // it spun 30 ms
		CHECK(got[i]->on_cpu_ns == file.on_cpu_ns);
		CHECK(got[i]->run_delay_ns == file.run_delay_ns);
		CHECK(got[i]->timeslices == file.timeslices);
	}
	// Only what is asked for: b alone now, then a tid given with another
	// process (a reused tid) is not reported.
	collector.read({{pid, b.tid()}}, got);
	REQUIRE(got.size() == 1);
	REQUIRE(got[0]);
	CHECK(got[0]->on_cpu_ns == from_file(pid, b.tid()).on_cpu_ns);
	collector.read({{pid + 1, a.tid()}}, got);
	REQUIRE(got.size() == 1);
	CHECK_FALSE(got[0]);
}

TEST_CASE("BPF vcpu: a thread that exited is absent", "[bpf][vcpu]")
{
	require_root();
	const VcpuPass pass = GENERATE(VcpuPass::LookUp, VcpuPass::Walk);
	auto made = collector_for(pass);
	if (!made)
		return;
	VcpuCollector &collector = *made;
	int gone = 0;
	std::thread([&] { gone = static_cast<int>(::syscall(SYS_gettid)); }).join();
	ParkedThread alive;
	std::vector<std::optional<VcpuSched>> got;
	collector.read({{::getpid(), gone}, {::getpid(), alive.tid()}}, got);
	REQUIRE(got.size() == 2);
	CHECK_FALSE(got[0]);
	CHECK(got[1]);
}

TEST_CASE("BPF vcpu: each of many threads gets its own figures, in either pass", "[bpf][vcpu]")
{
	require_root();
	const VcpuPass pass = GENERATE(VcpuPass::LookUp, VcpuPass::Walk);
	auto made = collector_for(pass);
	if (!made)
		return;
	std::vector<std::unique_ptr<ParkedThread>> threads;
	for (int i = 0; i < 12; ++i)
		threads.push_back(std::make_unique<ParkedThread>());
	const int pid = ::getpid();
	std::vector<std::pair<int, int>> asked;
	for (const auto &t : threads)
		asked.emplace_back(pid, t->tid());
	std::vector<std::optional<VcpuSched>> got;
	made->read(asked, got);
	REQUIRE(got.size() == threads.size());
	CHECK(reported(got) == threads.size());
	for (std::size_t i = 0; i < threads.size(); ++i) {
		INFO("tid " << threads[i]->tid());
		REQUIRE(got[i]);
		const TaskSchedstat file = from_file(pid, threads[i]->tid());
		CHECK(got[i]->on_cpu_ns == file.on_cpu_ns);
		CHECK(got[i]->run_delay_ns == file.run_delay_ns);
		CHECK(got[i]->timeslices == file.timeslices);
	}
	// The list shrinks, in another order: only what is asked now, each in
	// its place.
	std::vector<std::pair<int, int>> few = {asked[5], asked[0], asked[9]};
	made->read(few, got);
	REQUIRE(got.size() == 3);
	CHECK(reported(got) == 3);
	for (std::size_t i = 0; i < few.size(); ++i) {
		REQUIRE(got[i]);
		CHECK(got[i]->on_cpu_ns == from_file(pid, few[i].second).on_cpu_ns);
	}
}

TEST_CASE("BPF vcpu: the schedstat source gives the files' figures through the iterator", "[bpf][vcpu]")
{
	require_root();
	ParkedThread t0, t1, t2, u0, u1;
	// Two "VMs" of this process, one after the other in the batch: each
	// must get its own threads' figures, not its neighbour's.
	Vm vm;
	vm.pid = ::getpid();
	vm.name = "self";
	vm.vcpu_tids = {t0.tid(), t1.tid(), t2.tid()};
	Vm other = vm;
	other.name = "self2";
	other.vcpu_tids = {u0.tid(), u1.tid()};
	const std::vector<Vm> vms = {vm, other};
	std::size_t reported = 0;
	auto through_bpf = make_schedstat_source(
		[&]() -> std::unique_ptr<TaskSchedReader> { return std::make_unique<CountingReader>(reported); });
	auto through_files = make_schedstat_source();
	SourceContext ctx;
	ctx.root = "/";
	ctx.vms = &vms;
	Snapshot a, b;
	through_bpf->collect(ctx, a);
	through_files->collect(ctx, b);
	CHECK(reported == 5); // all five threads through the iterator
	for (const char *scope : {"vm:self", "vm:self2"})
		for (const char *name : {series::kSchedstatRunDelayNs, series::kSchedstatRunNs,
					 series::kSchedstatTimeslices, series::kVcpuRunNs}) {
			const auto *x = a.counter(name, scope);
			const auto *y = b.counter(name, scope);
			INFO(name << " at " << scope);
			REQUIRE(x);
			REQUIRE(y);
			CHECK(x->value == y->value);
			CHECK(x->value > 0);
		}
}
