// Loader and reader of sched.bpf.c: run-queue waits and involuntary
// switches per CPU and per selected process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
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

// Who held a CPU that a VM waited for or was preempted from: another VM or
// a class of the host's own work.
enum class Culprit { Vm, Idle, Kernel, Vhost, Other };

// One victim x culprit cell, cumulative since the victim was watched.
struct Blame {
	Culprit culprit = Culprit::Other;
	int culprit_tgid = 0;          // Culprit::Vm: the QEMU process
	std::uint64_t wait_ns = 0;     // the victim's waits that ended after the culprit ran on that CPU
	std::uint64_t waits = 0;       // how many
	std::uint64_t preemptions = 0; // the victim left a CPU still runnable, the culprit came on it
	// Where the waits were: per CPU (ascending; those with a count only),
	// how many reads of the cell (blame()) found a wait that ended on that
	// CPU's run queue since the read before. Cumulative like the counts:
	// a CPU's count grew between two reads exactly when a wait blamed
	// here ended on it in between. CPUs from HWSIG_SCHED_MAX_CPUS (512)
	// up are not placed.
	std::vector<std::pair<unsigned, std::uint64_t>> cpu_reads;
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
	// Every selected process's counts, as process() gives them, read with
	// BPF_MAP_LOOKUP_BATCH: a few system calls for all of them rather than
	// one each (per_call: slots per call, 0 = every slot in use at once).
	// Per process where the kernel has no batch lookup for the map.
	std::map<int, SchedCounts> processes(std::size_t per_call = 0) const;
	// False once the kernel refused a batch lookup: processes() reads
	// process by process from then on.
	bool batch_reads() const;

	// VM processes (QEMU tgids, all their threads) whose waits and
	// preemptions are blamed on what held the CPU. A VM is counted from
	// zero when watched, and is a culprit by name only while watched.
	// False when HWSIG_SCHED_MAX_VMS are already watched.
	bool watch_vm(int tgid);
	void unwatch_vm(int tgid);
	std::vector<int> watched_vms() const;
	// The victim's cells with any count, or nothing if it is not watched.
	// Not const: takes the CPUs of the waits since the last call (the
	// program sets a bit, this clears it) into each cell's cpu_reads.
	std::vector<Blame> blame(int victim_tgid);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace hwsig
