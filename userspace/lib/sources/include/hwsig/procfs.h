// procfs/sysfs sources for CPU steal, NUMA placement, huge pages, pressure
// and scheduler accounting, and the parsers they use.
//
// The parsers are pure (text in, struct out) so that unit tests and fuzzers
// call them directly. Each result has an `error`: when it is non-empty the
// text was not in the kernel's format, it says where and how (one line, the
// offending token quoted and escaped), and nothing else in the struct may be
// used. Parsers never throw, and never turn a missing field into a zero.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hwsig/fs.h"
#include "hwsig/source.h"

namespace hwsig {

// ---- /proc/stat --------------------------------------------------------

// One "cpu" or "cpuN" line, in jiffies.
struct CpuTicks {
	std::string scope; // "system" for the aggregate "cpu" line, else "cpu:N"
	// user+nice+system+idle+iowait+irq+softirq+steal: every column the line
	// has up to steal. guest and guest_nice are already inside user and nice.
	std::uint64_t total = 0;
	std::uint64_t idle = 0; // idle + iowait (the CPU ran nothing)
	std::optional<std::uint64_t> steal; // nullopt: the line has no steal column
	unsigned columns = 0;                // time columns on the line
};

struct ProcStat {
	std::vector<CpuTicks> cpus; // in file order; the aggregate line comes first
	std::string error;
};

ProcStat parse_proc_stat(std::string_view text);

// ---- "name value" files: /proc/vmstat, node*/numastat ------------------

struct KeyValues {
	std::map<std::string, std::uint64_t, std::less<>> values;
	std::string error;
};

// Every line must be "name value" with an unsigned value; names are unique.
KeyValues parse_vmstat(std::string_view text);

struct NumaStat {
	std::uint64_t local_node = 0; // pages allocated on this node by a task running on it
	std::uint64_t other_node = 0; // pages allocated on this node by a task on another node
	// Allocations that preferred this node: served here (numa_hit), or
	// served by another node because this one could not (numa_foreign).
	// Optional: absent, the node's fallback ratio is unavailable.
	std::optional<std::uint64_t> numa_hit, numa_foreign;
	std::string error;
};

// /sys/devices/system/node/nodeN/numastat; local_node and other_node are required.
NumaStat parse_numastat(std::string_view text);

// ---- /proc/meminfo and the hugetlb/THP sysfs files ---------------------

struct MeminfoValue {
	std::uint64_t value = 0;
	bool kb = false; // the line ends in "kB" (else it is a count, e.g. HugePages_Total)
};

struct Meminfo {
	std::map<std::string, MeminfoValue, std::less<>> values;
	std::string error;
};

// Lines "Name:   value" or "Name:   value kB".
Meminfo parse_meminfo(std::string_view text);

// "hugepages-2048kB" -> 2048. nullopt for anything else.
std::optional<std::uint64_t> parse_hugepage_dir_kb(std::string_view name);

// /sys/kernel/mm/transparent_hugepage/enabled, "always [madvise] never" ->
// "madvise". nullopt unless exactly one word is bracketed.
std::optional<std::string> parse_thp_mode(std::string_view text);

// ---- /proc/pressure/{cpu,memory,io} ------------------------------------

struct PressureLine {
	double avg10 = 0, avg60 = 0, avg300 = 0; // percent, 0..100
	std::uint64_t total_us = 0;              // cumulative stall time
};

struct Pressure {
	std::optional<PressureLine> some;
	std::optional<PressureLine> full; // cpu has it only since Linux 5.13
	std::string error;
};

Pressure parse_pressure(std::string_view text);

// ---- /proc/schedstat and /proc/<pid>/task/<tid>/schedstat --------------

struct SchedstatCpu {
	unsigned cpu = 0;
	std::uint64_t run_delay_ns = 0; // time tasks waited on this CPU's run queue
	std::uint64_t timeslices = 0;   // pcount: timeslices run on this CPU
};

struct Schedstat {
	unsigned version = 0; // set whenever the version line was readable
	std::vector<SchedstatCpu> cpus;
	std::string error; // an unsupported version is an error naming it
};

// Versions 15 to 17: their cpu lines are identical (9 fields); only the
// domain lines, which this parser does not read, changed.
Schedstat parse_schedstat(std::string_view text);

struct TaskSchedstat {
	std::uint64_t on_cpu_ns = 0;
	std::uint64_t run_delay_ns = 0;
	std::uint64_t timeslices = 0;
	std::string error;
};

TaskSchedstat parse_task_schedstat(std::string_view text);

// ---- helpers shared by these sources -----------------------------------

// A one-line reason for a failed read of rel (a path such as "/proc/stat",
// named as on the host, not under the root): "/proc/stat missing" for
// ENOENT, else "reading /proc/stat: <strerror>".
std::string read_failure(std::string_view rel, int err);

// "…: ‹tok›" helper for parser errors: tok truncated and non-printable bytes
// escaped, so that garbage never reaches a terminal raw.
std::string quote_token(std::string_view tok);

// NUMA node numbers under <root>/sys/devices/system/node (nodeN entries), sorted.
std::vector<unsigned> list_numa_nodes(const std::string &root);

// When a source lists the NUMA nodes (and what hangs under them) again.
// Nodes come and go only by memory hotplug, which changes
// /sys/devices/system/node/online: every check interval (5 s) that mask
// is read (one pread of a kept fd), and the layout is listed again only
// when it changed or the last listing is max_age (60 s) old. Without the
// mask (no CONFIG_NUMA; a test tree) it lists every check interval. A
// source lists at once (force) when a file of its layout fails to read: a
// node gone.
class NodeLayoutClock {
public:
	using Duration = std::chrono::steady_clock::duration;
	explicit NodeLayoutClock(Duration check = std::chrono::seconds(5), Duration max_age = std::chrono::seconds(60))
		: check_(check), max_age_(max_age)
	{
	}
	// True when the caller is to list its layout now (and does).
	bool due(const std::string &root, bool force);

private:
	std::optional<std::string> read_mask(const std::string &root);

	Duration check_, max_age_;
	std::string root_;
	bool listed_ = false;
	std::chrono::steady_clock::time_point checked_at_{}, listed_at_{};
	FileCache online_{1};
	std::optional<std::string> mask_; // at the last listing; nullopt: none
};

// ---- sources -----------------------------------------------------------

SourcePtr make_stat_source();      // sched.steal_ratio
SourcePtr make_numa_source();      // mem.numa_remote_ratio, page migrations, THP fallback
SourcePtr make_meminfo_source();   // mem.hugepage_utilization, mem.thp_anon_bytes
SourcePtr make_psi_source();       // psi.*
SourcePtr make_schedstat_source(); // sched.runq_wait_avg_us

// The vCPU threads' scheduler accounting for the schedstat source, read
// for all of them at once (a BPF task iterator, bpf/vcpu.bpf.c) instead of
// a /proc/PID/task/TID/schedstat file per thread.
class TaskSchedReader {
public:
	virtual ~TaskSchedReader() = default;
	// The accounting of these threads, each given as (pid, tid), now:
	// out[i] is tasks[i]'s (error left empty), or empty for a thread that
	// exited or whose tid another process has now. Index for index, not by
	// tid: 1,600 vCPUs beside 200 VMs are no hash map to fill and search
	// every interval. Throws on a failed read.
	virtual void read(const std::vector<std::pair<int, int>> &tasks,
			  std::vector<std::optional<TaskSchedstat>> &out) = 0;
};
using TaskSchedReaderOpener = std::function<std::unique_ptr<TaskSchedReader>()>;
// With open_reader: on the live /proc, the vCPU threads' figures come from
// the reader it opens on the first collect with VMs; the files are read
// for the threads it did not report, and for all of them once it failed.
SourcePtr make_schedstat_source(TaskSchedReaderOpener open_reader);

} // namespace hwsig
