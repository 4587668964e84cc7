// Ground-truth workloads for the live BPF tests: processes whose behaviour
// is known (pinned ping-pong, CPU hogs), a loop device and direct I/O on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwsig/fd.h"

namespace hwsig_test {

// A forked child that waits for go() before running its workload and
// reports back a few numbers (its own getrusage, timings) when done.
class Child {
public:
	Child() = default;
	Child(const Child &) = delete;
	Child &operator=(const Child &) = delete;
	Child(Child &&o) noexcept;
	~Child(); // kills and reaps if still running

	int pid() const { return pid_; }
	void go();
	// Waits for the child's report and its exit; throws on failure.
	std::vector<std::uint64_t> wait_report();
	// The report of a parked child (below), which does not exit: read it
	// without waiting for an exit; throws on failure.
	std::vector<std::uint64_t> read_report();

	// Two threads pinned to `cpu` passing a byte over two pipes `rounds`
	// times. Report: {nvcsw, nivcsw, elapsed_ns}.
	static Child ping_pong(int cpu, unsigned rounds);
	// A single-threaded busy loop pinned to `cpu` for `ms` milliseconds.
	// Report: {nvcsw, nivcsw, elapsed_ns}.
	static Child hog(int cpu, unsigned ms);

	// Sleeps cut short by signals: a sleeper thread pinned to `cpu` (with
	// a hog there, so that its switch-outs are real switches) calls
	// nanosleep over and over while a thread on `sender_cpu` sends it
	// SIGUSR1 in a loop, for `ms` milliseconds. Some signals land while the
	// sleeper is inside schedule() about to sleep: the kernel keeps it on
	// the run queue and counts a voluntary switch. Report: {nvcsw, nivcsw,
	// elapsed_ns}.
	static Child signalled_sleeper(int cpu, int sender_cpu, unsigned ms);

	// Parked children: when done, every thread blocks for good instead of
	// exiting, so that /proc/<pid>/task/* still holds each thread's final
	// schedstat and nothing of the process runs any more (the destructor
	// kills it). Read their report with read_report().
	// `threads` busy loops pinned to `cpu` (the main thread is one of them)
	// for `ms` milliseconds. Report: {nvcsw, nivcsw, elapsed_ns}.
	static Child parked_hogs(int cpu, unsigned threads, unsigned ms);
	// ping_pong's workload, parked when done.
	static Child parked_ping_pong(int cpu, unsigned rounds);
	// Waits of a known length: the main thread wakes a SCHED_FIFO thread
	// on its CPU `rounds` times, which preempts it and spins hold_us
	// before blocking again (needs root for SCHED_FIFO). The main thread
	// so waits hold_us per round; the other a few us.
	static Child parked_timed_waits(int cpu, unsigned rounds, unsigned hold_us);

private:
	int pid_ = -1;
	hwsig::Fd go_;     // parent writes one byte to start
	hwsig::Fd report_; // child writes its report
};

// The last online CPU (pin targets; avoids CPU 0's housekeeping).
int pick_cpu();

// A loop device over a sparse file of `bytes`, detached and removed on
// destruction.
class LoopDevice {
public:
	explicit LoopDevice(std::uint64_t bytes);
	// Exactly /dev/loopINDEX, for a test that needs a dev_t again: waits
	// up to 5 s while another process holds it, then throws.
	LoopDevice(std::uint64_t bytes, int index);
	~LoopDevice();
	LoopDevice(const LoopDevice &) = delete;
	LoopDevice &operator=(const LoopDevice &) = delete;

	const std::string &path() const { return path_; } // /dev/loopN
	std::string name() const;                          // loopN
	unsigned major() const { return 7; }
	unsigned minor() const { return static_cast<unsigned>(index_); }
	std::uint32_t kdev() const { return (7u << 20) | static_cast<unsigned>(index_); }
	std::uint64_t bytes() const { return bytes_; }

private:
	int index_ = -1;
	std::string path_;
	std::string backing_;
	std::uint64_t bytes_;
};

// O_DIRECT I/O of `block` bytes at each offset; throws on a short or failed
// transfer. Returns the number of requests done.
std::size_t direct_reads(const std::string &dev, const std::vector<std::uint64_t> &offsets, std::size_t block);
std::size_t direct_writes(const std::string &dev, const std::vector<std::uint64_t> &offsets, std::size_t block);

// Offsets: sequential from 0, or uniformly random (seeded), block aligned.
std::vector<std::uint64_t> sequential_offsets(std::size_t n, std::size_t block);
std::vector<std::uint64_t> random_offsets(std::size_t n, std::size_t block, std::uint64_t span, unsigned seed);

} // namespace hwsig_test
