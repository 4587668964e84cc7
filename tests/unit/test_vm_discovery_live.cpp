// VM discovery against this host's real /proc, with a fake guest whose
// threads, vhost worker and tap are known: a forked child that names itself
// like QEMU, names threads like QEMU's vCPUs and a 6.4+ vhost worker, and
// holds a real tap from /dev/net/tun (when this host allows creating one).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hwsig/fs.h"
#include "hwsig/vm_discovery.h"

using namespace hwsig;

namespace {

const Vm *find_pid(const std::vector<Vm> &vms, int pid)
{
	for (const auto &vm : vms)
		if (vm.pid == pid)
			return &vm;
	return nullptr;
}

// A non-persistent tap: it disappears with the last fd. -1 if not allowed.
int open_tap(std::string &name)
{
	int fd = ::open("/dev/net/tun", O_RDWR);
	if (fd < 0)
		return -1;
	struct ifreq ifr;
	std::memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	std::strncpy(ifr.ifr_name, "hwsigt%d", IFNAMSIZ - 1);
	if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
		::close(fd);
		return -1;
	}
	name = ifr.ifr_name;
	return fd;
}

struct ThreadReport {
	int index; // 0, 1: vCPUs; 2: the vhost worker
	int tid;
};

// Child: looks like a QEMU guest until `hold` reaches EOF.
[[noreturn]] void fake_guest(int ready_fd, int hold_fd)
{
	::prctl(PR_SET_NAME, "qemu-system-x86");
	auto worker = [&](int index, std::string comm) {
		::pthread_setname_np(::pthread_self(), comm.c_str());
		// One write below PIPE_BUF: atomic, whatever order threads run in.
		ThreadReport r{index, static_cast<int>(::syscall(SYS_gettid))};
		if (::write(ready_fd, &r, sizeof(r)) != sizeof(r))
			::_exit(3);
		char c;
		while (::read(hold_fd, &c, 1) > 0) {
		}
	};
	std::vector<std::thread> threads;
	threads.emplace_back(worker, 0, "CPU 0/KVM");
	threads.emplace_back(worker, 1, "CPU 1/KVM");
	threads.emplace_back(worker, 2, "vhost-" + std::to_string(::getpid()));
	char c;
	while (::read(hold_fd, &c, 1) > 0) {
	}
	::_exit(0);
}

bool is_zombie(int pid)
{
	auto r = read_file("/proc/" + std::to_string(pid) + "/status");
	return r.data && r.data->find("State:\tZ") != std::string::npos;
}

} // namespace

TEST_CASE("discover_vms on this host returns only live processes", "[vm][live]")
{
	std::vector<Vm> vms;
	REQUIRE_NOTHROW(vms = discover_vms("/"));
	for (const auto &vm : vms) {
		INFO("vm " << vm.name << " pid " << vm.pid);
		CHECK(path_exists("/proc/" + std::to_string(vm.pid)));
		CHECK(!vm.name.empty());
	}
}

TEST_CASE("discover_vms finds a live fake guest and drops it once it is a zombie", "[vm][live]")
{
	std::string tap;
	int tap_fd = open_tap(tap);
	int ready[2], hold[2];
	REQUIRE(::pipe(ready) == 0);
	REQUIRE(::pipe(hold) == 0);
	pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::close(ready[0]);
		::close(hold[1]);
		fake_guest(ready[1], hold[0]);
	}
	::close(ready[1]);
	::close(hold[0]);
	if (tap_fd >= 0)
		::close(tap_fd); // the child's copy keeps the tap alive

	std::vector<int> tids(3, 0);
	for (int i = 0; i < 3; i++) {
		ThreadReport r{};
		REQUIRE(::read(ready[0], &r, sizeof(r)) == sizeof(r));
		REQUIRE(r.index >= 0);
		REQUIRE(r.index < 3);
		tids[r.index] = r.tid;
	}

	auto vms = discover_vms("/");
	const Vm *vm = find_pid(vms, child);
	REQUIRE(vm);
	CHECK(vm->name == "pid-" + std::to_string(child));
	CHECK(vm->vcpu_tids == std::vector<int>{tids[0], tids[1]});
	CHECK(vm->vhost_tids == std::vector<int>{tids[2]});
	if (tap_fd >= 0) {
		CHECK(vm->taps == std::vector<std::string>{tap});
	} else {
		WARN("/dev/net/tun unusable here (not root?): the fake guest holds no tap");
		CHECK(vm->taps.empty());
	}

	::close(hold[1]); // every thread sees EOF, the child exits
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (!is_zombie(child) && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	REQUIRE(is_zombie(child));
	CHECK(find_pid(discover_vms("/"), child) == nullptr);

	int status = 0;
	REQUIRE(::waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status));
	CHECK(WEXITSTATUS(status) == 0);
	CHECK(find_pid(discover_vms("/"), child) == nullptr);
	::close(ready[0]);
}

TEST_CASE("discover_vms survives guests exiting during the scan", "[vm][live]")
{
	// Short-lived fake guests (comm qemu-system-x86, two named vCPU
	// threads living 1..7 ms) exit and are replaced while discovery runs:
	// the scan meets processes and threads that vanish under it. One
	// steady fake guest lives throughout and must be found every time.
	constexpr int kChurners = 8;
	std::set<int> children;
	auto spawn = [&]() {
		pid_t pid = ::fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			::prctl(PR_SET_NAME, "qemu-system-x86");
			auto vcpu = [](const char *comm) {
				::pthread_setname_np(::pthread_self(), comm);
				::usleep(1000 + static_cast<useconds_t>(::getpid() % 7) * 1000);
			};
			std::thread a(vcpu, "CPU 0/KVM"), b(vcpu, "CPU 1/KVM");
			a.join();
			b.join();
			::_exit(0);
		}
		children.insert(pid);
	};

	int hold[2], ready[2];
	REQUIRE(::pipe(hold) == 0);
	REQUIRE(::pipe(ready) == 0);
	pid_t steady = ::fork();
	REQUIRE(steady >= 0);
	if (steady == 0) {
		::close(hold[1]);
		::close(ready[0]);
		::prctl(PR_SET_NAME, "qemu-system-x86");
		// Named now: the first scan must find it (on a loaded machine
		// the child may not have run at all before the parent scans).
		char c = 1;
		if (::write(ready[1], &c, 1) != 1)
			::_exit(1);
		while (::read(hold[0], &c, 1) > 0) {
		}
		::_exit(0);
	}
	::close(hold[0]);
	::close(ready[1]);
	char named;
	REQUIRE(::read(ready[0], &named, 1) == 1);
	::close(ready[0]);
	for (int i = 0; i < kChurners; i++)
		spawn();

	// About a second of scanning (forking under ASan on 2 busy cores is
	// slow: a round takes tens of milliseconds), at least 3 rounds.
	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
	for (int round = 0; round < 3 || std::chrono::steady_clock::now() < end; round++) {
		std::vector<Vm> vms;
		REQUIRE_NOTHROW(vms = discover_vms("/"));
		const Vm *s = find_pid(vms, steady);
		CHECK(s != nullptr);
		if (s)
			CHECK(s->name == "pid-" + std::to_string(steady));
		for (const auto &vm : vms) {
			if (!children.count(vm.pid))
				continue;
			CHECK(vm.name == "pid-" + std::to_string(vm.pid));
			CHECK(vm.vcpu_tids.size() <= 2);
			CHECK(vm.vhost_tids.empty());
			CHECK(vm.taps.empty());
		}
		// Reap what has exited, then replace it: a bounded number per
		// round, since replacements may exit as fast as they are forked.
		std::vector<int> exited;
		for (int pid : children) {
			int status;
			if (::waitpid(pid, &status, WNOHANG) == pid)
				exited.push_back(pid);
		}
		for (int pid : exited) {
			children.erase(pid);
			spawn();
		}
	}
	for (int pid : children) {
		int status;
		CHECK(::waitpid(pid, &status, 0) == pid);
	}
	::close(hold[1]);
	int status;
	CHECK(::waitpid(steady, &status, 0) == steady);
}
