// Loader and reader of sched.bpf.c: run-queue waits and involuntary
// switches per CPU and per selected process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "attach.h"
#include "hwsig/histogram.h"

namespace hwsig {

struct SchedCounts {
	Histogram wakeup_wait_us;  // wakeup -> on CPU, log2 us
	Histogram preempt_wait_us; // preempted (still runnable) -> on CPU
	std::uint64_t involuntary = 0;
	std::uint64_t runs = 0; // times a task ran on a CPU (tp_btf: counted when the run ends)
	Histogram wait_us() const;   // both kinds
	SchedCounts &operator+=(const SchedCounts &o);
};

class SchedCollector {
public:
	// Opens, loads and attaches; throws hwsig::Error (with errno) on failure.
	// milliseconds: wait slots in log2 ms instead of us (hwsigctl hist -m).
	explicit SchedCollector(BpfAttach how = BpfAttach::Auto, bool milliseconds = false);
	~SchedCollector();
	SchedCollector(SchedCollector &&) noexcept;
	SchedCollector &operator=(SchedCollector &&) noexcept;

	BpfAttach attached_as() const;
	// Per-process counts for tgid from now on (its slot starts at zero).
	// False when HWSIG_SCHED_MAX_PROCS processes are already selected.
	bool select(int tgid);
	void deselect(int tgid);
	std::vector<int> selected() const;
	// Index = CPU number (possible CPUs).
	std::vector<SchedCounts> per_cpu() const;
	std::optional<SchedCounts> process(int tgid) const;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
