#include "workloads.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <atomic>
#include <thread>

#include "hwsig/error.h"

namespace hwsig_test {

using hwsig::Fd;
using hwsig::throw_errno;

namespace {

std::uint64_t now_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		_exit(90);
}

void write_all(int fd, const void *buf, std::size_t len)
{
	const char *p = static_cast<const char *>(buf);
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(91);
		p += n;
		len -= static_cast<std::size_t>(n);
	}
}

bool read_all(int fd, void *buf, std::size_t len)
{
	char *p = static_cast<char *>(buf);
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= static_cast<std::size_t>(n);
	}
	return true;
}

// Forks; the child waits for the go byte, runs work(), writes the report
// (rusage switches + work's numbers) and exits.
// park: block for good after the report instead of exiting.
template <typename Work> void start(Work work, int &pid, Fd &go_w, Fd &report_r, bool park = false)
{
	int go[2], report[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC))
		throw_errno("pipe for a test child");
	pid = fork();
	if (pid < 0)
		throw_errno("fork");
	if (pid == 0) {
		close(go[1]);
		close(report[0]);
		char byte;
		if (!read_all(go[0], &byte, 1))
			_exit(92);
		std::uint64_t t0 = now_ns();
		work();
		std::uint64_t elapsed = now_ns() - t0;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		std::uint64_t out[3] = {static_cast<std::uint64_t>(ru.ru_nvcsw),
					static_cast<std::uint64_t>(ru.ru_nivcsw), elapsed};
		write_all(report[1], out, sizeof out);
		while (park)
			pause();
		_exit(0);
	}
	close(go[0]);
	close(report[1]);
	go_w.reset(go[1]);
	report_r.reset(report[0]);

}

} // namespace

Child::Child(Child &&o) noexcept
    : pid_(std::exchange(o.pid_, -1)), go_(std::move(o.go_)), report_(std::move(o.report_))
{
}

Child::~Child()
{
	if (pid_ > 0) {
		kill(pid_, SIGKILL);
		waitpid(pid_, nullptr, 0);
	}
}

void Child::go()
{
	char byte = 'g';
	if (write(go_.get(), &byte, 1) != 1)
		throw_errno("starting test child");
	go_.reset();
}

std::vector<std::uint64_t> Child::read_report()
{
	std::uint64_t out[3];
	if (!read_all(report_.get(), out, sizeof out))
		throw hwsig::Error("test child " + std::to_string(pid_) + " sent no report");
	return {out[0], out[1], out[2]};
}

std::vector<std::uint64_t> Child::wait_report()
{
	std::uint64_t out[3];
	bool ok = read_all(report_.get(), out, sizeof out);
	int status = 0;
	waitpid(std::exchange(pid_, -1), &status, 0);
	if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		throw hwsig::Error("test child failed (status " + std::to_string(status) + ")");
	return {out[0], out[1], out[2]};
}

namespace {

// Two threads pinned to cpu pass a byte `rounds` times; with park, the peer
// parks instead of exiting (the main thread parks in start()).
void ping_pong_work(int cpu, unsigned rounds, bool park)
{
	int ab[2], ba[2], done[2];
	if (pipe(ab) || pipe(ba) || pipe(done))
		_exit(93);
	std::thread peer([&, park] { // park by value: the frame is gone once parked
		pin_self(cpu);
		char b = 'y';
		for (unsigned i = 0; i < rounds; ++i) {
			if (!read_all(ab[0], &b, 1))
				_exit(94);
			write_all(ba[1], &b, 1);
		}
		write_all(done[1], &b, 1);
		while (park)
			pause();
	});
	pin_self(cpu);
	char b = 'x';
	for (unsigned i = 0; i < rounds; ++i) {
		write_all(ab[1], &b, 1);
		if (!read_all(ba[0], &b, 1))
			_exit(95);
	}
	if (!read_all(done[0], &b, 1))
		_exit(96);
	if (park)
		peer.detach();
	else
		peer.join();
}

void spin_for_ns(std::uint64_t ns)
{
	std::uint64_t end = now_ns() + ns;
	volatile std::uint64_t spin = 0;
	while (now_ns() < end)
		for (int i = 0; i < 100; ++i)
			spin = spin + 1;
}

void hog_for(unsigned ms)
{
	spin_for_ns(ms * 1000000ull);
}

// The main thread wakes a SCHED_FIFO holder on its own CPU `rounds` times;
// the holder preempts it at once and keeps the CPU for hold_us before it
// blocks again. Each round is one wait of hold_us (plus a wakeup's worth)
// for the main thread and a wait of a few us for the holder.
void timed_waits_work(int cpu, unsigned rounds, unsigned hold_us)
{
	int wake[2], ready[2], done[2];
	if (pipe(wake) || pipe(ready) || pipe(done))
		_exit(93);
	std::thread holder([=] {
		pin_self(cpu);
		struct sched_param sp = {};
		sp.sched_priority = 1;
		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
			_exit(97);
		// On the CPU now, and nothing of the main thread's can run there
		// before this blocks in read(): no byte is written early, so
		// every round is one wakeup, one preemption, one wait.
		char b = 'r';
		write_all(ready[1], &b, 1);
		for (unsigned i = 0; i < rounds; ++i) {
			if (!read_all(wake[0], &b, 1))
				_exit(94);
			spin_for_ns(hold_us * 1000ull);
		}
		write_all(done[1], &b, 1);
		for (;;)
			pause();
	});
	pin_self(cpu);
	char b = 'w';
	if (!read_all(ready[0], &b, 1))
		_exit(95);
	for (unsigned i = 0; i < rounds; ++i)
		write_all(wake[1], &b, 1);
	if (!read_all(done[0], &b, 1))
		_exit(96);
	holder.detach();
}

} // namespace

Child Child::ping_pong(int cpu, unsigned rounds)
{
	Child c;
	start([cpu, rounds] { ping_pong_work(cpu, rounds, false); }, c.pid_, c.go_, c.report_);
	return c;
}

Child Child::parked_ping_pong(int cpu, unsigned rounds)
{
	Child c;
	start([cpu, rounds] { ping_pong_work(cpu, rounds, true); }, c.pid_, c.go_, c.report_, true);
	return c;
}

Child Child::parked_timed_waits(int cpu, unsigned rounds, unsigned hold_us)
{
	Child c;
	start([cpu, rounds, hold_us] { timed_waits_work(cpu, rounds, hold_us); }, c.pid_, c.go_, c.report_, true);
	return c;
}

Child Child::parked_hogs(int cpu, unsigned threads, unsigned ms)
{
	Child c;
	start(
		[cpu, threads, ms] {
			int done[2];
			if (pipe(done))
				_exit(93);
			for (unsigned i = 1; i < threads; ++i)
				std::thread([cpu, ms, fd = done[1]] {
					pin_self(cpu);
					hog_for(ms);
					char b = 'd';
					write_all(fd, &b, 1);
					for (;;)
						pause();
				}).detach();
			pin_self(cpu);
			hog_for(ms);
			char b;
			for (unsigned i = 1; i < threads; ++i)
				if (!read_all(done[0], &b, 1))
					_exit(96);
		},
		c.pid_, c.go_, c.report_, true);
	return c;
}

Child Child::hog(int cpu, unsigned ms)
{
	Child c;
	start(
		[cpu, ms] {
			pin_self(cpu);
			hog_for(ms);
		},
		c.pid_, c.go_, c.report_);
	return c;
}

Child Child::signalled_sleeper(int cpu, int sender_cpu, unsigned ms)
{
	Child c;
	start(
		[cpu, sender_cpu, ms] {
			struct sigaction sa = {};
			sa.sa_handler = [](int) {};
			if (sigaction(SIGUSR1, &sa, nullptr)) // no SA_RESTART: nanosleep returns
				_exit(93);
			std::atomic<bool> stop{false};
			std::atomic<pid_t> sleeper{0};
			std::thread hog([cpu, ms] {
				pin_self(cpu);
				hog_for(ms);
			});
			std::thread sender([&, sender_cpu] {
				pin_self(sender_cpu);
				while (!sleeper.load())
					;
				// Paced, at a rate the sleeper's cycle does not divide:
				// signals land at every point of it, some inside
				// schedule(), and most find the sleeper asleep.
				const pid_t tgid = getpid();
				std::uint64_t next = now_ns();
				while (!stop.load()) {
					next += 17000;
					while (now_ns() < next)
						;
					syscall(SYS_tgkill, tgid, sleeper.load(), SIGUSR1);
				}
			});
			pin_self(cpu);
			sleeper = static_cast<pid_t>(syscall(SYS_gettid));
			const std::uint64_t end = now_ns() + ms * 1000000ull;
			const struct timespec nap = {0, 50000};
			while (now_ns() < end)
				nanosleep(&nap, nullptr);
			stop = true;
			sender.join();
			hog.join();
		},
		c.pid_, c.go_, c.report_);
	return c;
}

int pick_cpu()
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set))
		return 0;
	for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return 0;
}

namespace {

// The sparse backing file of `bytes` under /var/tmp: its fd and path.
Fd make_backing(std::uint64_t bytes, std::string &path)
{
	char tmpl[] = "/var/tmp/hwsig-bpf-test-XXXXXX";
	Fd backing(mkstemp(tmpl));
	if (!backing)
		throw_errno("creating the loop backing file");
	path = tmpl;
	if (ftruncate(backing.get(), static_cast<off_t>(bytes)))
		throw_errno("sizing the loop backing file");
	return backing;
}

// LOOP_SET_FD of backing on /dev/loopINDEX: 0, or errno (EBUSY: in use).
int attach_loop(int index, const Fd &backing)
{
	const std::string path = "/dev/loop" + std::to_string(index);
	Fd dev(open(path.c_str(), O_RDWR | O_CLOEXEC));
	if (!dev)
		throw_errno("opening " + path);
	return ioctl(dev.get(), LOOP_SET_FD, backing.get()) == 0 ? 0 : errno;
}

} // namespace

LoopDevice::LoopDevice(std::uint64_t bytes) : bytes_(bytes)
{
	Fd backing = make_backing(bytes, backing_);
	Fd control(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
	if (!control)
		throw_errno("opening /dev/loop-control");
	for (int attempt = 0; attempt < 8; ++attempt) {
		int index = ioctl(control.get(), LOOP_CTL_GET_FREE);
		if (index < 0)
			throw_errno("LOOP_CTL_GET_FREE");
		const int err = attach_loop(index, backing);
		if (err == 0) {
			index_ = index;
			path_ = "/dev/loop" + std::to_string(index);
			return;
		}
		if (err != EBUSY) { // EBUSY: raced with another user of the same device
			errno = err;
			throw_errno("LOOP_SET_FD on /dev/loop" + std::to_string(index));
		}
	}
	unlink(backing_.c_str());
	throw hwsig::Error("no free loop device after 8 attempts");
}

LoopDevice::LoopDevice(std::uint64_t bytes, int index) : bytes_(bytes)
{
	Fd backing = make_backing(bytes, backing_);
	// A device just detached is released when its last opener closes it,
	// and another process may hold it a moment: wait for it, up to 5 s.
	for (int attempt = 0; attempt < 50; ++attempt) {
		const int err = attach_loop(index, backing);
		if (err == 0) {
			index_ = index;
			path_ = "/dev/loop" + std::to_string(index);
			return;
		}
		if (err != EBUSY) {
			unlink(backing_.c_str());
			errno = err;
			throw_errno("LOOP_SET_FD on /dev/loop" + std::to_string(index));
		}
		usleep(100000);
	}
	unlink(backing_.c_str());
	throw hwsig::Error("/dev/loop" + std::to_string(index) + " stayed in use by another process for 5 s");
}

LoopDevice::~LoopDevice()
{
	if (!path_.empty()) {
		int fd = open(path_.c_str(), O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			ioctl(fd, LOOP_CLR_FD, 0);
			close(fd);
		}
	}
	if (!backing_.empty())
		unlink(backing_.c_str());
}

std::string LoopDevice::name() const
{
	return "loop" + std::to_string(index_);
}

namespace {

std::size_t direct_io(const std::string &dev, const std::vector<std::uint64_t> &offsets, std::size_t block,
		      bool write)
{
	Fd fd(open(dev.c_str(), (write ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC));
	if (!fd)
		throw_errno("opening " + dev + " O_DIRECT");
	void *buf = nullptr;
	if (posix_memalign(&buf, 4096, block))
		throw hwsig::Error("aligned buffer", ENOMEM);
	std::memset(buf, 0x5a, block);
	std::size_t done = 0;
	for (std::uint64_t off : offsets) {
		ssize_t n = write ? pwrite(fd.get(), buf, block, static_cast<off_t>(off))
				  : pread(fd.get(), buf, block, static_cast<off_t>(off));
		if (n != static_cast<ssize_t>(block)) {
			int err = errno;
			free(buf);
			throw hwsig::Error("direct I/O on " + dev + " at " + std::to_string(off), n < 0 ? err : EIO);
		}
		++done;
	}
	free(buf);
	return done;
}

} // namespace

std::size_t direct_reads(const std::string &dev, const std::vector<std::uint64_t> &offsets, std::size_t block)
{
	return direct_io(dev, offsets, block, false);
}

std::size_t direct_writes(const std::string &dev, const std::vector<std::uint64_t> &offsets, std::size_t block)
{
	return direct_io(dev, offsets, block, true);
}

std::vector<std::uint64_t> sequential_offsets(std::size_t n, std::size_t block)
{
	std::vector<std::uint64_t> v(n);
	for (std::size_t i = 0; i < n; ++i)
		v[i] = i * block;
	return v;
}

std::vector<std::uint64_t> random_offsets(std::size_t n, std::size_t block, std::uint64_t span, unsigned seed)
{
	std::mt19937_64 rng(seed);
	std::uniform_int_distribution<std::uint64_t> pick(0, span / block - 1);
	std::vector<std::uint64_t> v(n);
	for (auto &o : v)
		o = pick(rng) * block;
	return v;
}

} // namespace hwsig_test
