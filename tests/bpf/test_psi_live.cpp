// psi.* against the kernel's own /proc/pressure totals over the same
// window, with a known stall: more CPU hogs than CPUs for part of it, or a
// thread waiting on O_DIRECT reads of a loop device. The test reads the
// totals just before and just after each of hwsig's readings: whatever runs
// in between on a loaded machine, hwsig's share lies between the kernel's
// over the window inside and the window around.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/fs.h"
#include "hwsig/procfs.h"
#include "hwsig/sampler.h"
#include "workloads.h"

namespace {

struct Reading {
	std::uint64_t ns = 0;
	std::uint64_t some_us = 0;
	std::uint64_t full_us = 0;
};

// The kernel's totals of /proc/pressure/WHAT, and when they were read.
Reading pressure(const char *what)
{
	Reading r;
	r.ns = hwsig::monotonic_ns();
	hwsig::FileRead f = hwsig::read_file(std::string("/proc/pressure/") + what);
	REQUIRE(f.data);
	hwsig::Pressure p = hwsig::parse_pressure(*f.data);
	REQUIRE(p.error.empty());
	REQUIRE(p.some);
	r.some_us = p.some->total_us;
	if (p.full)
		r.full_us = p.full->total_us;
	return r;
}

// The kernel's readings just before and just after one of hwsig's.
struct Around {
	Reading before, after;
};

template <typename Take> hwsig::Snapshot take_between(const char *what, Take take, Around &around)
{
	around.before = pressure(what);
	hwsig::Snapshot s = take();
	around.after = pressure(what);
	return s;
}

// The kernel's share, in percent, of the window between two of hwsig's
// readings of a total: hwsig read the total and the clock between the
// kernel readings around it, and both only grow.
struct Share {
	double low = 0, high = 0;
	// Up to the rounding of the divisions.
	bool holds(double pct) const { return pct >= low - 1e-6 && pct <= high + 1e-6; }
};

Share kernel_share(std::uint64_t Reading::*total_us, const Around &a, const Around &b)
{
	auto pct = [](std::uint64_t us, std::uint64_t ns) {
		return static_cast<double>(us) / 1e6 / (static_cast<double>(ns) / 1e9) * 100.0;
	};
	return {pct(b.before.*total_us - a.after.*total_us, b.after.ns - a.before.ns),
		pct(b.after.*total_us - a.before.*total_us, b.before.ns - a.after.ns)};
}

const hwsig::Metric *system_metric(const hwsig::Interval &iv, std::string_view id)
{
	for (const auto &x : iv.metrics)
		if (x.id == id && x.scope == "system")
			return &x;
	return nullptr;
}

// psi.WHAT_some_pct and psi.WHAT_full_pct of the interval a -> b against the
// kernel's shares around it: a stall above min_pct, "full" within "some",
// and hwsig's shares within the kernel's ranges.
void check_some_and_full(const char *what, const hwsig::Sampler &sampler, const hwsig::Snapshot &a,
			 const hwsig::Snapshot &b, const Around &around_a, const Around &around_b, double min_pct)
{
	const auto iv = hwsig::derive(a, b, sampler.claimed_ids());
	const std::string id = std::string("psi.") + what;
	const hwsig::Metric *some = system_metric(iv, id + "_some_pct");
	const hwsig::Metric *full = system_metric(iv, id + "_full_pct");
	REQUIRE(some);
	REQUIRE(full);
	const Share some_kernel = kernel_share(&Reading::some_us, around_a, around_b);
	const Share full_kernel = kernel_share(&Reading::full_us, around_a, around_b);
	INFO(id << "_some_pct " << some->value << " % (kernel Δtotal/Δt [" << some_kernel.low << ", "
		<< some_kernel.high << "] %), " << id << "_full_pct " << full->value << " % (kernel ["
		<< full_kernel.low << ", " << full_kernel.high << "] %) over "
		<< (around_b.before.ns - around_a.after.ns) / 1e6 << " ms");
	CHECK(some_kernel.low > min_pct);
	CHECK(some_kernel.low <= 100.5);
	CHECK(full_kernel.low <= some_kernel.high + 0.01);
	CHECK(some_kernel.holds(some->value));
	CHECK(full_kernel.holds(full->value));
}

} // namespace

TEST_CASE("psi.cpu_some_pct is the kernel's Δtotal / Δt over the same window, under a known CPU stall", "[psi]")
{
	if (!hwsig::path_exists("/proc/pressure/cpu")) {
		FAIL("no /proc/pressure/cpu: this kernel has no PSI (CONFIG_PSI, psi=1)");
	}
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(hwsig::make_psi_source());
	hwsig::Sampler sampler(std::move(sources));
	// Two hogs per CPU, pinned, for 1 s of a ~2 s window: every CPU has a
	// runnable task waiting while they run, so "some" is stalled then.
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	REQUIRE(cpus > 0);
	std::vector<hwsig_test::Child> hogs;
	for (long c = 0; c < cpus; ++c)
		for (int i = 0; i < 2; ++i)
			hogs.push_back(hwsig_test::Child::hog(static_cast<int>(c), 1000));
	auto take = [&] { return sampler.take(); };
	Around around_a, around_b;
	hwsig::Snapshot a = take_between("cpu", take, around_a);
	for (auto &h : hogs)
		h.go();
	for (auto &h : hogs)
		h.wait_report();
	std::this_thread::sleep_for(std::chrono::milliseconds(800));
	hwsig::Snapshot b = take_between("cpu", take, around_b);

	const Share kernel = kernel_share(&Reading::some_us, around_a, around_b);
	auto iv = hwsig::derive(a, b, sampler.claimed_ids());
	const hwsig::Metric *m = system_metric(iv, "psi.cpu_some_pct");
	REQUIRE(m);
	INFO("psi.cpu_some_pct " << m->value << " %, kernel Δtotal/Δt [" << kernel.low << ", " << kernel.high
				 << "] % over " << (around_b.before.ns - around_a.after.ns) / 1e6 << " ms");
	// The stall is real and large: about half the window, more on a busy
	// machine.
	CHECK(kernel.low > 25.0);
	CHECK(kernel.low <= 100.5);
	CHECK(kernel.holds(m->value));
}

TEST_CASE("psi.io_some_pct and psi.io_full_pct are the kernel's Δtotal / Δt, under O_DIRECT reads", "[psi]")
{
	if (!hwsig::path_exists("/proc/pressure/io")) {
		FAIL("no /proc/pressure/io: this kernel has no PSI (CONFIG_PSI, psi=1)");
	}
	hwsig_test::LoopDevice loop(64ull << 20);
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(hwsig::make_psi_source());
	hwsig::Sampler sampler(std::move(sources));
	auto take = [&] { return sampler.take(); };
	Around around_a, around_b;
	hwsig::Snapshot a = take_between("io", take, around_a);
	// One thread waits on 4 KiB O_DIRECT reads for about 1 s of a ~1.5 s
	// window: while it waits, "some" is stalled, and "full" too whenever
	// no other task on the host is running.
	std::size_t reads = 0;
	std::thread reader([&] {
		hwsig::Fd fd(open(loop.path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
		if (!fd)
			return;
		void *raw = nullptr;
		if (posix_memalign(&raw, 4096, 4096))
			return;
		std::unique_ptr<void, decltype(&free)> buf(raw, free);
		std::mt19937 rng(42);
		std::uniform_int_distribution<std::uint64_t> block(0, loop.bytes() / 4096 - 1);
		const std::uint64_t end = hwsig::monotonic_ns() + 1000000000ull;
		while (hwsig::monotonic_ns() < end) {
			if (pread(fd.get(), buf.get(), 4096, static_cast<off_t>(block(rng) * 4096)) != 4096)
				return;
			++reads;
		}
	});
	reader.join();
	std::this_thread::sleep_for(std::chrono::milliseconds(500));
	hwsig::Snapshot b = take_between("io", take, around_b);
	REQUIRE(reads > 1000);
	INFO(reads << " reads");
	// The stall is real: a large part of the reader's second.
	check_some_and_full("io", sampler, a, b, around_a, around_b, 5.0);
}

namespace {

// A memory cgroup limited to `limit` bytes (v1 memory controller or v2),
// removed on destruction; empty path() where neither is mounted.
class MemoryCgroup {
public:
	explicit MemoryCgroup(std::uint64_t limit)
	{
		const std::string name = "hwsig-psi-test-" + std::to_string(getpid());
		std::string dir, limit_file;
		if (hwsig::path_exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
			dir = "/sys/fs/cgroup/memory/" + name;
			limit_file = "memory.limit_in_bytes";
		} else if (hwsig::path_exists("/sys/fs/cgroup/cgroup.controllers")) {
			dir = "/sys/fs/cgroup/" + name;
			limit_file = "memory.max";
		} else {
			return;
		}
		if (mkdir(dir.c_str(), 0755) != 0)
			return;
		path_ = dir;
		if (!write(limit_file, std::to_string(limit)))
			path_.clear();
	}
	~MemoryCgroup()
	{
		if (!path_.empty())
			rmdir(path_.c_str());
	}
	const std::string &path() const { return path_; }
	bool write(const std::string &file, const std::string &text) const
	{
		hwsig::Fd fd(open((path_ + "/" + file).c_str(), O_WRONLY | O_CLOEXEC));
		return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
	}

private:
	std::string path_;
};

} // namespace

TEST_CASE("psi.memory_some_pct and psi.memory_full_pct are the kernel's Δtotal / Δt, under cgroup reclaim",
	  "[psi]")
{
	if (!hwsig::path_exists("/proc/pressure/memory")) {
		FAIL("no /proc/pressure/memory: this kernel has no PSI (CONFIG_PSI, psi=1)");
	}
	// A file four times the cgroup's limit, out of the page cache: reading
	// it in the cgroup reclaims the cgroup's own pages all along, and
	// reclaim is a memory stall.
	constexpr std::uint64_t kLimit = 16ull << 20, kFile = 64ull << 20;
	char tmpl[] = "/var/tmp/hwsig-psi-test-XXXXXX";
	hwsig::Fd file(mkstemp(tmpl));
	REQUIRE(file);
	const std::string file_path = tmpl;
	struct Unlink {
		std::string p;
		~Unlink() { unlink(p.c_str()); }
	} unlink_file{file_path};
	{
		std::vector<char> chunk(1 << 20, 'x');
		for (std::uint64_t done = 0; done < kFile; done += chunk.size())
			REQUIRE(::write(file.get(), chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
		REQUIRE(fdatasync(file.get()) == 0);
		REQUIRE(posix_fadvise(file.get(), 0, 0, POSIX_FADV_DONTNEED) == 0);
	}
	MemoryCgroup cg(kLimit);
	if (cg.path().empty()) {
		FAIL("no memory cgroup controller to make a memory stall with (v1 memory or v2 memory.max)");
	}
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(hwsig::make_psi_source());
	hwsig::Sampler sampler(std::move(sources));
	auto take = [&] { return sampler.take(); };
	Around around_a, around_b;
	hwsig::Snapshot a = take_between("memory", take, around_a);
	const pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		// Only system calls here: the parent has threads.
		if (!cg.write("cgroup.procs", std::to_string(getpid())))
			_exit(2);
		static char buf[1 << 20];
		const std::uint64_t end = hwsig::monotonic_ns() + 1000000000ull;
		while (hwsig::monotonic_ns() < end) {
			int fd = open(file_path.c_str(), O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				_exit(3);
			while (hwsig::monotonic_ns() < end && read(fd, buf, sizeof(buf)) > 0) {
			}
			close(fd);
		}
		_exit(0);
	}
	int status = 0;
	REQUIRE(waitpid(child, &status, 0) == child);
	REQUIRE(WIFEXITED(status));
	REQUIRE(WEXITSTATUS(status) == 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	hwsig::Snapshot b = take_between("memory", take, around_b);
	// Reclaim of clean page cache is quick: a small stall (about 5% here),
	// but a real one.
	check_some_and_full("memory", sampler, a, b, around_a, around_b, 0.3);
}
