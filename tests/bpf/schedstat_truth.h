// The kernel's own per-task scheduler accounting of a test child, from
// /proc/<pid>/task/<tid>/schedstat (run: ns on a CPU; run_delay: ns spent
// waiting on a run queue; pcount: times the task arrived on a CPU): the truth the live
// scheduler tests compare the BPF counts with.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hwsig_test {

// The sum over a process's tasks of their schedstat, and whether every task
// was asleep ('S') when read.
struct TaskTotals {
	std::uint64_t run_ns = 0;
	std::uint64_t run_delay_ns = 0;
	std::uint64_t pcount = 0;
	std::size_t tasks = 0;
	bool all_asleep = true;
};

TaskTotals task_totals(int pid);

// The totals of a parked child once nothing of it runs any more: every task
// asleep and the counts unchanged over 50 ms (a task that set its state but
// was preempted before it switched out reads 'S' too, but arrives again).
// Fails the test if that does not happen within 5 s.
TaskTotals parked_totals(int pid);

} // namespace hwsig_test
