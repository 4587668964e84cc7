// VmScanner's quick check on a host whose pid counter has wrapped: the
// processes older than the wrap have pids above the newcomers', and must
// not be read at every scan. Run in a pid namespace of its own (root: a
// fresh /proc and ns_last_pid set by hand) so that the pids are known.
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "hwsig/vm_discovery.h"
#include "require_root.h"

namespace {

bool set_last_pid(int pid)
{
	std::ofstream f("/proc/sys/kernel/ns_last_pid");
	f << pid;
	f.flush();
	return static_cast<bool>(f);
}

pid_t sleeper()
{
	pid_t p = ::fork();
	if (p == 0) {
		::pause();
		::_exit(0);
	}
	return p;
}

// PID 1 of the new namespace: one process at pid 1001 (older than the
// wrap), the counter set back to 20, a listing, three newcomers (21..23),
// a second scan. Writes "<error>" or "<listings> <quick checks> <reads>
// <first newcomer pid> <old pid>" to fd.
int scan_after_wrap(int fd)
{
	auto report = [fd](const std::string &line) {
		return ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) ? 0 : 1;
	};
	if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
	    ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
		return report("mounting a /proc of the new pid namespace failed");
	if (!set_last_pid(1000))
		return report("writing ns_last_pid failed");
	pid_t old = sleeper();
	if (!set_last_pid(20))
		return report("writing ns_last_pid failed");
	hwsig::VmScanner scanner("/");
	scanner.scan();
	std::vector<pid_t> newcomers;
	for (int i = 0; i < 3; ++i)
		newcomers.push_back(sleeper());
	scanner.scan();
	return report(std::to_string(scanner.listings()) + " " + std::to_string(scanner.quick_checks()) + " " +
		      std::to_string(scanner.newcomer_reads()) + " " + std::to_string(newcomers.front()) + " " +
		      std::to_string(old));
	// Returning ends PID 1: the kernel kills the sleepers.
}

} // namespace

TEST_CASE("VmScanner after a pid wrap: the quick check reads the newcomers only, not the older processes above them",
	  "[vm][live]")
{
	hwsig_test::require_root();
	int fds[2];
	REQUIRE(::pipe(fds) == 0);
	pid_t outer = ::fork();
	REQUIRE(outer >= 0);
	if (outer == 0) {
		::close(fds[0]);
		if (::unshare(CLONE_NEWPID | CLONE_NEWNS) != 0)
			::_exit(::write(fds[1], "unshare failed", 14) > 0 ? 3 : 4);
		pid_t init = ::fork(); // PID 1 of the new namespace
		if (init == 0)
			::_exit(scan_after_wrap(fds[1]));
		int st = 0;
		::waitpid(init, &st, 0);
		::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 5);
	}
	::close(fds[1]);
	std::string out;
	char buf[256];
	for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
		out.append(buf, static_cast<std::size_t>(n));
	::close(fds[0]);
	int st = 0;
	REQUIRE(::waitpid(outer, &st, 0) == outer);
	INFO("the namespace's report: " << out);
	REQUIRE(WIFEXITED(st));
	REQUIRE(WEXITSTATUS(st) == 0);
	unsigned long listings = 0, quick = 0, reads = 0, first = 0, old = 0;
	REQUIRE(std::sscanf(out.c_str(), "%lu %lu %lu %lu %lu", &listings, &quick, &reads, &first, &old) == 5);
	CHECK(first == 21);
	CHECK(old == 1001);
	CHECK(listings == 1); // the newcomers are not QEMU: no second listing
	CHECK(quick == 1);
	CHECK(reads == 3); // 21, 22 and 23; not 1001
}
