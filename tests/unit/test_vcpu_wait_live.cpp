// sched.vcpu_wait_ratio on this host against known contention: a fake
// guest (a process named like QEMU with a "CPU 0/KVM" thread) spins on one
// CPU, and an aggressor process spins on the same CPU; then the aggressor
// stops. The truth is the vCPU thread's own schedstat, read just before
// and just after each of the source's reads: run_delay only grows, so the
// source's growth lies between the truth's over the window inside and the
// window around, whatever else runs on the machine. No bound on the ratio
// itself: on a busy machine a spinner alone waits too.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "hwsig/derive.h"
#include "hwsig/fs.h"
#include "hwsig/procfs.h"
#include "hwsig/snapshot.h"
#include "hwsig/vm_discovery.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;

namespace {

constexpr int kCpu = 0;

void pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (::sched_setaffinity(0, sizeof(set), &set) != 0)
		::_exit(4);
}

// Child: a QEMU-like process whose vCPU thread spins on kCpu until `hold`
// reaches EOF; writes the thread's tid to ready_fd.
[[noreturn]] void spinning_guest(int ready_fd, int hold_fd)
{
	::prctl(PR_SET_NAME, "qemu-system-x86");
	std::atomic<bool> stop{false};
	std::thread vcpu([&] {
		::pthread_setname_np(::pthread_self(), "CPU 0/KVM");
		pin_self(kCpu);
		int tid = static_cast<int>(::syscall(SYS_gettid));
		if (::write(ready_fd, &tid, sizeof(tid)) != sizeof(tid))
			::_exit(3);
		while (!stop.load(std::memory_order_relaxed)) {
		}
	});
	char c;
	while (::read(hold_fd, &c, 1) > 0) {
	}
	stop = true;
	vcpu.join();
	::_exit(0);
}

[[noreturn]] void spinning_aggressor()
{
	::prctl(PR_SET_NAME, "aggressor");
	pin_self(kCpu);
	for (;;) {
	}
}

std::uint64_t run_delay_ns(int pid, int tid)
{
	auto r = read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat");
	REQUIRE(r.data);
	auto s = parse_task_schedstat(*r.data);
	REQUIRE(s.error.empty());
	return s.run_delay_ns;
}

// The source's ratio over an interval, and the thread's own run_delay
// growth over the same interval, both per second of the source's interval:
// at least `low` (from just after its first read to just before its
// second), at most `high` (from just before the first to just after the
// second).
struct Window {
	double measured = -1, low = 0, high = 0;
	// Up to the rounding of the two divisions.
	bool holds() const { return measured >= low - 1e-9 && measured <= high + 1e-9; }
};

Window measure(Source &src, const std::vector<Vm> &vms, const std::string &scope, int pid, int tid, double seconds)
{
	const std::uint64_t before0 = run_delay_ns(pid, tid);
	Snapshot s0 = collect(src, "/", &vms, monotonic_ns());
	const std::uint64_t after0 = run_delay_ns(pid, tid);
	std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
	const std::uint64_t before1 = run_delay_ns(pid, tid);
	Snapshot s1 = collect(src, "/", &vms, monotonic_ns());
	const std::uint64_t after1 = run_delay_ns(pid, tid);
	auto iv = checked_derive(s0, s1, src.provides());
	const double interval_ns = static_cast<double>(s1.mono_ns - s0.mono_ns);
	Window w;
	w.low = static_cast<double>(before1 - after0) / interval_ns;
	w.high = static_cast<double>(after1 - before0) / interval_ns;
	if (const Metric *m = metric(iv, "sched.vcpu_wait_ratio", scope))
		w.measured = m->value;
	return w;
}

} // namespace

TEST_CASE("vCPU wait on this host: the vCPU thread's own run_delay over the same window, sharing its CPU with a "
	  "spinner and alone",
	  "[vm][schedstat][live][serial]")
{
	int ready[2], hold[2];
	REQUIRE(::pipe(ready) == 0);
	REQUIRE(::pipe(hold) == 0);
	pid_t guest = ::fork();
	REQUIRE(guest >= 0);
	if (guest == 0) {
		::close(ready[0]);
		::close(hold[1]);
		spinning_guest(ready[1], hold[0]);
	}
	::close(ready[1]);
	::close(hold[0]);
	int tid = 0;
	REQUIRE(::read(ready[0], &tid, sizeof(tid)) == sizeof(tid));
	pid_t aggressor = ::fork();
	REQUIRE(aggressor >= 0);
	if (aggressor == 0)
		spinning_aggressor();
	auto stop_children = [&] {
		if (aggressor > 0) {
			::kill(aggressor, SIGKILL);
			::waitpid(aggressor, nullptr, 0);
			aggressor = 0;
		}
		if (hold[1] >= 0) {
			::close(hold[1]);
			hold[1] = -1;
			::waitpid(guest, nullptr, 0);
		}
	};

	std::vector<Vm> vms;
	for (const Vm &vm : discover_vms("/"))
		if (vm.pid == guest)
			vms.push_back(vm);
	if (vms.size() != 1 || vms[0].vcpu_tids != std::vector<int>{tid}) {
		stop_children();
		FAIL("the fake guest " << guest << " was not discovered with its vCPU thread " << tid);
	}
	const std::string scope = vms[0].scope() + "/vcpu:0";
	auto src = make_schedstat_source();

	Window shared = measure(*src, vms, scope, guest, tid, 2.0);
	::kill(aggressor, SIGKILL);
	::waitpid(aggressor, nullptr, 0);
	aggressor = 0;
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	Window alone = measure(*src, vms, scope, guest, tid, 2.0);
	Window vm_alone = measure(*src, vms, vms[0].scope(), guest, tid, 1.0); // one vCPU: the mean is it
	stop_children();

	auto print = [](const Window &w) {
		std::ostringstream out;
		out << w.measured << " (schedstat [" << w.low << ", " << w.high << "])";
		return out.str();
	};
	INFO("sharing: " << print(shared) << "; alone: " << print(alone) << "; VM mean alone: " << print(vm_alone));
	// Two spinners pinned to one CPU: each waits about half the time, more
	// when other work shares the CPU. Enough for a doubled or halved ratio
	// to fall far outside the truth's range below.
	REQUIRE(shared.low > 0.3);
	// Against the thread's own accounting over the same window.
	CHECK(shared.holds());
	CHECK(alone.holds());
	CHECK(vm_alone.holds());
}
