// process_alive: the one answer VM discovery, the BPF scheduler source and
// `stat --vm` give to "has this QEMU exited?", on a scratch /proc.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwsig/proc_alive.h"
#include "test_procfs_tree.h"

namespace {

std::string status_in(const std::string &state)
{
	return "Name:\tqemu-system-x86\nUmask:\t0022\nState:\t" + state + "\nTgid:\t4000\n";
}

// A child that waits for a signal; pid: that pid exactly (clone3's set_tid,
// 5.5+, CAP_SYS_ADMIN), -1 when it cannot be had.
pid_t paused_child(pid_t pid = 0)
{
	pid_t child;
	if (pid) {
		pid_t tid[1] = {pid};
		struct clone_args args{};
		args.exit_signal = SIGCHLD;
		args.set_tid = reinterpret_cast<std::uintptr_t>(tid);
		args.set_tid_size = 1;
		child = static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
	} else {
		child = ::fork();
	}
	if (child == 0) {
		::pause();
		::_exit(0);
	}
	return child;
}

void kill_and_reap(pid_t pid)
{
	::kill(pid, SIGKILL);
	::waitpid(pid, nullptr, 0);
}

} // namespace

TEST_CASE("process_alive: running, sleeping and in-disk are alive, zombie and dead are not", "[procfs][alive]")
{
	procfs_test::TempTree tree;
	tree.put("proc/101/status", status_in("R (running)"));
	tree.put("proc/102/status", status_in("S (sleeping)"));
	tree.put("proc/103/status", status_in("D (disk sleep)"));
	tree.put("proc/104/status", status_in("Z (zombie)"));
	tree.put("proc/105/status", status_in("X (dead)"));
	tree.put("proc/106/status", status_in("x (dead)"));
	CHECK(hwsig::process_alive(tree.root(), 101));
	CHECK(hwsig::process_alive(tree.root(), 102));
	CHECK(hwsig::process_alive(tree.root(), 103));
	CHECK_FALSE(hwsig::process_alive(tree.root(), 104));
	CHECK_FALSE(hwsig::process_alive(tree.root(), 105));
	CHECK_FALSE(hwsig::process_alive(tree.root(), 106));
}

TEST_CASE("process_alive: a missing pid is gone, a garbled status is not ours to judge", "[procfs][alive]")
{
	procfs_test::TempTree tree;
	tree.mkdir("proc/201"); // the directory left without its files
	tree.put("proc/202/status", "\x01\xff garbage without a state line\n");
	tree.put("proc/203/status", "Name:\tq\nState:\t\n");
	CHECK_FALSE(hwsig::process_alive(tree.root(), 200));
	CHECK_FALSE(hwsig::process_alive(tree.root(), 201));
	CHECK(hwsig::process_alive(tree.root(), 202));
	CHECK(hwsig::process_alive(tree.root(), 203));
}

TEST_CASE("status_is_dead reads the State: line only", "[procfs][alive]")
{
	CHECK(hwsig::status_is_dead("Name:\tq\nState:\tZ (zombie)\n"));
	CHECK(hwsig::status_is_dead("State:\tX (dead)\n"));
	CHECK_FALSE(hwsig::status_is_dead("Name:\tZ\nState:\tS (sleeping)\n"));
	CHECK_FALSE(hwsig::status_is_dead("Name:\tq\n"));
	CHECK_FALSE(hwsig::status_is_dead(""));
}

TEST_CASE("AliveWatch: a live child is alive, its zombie and its reaped pid are not, as process_alive says",
	  "[procfs][alive]")
{
	hwsig::AliveWatch watch;
	const pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::pause();
		::_exit(0);
	}
	CHECK(watch.alive("/", child));
	CHECK(watch.alive("/", child)); // the kept pidfd's answer
	CHECK(watch.open_count() == 1);
	REQUIRE(::kill(child, SIGKILL) == 0);
	siginfo_t info{};
	// Exited, not reaped: a zombie, which process_alive() calls gone too.
	REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
	CHECK_FALSE(hwsig::process_alive("/", child));
	CHECK_FALSE(watch.alive("/", child));
	// Its pidfd is dropped at once: the pid, reused, is another process.
	CHECK(watch.open_count() == 0);
	REQUIRE(::waitpid(child, nullptr, 0) == child);
	CHECK_FALSE(watch.alive("/", child));
	// A live process not asked about in a round: its pidfd is closed.
	const pid_t other = ::fork();
	REQUIRE(other >= 0);
	if (other == 0) {
		::pause();
		::_exit(0);
	}
	CHECK(watch.alive("/", other));
	watch.sweep();
	CHECK(watch.open_count() == 1);
	watch.sweep();
	CHECK(watch.open_count() == 0);
	::kill(other, SIGKILL);
	::waitpid(other, nullptr, 0);
}

TEST_CASE("AliveWatch: under a fixture root, the status files answer", "[procfs][alive]")
{
	procfs_test::TempTree tree;
	tree.put("proc/101/status", status_in("S (sleeping)"));
	tree.put("proc/104/status", status_in("Z (zombie)"));
	hwsig::AliveWatch watch;
	CHECK(watch.alive(tree.root(), 101));
	CHECK_FALSE(watch.alive(tree.root(), 104));
	CHECK_FALSE(watch.alive(tree.root(), 300));
	CHECK(watch.open_count() == 0);
}

TEST_CASE("AliveWatch: one batch gives each pid the answer alive() gives it alone", "[procfs][alive]")
{
	hwsig::AliveWatch watch;
	const pid_t live = paused_child(), doomed = paused_child();
	REQUIRE(live > 0);
	REQUIRE(doomed > 0);
	// A pid listed twice, one that never names a process, 0.
	CHECK(watch.alive("/", {live, doomed, live, 0x7fffffff, 0}) ==
	      std::vector<bool>{true, true, true, false, false});
	CHECK(watch.open_count() == 2);
	// The kept pidfds' answer.
	CHECK(watch.alive("/", {doomed, live}) == std::vector<bool>{true, true});
	REQUIRE(::kill(doomed, SIGKILL) == 0);
	siginfo_t info{};
	REQUIRE(::waitid(P_PID, static_cast<id_t>(doomed), &info, WEXITED | WNOWAIT) == 0);
	// A zombie, listed twice: gone both times, its pidfd dropped.
	CHECK(watch.alive("/", {live, doomed, doomed}) == std::vector<bool>{true, false, false});
	CHECK(watch.open_count() == 1);
	REQUIRE(::waitpid(doomed, nullptr, 0) == doomed);
	CHECK(watch.alive("/", {doomed, live}) == std::vector<bool>{false, true});
	CHECK(watch.open_count() == 1);
	CHECK(watch.alive("/", std::vector<int>{}).empty());
	// Asked about in a batch is asked about: swept only when not asked.
	watch.sweep();
	CHECK(watch.open_count() == 1);
	watch.sweep();
	CHECK(watch.open_count() == 0);
	kill_and_reap(live);
	CHECK(watch.alive("/", std::vector<int>{live}) == std::vector<bool>{false});
}

TEST_CASE("AliveWatch: a pid reused behind a kept pidfd is gone once, then the new process", "[procfs][alive]")
{
	hwsig::AliveWatch watch;
	const pid_t first = paused_child();
	REQUIRE(first > 0);
	CHECK(watch.alive("/", std::vector<int>{first}) == std::vector<bool>{true});
	kill_and_reap(first);
	const pid_t second = paused_child(first);
	if (second < 0) {
		WARN("clone3 with set_tid refused (errno " << errno << ", not root?): pid reuse not checked");
		return;
	}
	REQUIRE(second == first);
	CHECK(hwsig::process_alive("/", second));
	// The kept pidfd is the first process's: it says that one exited, as
	// discovery would have between the two had it looked.
	CHECK(watch.alive("/", std::vector<int>{second}) == std::vector<bool>{false});
	CHECK(watch.open_count() == 0);
	// Asked afresh: a pidfd of the new process.
	CHECK(watch.alive("/", std::vector<int>{second}) == std::vector<bool>{true});
	CHECK(watch.alive("/", std::vector<int>{second}) == std::vector<bool>{true});
	CHECK(watch.open_count() == 1);
	kill_and_reap(second);
	CHECK(watch.alive("/", std::vector<int>{second}) == std::vector<bool>{false});
}

TEST_CASE("AliveWatch: a batch under a fixture root reads the status files", "[procfs][alive]")
{
	procfs_test::TempTree tree;
	tree.put("proc/101/status", status_in("S (sleeping)"));
	tree.put("proc/104/status", status_in("Z (zombie)"));
	hwsig::AliveWatch watch;
	CHECK(watch.alive(tree.root(), {101, 104, 300, 101}) == std::vector<bool>{true, false, false, true});
	CHECK(watch.open_count() == 0);
}

TEST_CASE("AliveWatch: more exits at once than one wait names are all seen", "[procfs][alive]")
{
	// The exits are collected 64 at a time: 70 processes that all exited
	// between two questions are all gone, and the 71st, alive, is not.
	hwsig::AliveWatch watch;
	std::vector<int> pids;
	for (int i = 0; i < 71; ++i) {
		const pid_t pid = paused_child();
		REQUIRE(pid > 0);
		pids.push_back(pid);
	}
	CHECK(watch.alive("/", pids) == std::vector<bool>(71, true));
	CHECK(watch.open_count() == 71);
	for (int i = 0; i < 70; ++i)
		kill_and_reap(pids[static_cast<std::size_t>(i)]);
	std::vector<bool> expect(71, false);
	expect.back() = true;
	CHECK(watch.alive("/", pids) == expect);
	CHECK(watch.open_count() == 1);
	// And the survivor's answer stays its own.
	CHECK(watch.alive("/", std::vector<int>{pids.back()}) == std::vector<bool>{true});
	kill_and_reap(pids.back());
	CHECK(watch.alive("/", std::vector<int>{pids.back()}) == std::vector<bool>{false});
}
