// The names the model is made of, each spelt once: the raw series sources
// put into a Snapshot and the catalog's rules read, the registry that says
// what each series is and how it is exported, and the catalog's metric ids.
// Sources, catalog, verdicts and renderers refer to these names, so a
// misspelt one fails to compile instead of finding nothing, and a new
// metric is a series name, a registry row and an id here, a source that
// emits it and a rule in catalog.cpp.
#pragma once

#include <string_view>

#include "hwsig/scope.h"

namespace hwsig::series {

// procfs /proc/stat (jiffies, cumulative). Scopes: system, cpu:N.
inline constexpr const char *kCpuStealTicks = "stat.steal";
inline constexpr const char *kCpuTotalTicks = "stat.total";
inline constexpr const char *kCpuBusyTicks = "stat.busy"; // total - idle - iowait

// NUMA allocations (pages, cumulative) from node*/numastat. Scopes: node:N, system.
inline constexpr const char *kNumaLocal = "numa.local_node";
inline constexpr const char *kNumaOther = "numa.other_node";
inline constexpr const char *kNumaHit = "numa.numa_hit";         // keyed by the preferred node
inline constexpr const char *kNumaForeign = "numa.numa_foreign"; // keyed by the preferred node
// /proc/vmstat page migrations (pages, cumulative). Scope: system.
inline constexpr const char *kPgmigrateSuccess = "vmstat.pgmigrate_success";
inline constexpr const char *kNumaPagesMigrated = "vmstat.numa_pages_migrated";
// THP faults (cumulative). Scope: system.
inline constexpr const char *kThpFaultAlloc = "vmstat.thp_fault_alloc";
inline constexpr const char *kThpFaultFallback = "vmstat.thp_fault_fallback";

// Gauges. Hugepages: scope hugepages:<size>kB (and node:N when per node).
inline constexpr const char *kHugepageUtilization = "meminfo.hugepage_utilization";
inline constexpr const char *kThpAnonBytes = "meminfo.thp_anon_bytes";
inline constexpr const char *kMemAvailableBytes = "meminfo.available_bytes";
// resctrl monitoring (RDT/PQoS), summed over the L3 domains. Scopes:
// vm:NAME (its monitoring group), system (the default group).
inline constexpr const char *kResctrlLlcOccupancy = "resctrl.llc_occupancy_bytes"; // gauge
inline constexpr const char *kResctrlMbmTotalBytes = "resctrl.mbm_total_bytes";    // counter
inline constexpr const char *kResctrlMbmLocalBytes = "resctrl.mbm_local_bytes";    // counter
// Thermal: scope zone:NAME (thermal zones, hwmon sensors) and system (minimum).
inline constexpr const char *kThermalHeadroom = "thermal.headroom_c";
// PSI avg10 percentages. Scope: system (and vm:/cgroup later).
inline constexpr const char *kPsiCpuSome = "psi.cpu_some_avg10";
inline constexpr const char *kPsiMemorySome = "psi.memory_some_avg10";
inline constexpr const char *kPsiMemoryFull = "psi.memory_full_avg10";
inline constexpr const char *kPsiIoSome = "psi.io_some_avg10";
inline constexpr const char *kPsiIoFull = "psi.io_full_avg10";
// PSI total stall time (us), cumulative: the catalog's psi.* rates.
inline constexpr const char *kPsiCpuSomeUs = "psi.cpu_some_total_us";
inline constexpr const char *kPsiMemorySomeUs = "psi.memory_some_total_us";
inline constexpr const char *kPsiMemoryFullUs = "psi.memory_full_total_us";
inline constexpr const char *kPsiIoSomeUs = "psi.io_some_total_us";
inline constexpr const char *kPsiIoFullUs = "psi.io_full_total_us";

// /proc/schedstat and /proc/PID/task/TID/schedstat: run_delay (ns) and
// timeslices (pcount), cumulative. Scopes: cpu:N, system, vm:NAME.
inline constexpr const char *kSchedstatRunDelayNs = "schedstat.run_delay_ns";
inline constexpr const char *kSchedstatTimeslices = "schedstat.timeslices";
// Per VM only: the time its vCPU threads spent on a CPU (their schedstat
// first field, summed), and how many vCPU threads it has (a gauge): with
// the run delay above, the per-VM vCPU figures without a series per vCPU.
inline constexpr const char *kSchedstatRunNs = "schedstat.run_ns";
inline constexpr const char *kVmVcpus = "vm.vcpus";
// A vCPU thread's run_delay (scope vm:NAME/vcpu:N); at vm:NAME the mean over
// the VM's vCPU threads (left out of a snapshot whose vCPU set changed).
inline constexpr const char *kVcpuRunDelayNs = "vcpu.run_delay_ns";
// A vCPU thread's time on a CPU (schedstat's first field; scope
// vm:NAME/vcpu:N); at vm:NAME the sum over its vCPU threads (left out as
// above).
inline constexpr const char *kVcpuRunNs = "vcpu.run_ns";

// Core PMU counts, scaled for multiplexing per interval (multiplex.h); the
// points carry the raw count and times too (Multiplexing).
// Scopes: cpu:N, system; vm:NAME for the four pmu.vm counts per VM
// (cycles, instructions, LLC references and misses).
inline constexpr const char *kPmuCycles = "pmu.cycles";
inline constexpr const char *kPmuInstructions = "pmu.instructions";
inline constexpr const char *kPmuStallCycles = "pmu.stall_cycles"; // cycles that retired no op
inline constexpr const char *kPmuL1dMisses = "pmu.l1d_misses";
inline constexpr const char *kPmuL2Misses = "pmu.l2_misses";
inline constexpr const char *kPmuLlcReferences = "pmu.llc_references";
inline constexpr const char *kPmuLlcMisses = "pmu.llc_misses";
inline constexpr const char *kPmuBranches = "pmu.branches";
inline constexpr const char *kPmuBranchMisses = "pmu.branch_misses";
inline constexpr const char *kPmuDtlbMisses = "pmu.dtlb_misses";
inline constexpr const char *kPmuItlbMisses = "pmu.itlb_misses";
// Uncore DRAM CAS counts (64 B each), summed per socket. Scopes: socket:N, system.
inline constexpr const char *kImcCasReads = "imc.cas_reads";
inline constexpr const char *kImcCasWrites = "imc.cas_writes";
// Where the hardware cannot tell reads from writes (AMD Zen 2/3 amd_df): both.
inline constexpr const char *kImcCasReadWrite = "imc.cas_rw";

// BPF scheduler. Histograms in log2 microsecond slots. Scopes: cpu:N, system, vm:NAME, pid:N.
inline constexpr const char *kRunqWaitUs = "bpf.runq_wait_us";           // wakeup + preempted
inline constexpr const char *kRunqWakeupWaitUs = "bpf.runq_wakeup_wait_us";
inline constexpr const char *kRunqPreemptWaitUs = "bpf.runq_preempt_wait_us";
inline constexpr const char *kInvoluntarySwitches = "bpf.involuntary_switches"; // counter
// The victim x culprit matrix, counters. Scope vm:VICTIM/culprit:WHO, WHO one
// of vm:NAME, host:kernel, host:vhost, host:other, idle (Scope::culprit()).
inline constexpr const char *kVmWaitBehindNs = "bpf.vm_wait_behind_ns"; // waits ended after WHO ran
inline constexpr const char *kVmPreemptedBy = "bpf.vm_preempted_by";     // preemptions with WHO next
// Where those waits were: CPU counts (Snapshot::CpuCounts), per CPU the
// reads of the matrix that found a wait behind WHO that ended on that CPU.
// hwsigctl top's "on CPUs" (Interval::cpus); not a metric, not exported.
inline constexpr const char *kVmWaitBehindCpus = "bpf.vm_wait_behind_cpus";

// BPF block. Scope: dev:NAME.
inline constexpr const char *kIoReads = "bpf.io_reads";   // completed requests, counter
inline constexpr const char *kIoWrites = "bpf.io_writes"; // completed requests, counter
inline constexpr const char *kIoLatencyUs = "bpf.io_latency_us"; // issue -> complete, log2 us
inline constexpr const char *kIoQueueUs = "bpf.io_queue_us";     // allocation -> issue, log2 us
inline constexpr const char *kIoSeekSlots = "bpf.io_seek_slots"; // log2 sectors of seek distance
inline constexpr const char *kIoReadBytes = "bpf.io_read_bytes";   // completed, counter
inline constexpr const char *kIoWriteBytes = "bpf.io_write_bytes"; // completed, counter
inline constexpr const char *kIoSizeKib = "bpf.io_size_kib";       // request size, log2 KiB

// BPF vhost (Documentation/vhost.rst). Scopes: vq:<pid>:<index>:<rx|tx>,
// vm:NAME, system. The depth of a TX queue (packets the guest queued) and
// of an RX queue (receive buffers the guest posted: low is trouble) are
// apart, and so are their VM and system sums.
inline constexpr const char *kVhostDepth = "bpf.vhost_depth"; // TX: LinearLog2 histogram, descriptors
inline constexpr const char *kVhostRxBuffers = "bpf.vhost_rx_buffers"; // RX: LinearLog2 histogram, buffers
inline constexpr const char *kVhostRxEmpty = "bpf.vhost_rx_empty";     // RX samples of 0 buffers, counter
inline constexpr const char *kVhostRxSamples = "bpf.vhost_rx_samples"; // RX samples, counter
inline constexpr const char *kVhostStalls = "bpf.vhost_stalls";        // RX: counter

// --- the registry ------------------------------------------------------------
// Every raw series once: what it is, where it appears and how
// Documentation/prometheus.rst exports it. The Prometheus renderer iterates
// it, the catalog's rules name its series, and test_catalog_doc.cpp checks
// both documentation tables against it: a new series is one constant above
// and one row below.

// CpuCounts: Snapshot::cpu_counts(), where something happened rather than
// how much; never exported (no family).
enum class Kind { Counter, Gauge, Histogram, CpuCounts };

// The kinds of scope a series is reported at (metrics.rst, "Scopes"), as a
// set of bits.
constexpr unsigned at(Scope::Kind k)
{
	return 1u << static_cast<unsigned>(k);
}
inline constexpr unsigned kAtSystem = at(Scope::Kind::System);
inline constexpr unsigned kAtCpu = at(Scope::Kind::Cpu);
inline constexpr unsigned kAtSocket = at(Scope::Kind::Socket);
inline constexpr unsigned kAtNode = at(Scope::Kind::Node);
inline constexpr unsigned kAtHugepages = at(Scope::Kind::Hugepages);
inline constexpr unsigned kAtNodeHugepages = at(Scope::Kind::NodeHugepages);
inline constexpr unsigned kAtZone = at(Scope::Kind::Zone);
inline constexpr unsigned kAtDev = at(Scope::Kind::Dev);
inline constexpr unsigned kAtVq = at(Scope::Kind::Vq);
inline constexpr unsigned kAtVm = at(Scope::Kind::Vm);
inline constexpr unsigned kAtVmVcpu = at(Scope::Kind::VmVcpu);
inline constexpr unsigned kAtVmCulprit = at(Scope::Kind::VmCulprit);
inline constexpr unsigned kAtVmDev = at(Scope::Kind::VmDev); // a VM's requests per disk: stat and JSON only
inline constexpr unsigned kAtPid = at(Scope::Kind::Pid);

// Which vm scopes go to the hwsig_vm_<family> family (Documentation/
// prometheus.rst, "Series budget"): by default few enough that a VM costs
// at most 25 series whatever its vCPU count; the rest behind a switch.
enum class VmExport {
	All,       // vm:NAME by default
	Detail,    // vm:NAME only with the vm-detail switch
	PartsOnly, // not vm:NAME (a mean or sum of its vCPUs'): vm:NAME/vcpu:N with per-vcpu
};

// How a log2 histogram's slots become buckets in the exported unit.
struct Buckets {
	double scale = 1;      // exported unit per raw unit: bound * scale / div
	double div = 1;        // 1e6: us -> s (a division: 4/1e6 prints as 4e-06)
	double step = 0;       // resolution of an integer-valued quantity in the exported unit, 0 if continuous
	bool open_last = true; // the BPF program clamps into the last slot: it has no upper bound
	// The few bounds a per-VM, per-device or per-queue histogram keeps in
	// the text formats by default: the raw upper ends of slots (1024: the
	// slot that ends at 1024 us, le="0.001024"); 0 ends the list.
	double coarse[8] = {};
	unsigned slots = 0; // as the BPF program keeps them (static_assert in its loader)
};

struct Def {
	const char *name;
	Kind kind;
	const char *unit; // raw, as the source puts it in the snapshot
	unsigned at;      // at() of the scope kinds
	const char *family; // Prometheus name without hwsig_; nullptr: not exported
	const char *help;
	double scale = 1; // counters and gauges: value * scale / div, a division
	double div = 1;   // so that 2210 ticks print as 22.1, not 22.100000000000001
	Buckets buckets{};
	bool pmu = false; // multiplexed hardware counter: exported raw, with hwsig_pmu_{enabled,running}_seconds_total
	VmExport vm = VmExport::All;
	// A victim x culprit row: the family of its named culprit VMs
	// (hwsig_vm_<by_vm>{vm,culprit_vm}); hwsig_vm_<family> has the classes.
	const char *by_vm = nullptr;
};

// USER_HZ: /proc/stat counts in 1/100 s on every Linux ABI hwsig runs on
// (the kernel converts from HZ for userspace).
inline constexpr double kUserHz = 100.0;
// Run-queue waits per VM: under ~1 ms, under ~16 ms, longer.
inline constexpr Buckets kRunqSeconds{1, 1e6, 0, true, {1024, 16384}, 27};
// Block latency per device or VM: ~256 us to ~262 ms in steps of 4.
inline constexpr Buckets kBlockSeconds{1, 1e6, 0, true, {256, 1024, 4096, 16384, 65536, 262144}, 27};
inline constexpr Buckets kQueueSeconds{1, 1e6, 0, true, {256, 4096, 65536}, 27};
// Under 8 KiB (4 KiB pages), under 128 KiB, under 1 MiB, larger.
inline constexpr Buckets kSizeBytes{1024, 1, 1, true, {8, 128, 1024}, 20};
// Sequential (under 2 sectors), under 1 MiB, under 1 GiB, farther.
inline constexpr Buckets kSeekBytes{512, 1, 512, true, {2, 2048, 2097152}, 48};
// Virtqueue depths (LinearLog2, the last slot bounded by the 16-bit ring):
// empty, under 8, under 64, under 1024, more.
inline constexpr Buckets kExactDepth{1, 1, 1, false, {1, 8, 64, 1024}, 74};

inline constexpr unsigned kAtCpus = kAtCpu | kAtSystem;
inline constexpr unsigned kAtNodes = kAtNode | kAtSystem;
inline constexpr unsigned kAtQueues = kAtVq | kAtVm | kAtSystem;

inline constexpr Def kRegistry[] = {
	{kCpuStealTicks, Kind::Counter, "ticks", kAtCpus, "cpu_steal_seconds_total",
	 "CPU time stolen by the hypervisor (/proc/stat steal, USER_HZ ticks / 100).", 1, kUserHz},
	{kCpuTotalTicks, Kind::Counter, "ticks", kAtCpus, "cpu_time_seconds_total",
	 "CPU time in every mode: user+nice+system+idle+iowait+irq+softirq+steal (/proc/stat).", 1, kUserHz},
	{kCpuBusyTicks, Kind::Counter, "ticks", kAtCpus, "cpu_busy_seconds_total",
	 "CPU time not idle (/proc/stat total less idle and iowait, USER_HZ ticks / 100).", 1, kUserHz},
	{kNumaLocal, Kind::Counter, "pages", kAtNodes, "numa_local_node_pages_total",
	 "Pages of this node's memory allocated by tasks running on it (numastat local_node)."},
	{kNumaOther, Kind::Counter, "pages", kAtNodes, "numa_other_node_pages_total",
	 "Pages of this node's memory allocated by tasks running on another node (numastat other_node)."},
	{kNumaHit, Kind::Counter, "pages", kAtNodes, "numa_hit_pages_total",
	 "Pages allocated that preferred this node and were served by it (numastat numa_hit)."},
	{kNumaForeign, Kind::Counter, "pages", kAtNodes, "numa_foreign_pages_total",
	 "Pages allocated that preferred this node but were served by another node (numastat numa_foreign)."},
	{kPgmigrateSuccess, Kind::Counter, "pages", kAtSystem, "page_migrations_total",
	 "Pages migrated successfully (/proc/vmstat pgmigrate_success)."},
	{kNumaPagesMigrated, Kind::Counter, "pages", kAtSystem, "numa_pages_migrated_total",
	 "Pages migrated by automatic NUMA balancing (/proc/vmstat numa_pages_migrated)."},
	{kThpFaultAlloc, Kind::Counter, "faults", kAtSystem, "thp_fault_alloc_total",
	 "Page faults served with a transparent huge page (/proc/vmstat thp_fault_alloc)."},
	{kThpFaultFallback, Kind::Counter, "faults", kAtSystem, "thp_fault_fallback_total",
	 "THP page faults that fell back to small pages (/proc/vmstat thp_fault_fallback)."},
	{kHugepageUtilization, Kind::Gauge, "ratio", kAtHugepages | kAtNodeHugepages, "hugepage_utilization_ratio",
	 "HugeTLB pages in use or reserved by a mapping / nr_hugepages (surplus included), per page size."},
	{kThpAnonBytes, Kind::Gauge, "B", kAtSystem, "thp_anon_bytes",
	 "Anonymous memory mapped with transparent huge pages (/proc/meminfo AnonHugePages)."},
	{kMemAvailableBytes, Kind::Gauge, "B", kAtSystem, "memory_available_bytes",
	 "Memory available for new work without swapping, by the kernel's estimate (/proc/meminfo MemAvailable)."},
	{kResctrlLlcOccupancy, Kind::Gauge, "B", kAtVm | kAtSystem, "llc_occupancy_bytes",
	 "Last-level cache held by the tasks of a resctrl monitoring group, summed over the L3 domains "
	 "(resctrl llc_occupancy; host: the default group)."},
	{kResctrlMbmTotalBytes, Kind::Counter, "B", kAtVm | kAtSystem, "mbm_total_bytes_total",
	 "Memory bandwidth bytes of a resctrl monitoring group's tasks, any node, summed over the L3 "
	 "domains (resctrl mbm_total_bytes; host: the default group)."},
	{kResctrlMbmLocalBytes, Kind::Counter, "B", kAtVm | kAtSystem, "mbm_local_bytes_total",
	 "Memory bandwidth bytes of a resctrl monitoring group's tasks to their own node, summed over "
	 "the L3 domains (resctrl mbm_local_bytes; host: the default group)."},
	{kThermalHeadroom, Kind::Gauge, "degC", kAtZone | kAtSystem, "thermal_headroom_celsius",
	 "Throttle point minus current temperature of a thermal zone or hwmon sensor."},
	{kPsiCpuSome, Kind::Gauge, "%", kAtSystem, "pressure_cpu_some_avg10_ratio",
	 "Share of the last 10 s some task waited for a CPU (/proc/pressure/cpu some avg10 / 100).", 1, 100},
	{kPsiMemorySome, Kind::Gauge, "%", kAtSystem, "pressure_memory_some_avg10_ratio",
	 "Share of the last 10 s some task stalled on memory (/proc/pressure/memory some avg10 / 100).", 1, 100},
	{kPsiMemoryFull, Kind::Gauge, "%", kAtSystem, "pressure_memory_full_avg10_ratio",
	 "Share of the last 10 s all non-idle tasks stalled on memory (/proc/pressure/memory full avg10 / 100).",
	 1, 100},
	{kPsiIoSome, Kind::Gauge, "%", kAtSystem, "pressure_io_some_avg10_ratio",
	 "Share of the last 10 s some task stalled on I/O (/proc/pressure/io some avg10 / 100).", 1, 100},
	{kPsiIoFull, Kind::Gauge, "%", kAtSystem, "pressure_io_full_avg10_ratio",
	 "Share of the last 10 s all non-idle tasks stalled on I/O (/proc/pressure/io full avg10 / 100).", 1, 100},
	{kPsiCpuSomeUs, Kind::Counter, "us", kAtSystem, "pressure_cpu_some_seconds_total",
	 "Time some task waited for a CPU (/proc/pressure/cpu some total, us / 1e6).", 1, 1e6},
	{kPsiMemorySomeUs, Kind::Counter, "us", kAtSystem, "pressure_memory_some_seconds_total",
	 "Time some task stalled on memory (/proc/pressure/memory some total, us / 1e6).", 1, 1e6},
	{kPsiMemoryFullUs, Kind::Counter, "us", kAtSystem, "pressure_memory_full_seconds_total",
	 "Time all non-idle tasks stalled on memory (/proc/pressure/memory full total, us / 1e6).", 1, 1e6},
	{kPsiIoSomeUs, Kind::Counter, "us", kAtSystem, "pressure_io_some_seconds_total",
	 "Time some task stalled on I/O (/proc/pressure/io some total, us / 1e6).", 1, 1e6},
	{kPsiIoFullUs, Kind::Counter, "us", kAtSystem, "pressure_io_full_seconds_total",
	 "Time all non-idle tasks stalled on I/O (/proc/pressure/io full total, us / 1e6).", 1, 1e6},
	{kSchedstatRunDelayNs, Kind::Counter, "ns", kAtCpus | kAtVm, "schedstat_run_delay_seconds_total",
	 "Time tasks spent runnable waiting for a CPU (schedstat run_delay; per VM: its vCPU threads).", 1, 1e9},
	{kSchedstatTimeslices, Kind::Counter, "timeslices", kAtCpus | kAtVm, "schedstat_timeslices_total",
	 "Timeslices run (schedstat pcount; per VM: its vCPU threads).", 1, 1, {}, false, VmExport::Detail},
	{kSchedstatRunNs, Kind::Counter, "ns", kAtVm, "schedstat_run_seconds_total",
	 "Time a VM's vCPU threads spent on a CPU (their schedstat, summed).", 1, 1e9},
	{kVmVcpus, Kind::Gauge, "threads", kAtVm, "vcpus", "vCPU threads of a VM (named 'CPU n/KVM')."},
	{kVcpuRunDelayNs, Kind::Counter, "ns", kAtVm | kAtVmVcpu, "vcpu_run_delay_seconds_total",
	 "Time a vCPU thread spent runnable waiting for a CPU (its schedstat run_delay), per vCPU.", 1, 1e9, {},
	 false, VmExport::PartsOnly},
	{kVcpuRunNs, Kind::Counter, "ns", kAtVm | kAtVmVcpu, "vcpu_run_seconds_total",
	 "Time a vCPU thread spent on a CPU (its schedstat), per vCPU.", 1, 1e9, {}, false, VmExport::PartsOnly},
	{kPmuCycles, Kind::Counter, "cycles", kAtCpus | kAtVm, "cpu_cycles_total", "Core cycles (PMU, as counted).",
	 1, 1, {}, true},
	{kPmuInstructions, Kind::Counter, "instructions", kAtCpus | kAtVm, "cpu_instructions_total",
	 "Instructions retired (PMU, as counted).", 1, 1, {}, true},
	{kPmuStallCycles, Kind::Counter, "cycles", kAtCpus, "cpu_stall_cycles_total",
	 "Stall cycles: cycles in which the thread retired no op (Intel UOPS_RETIRED.STALLS, "
	 "AMD retired ops inv cmask=1; PMU, as counted).",
	 1, 1, {}, true},
	{kPmuL1dMisses, Kind::Counter, "misses", kAtCpus, "cpu_l1d_misses_total",
	 "L1 data cache misses (PMU, as counted).", 1, 1, {}, true},
	{kPmuL2Misses, Kind::Counter, "misses", kAtCpus, "cpu_l2_misses_total",
	 "L2 cache misses (PMU, as counted).", 1, 1, {}, true},
	{kPmuLlcReferences, Kind::Counter, "references", kAtCpus | kAtVm, "cpu_llc_references_total",
	 "Last-level cache references (PMU, as counted).", 1, 1, {}, true},
	{kPmuLlcMisses, Kind::Counter, "misses", kAtCpus | kAtVm, "cpu_llc_misses_total",
	 "Last-level cache misses (PMU, as counted).", 1, 1, {}, true},
	{kPmuBranches, Kind::Counter, "branches", kAtCpus, "cpu_branches_total",
	 "Branch instructions retired (PMU, as counted).", 1, 1, {}, true},
	{kPmuBranchMisses, Kind::Counter, "misses", kAtCpus, "cpu_branch_misses_total",
	 "Mispredicted branches (PMU, as counted).", 1, 1, {}, true},
	{kPmuDtlbMisses, Kind::Counter, "walks", kAtCpus, "cpu_dtlb_misses_total",
	 "Data TLB misses that caused a page walk (PMU, as counted).", 1, 1, {}, true},
	{kPmuItlbMisses, Kind::Counter, "walks", kAtCpus, "cpu_itlb_misses_total",
	 "Instruction TLB misses that caused a page walk (PMU, as counted).", 1, 1, {}, true},
	{kImcCasReads, Kind::Counter, "CAS", kAtSocket | kAtSystem, "dram_read_bytes_total",
	 "DRAM bytes read: memory controller CAS read commands x 64 B (uncore PMU, as counted).", 64, 1, {}, true},
	{kImcCasWrites, Kind::Counter, "CAS", kAtSocket | kAtSystem, "dram_write_bytes_total",
	 "DRAM bytes written: memory controller CAS write commands x 64 B (uncore PMU, as counted).", 64, 1, {},
	 true},
	{kImcCasReadWrite, Kind::Counter, "CAS", kAtSocket | kAtSystem, "dram_bytes_total",
	 "DRAM bytes read or written where the PMU cannot split them: CAS commands x 64 B (uncore PMU, as counted).",
	 64, 1, {}, true},
	{kRunqWaitUs, Kind::Histogram, "us", kAtCpus | kAtVm | kAtPid, "runq_wait_seconds",
	 "Run-queue wait, wakeup or preemption to running (BPF sched; _sum estimated from slot midpoints).", 1, 1,
	 kRunqSeconds},
	{kRunqWakeupWaitUs, Kind::Histogram, "us", kAtCpus | kAtVm | kAtPid, "runq_wakeup_wait_seconds",
	 "Run-queue wait after a wakeup (BPF sched; _sum estimated from slot midpoints).", 1, 1, kRunqSeconds, false,
	 VmExport::Detail},
	{kRunqPreemptWaitUs, Kind::Histogram, "us", kAtCpus | kAtVm | kAtPid, "runq_preempt_wait_seconds",
	 "Run-queue wait after a preemption (BPF sched; _sum estimated from slot midpoints).", 1, 1, kRunqSeconds,
	 false, VmExport::Detail},
	{kInvoluntarySwitches, Kind::Counter, "switches", kAtCpus | kAtVm | kAtPid, "involuntary_switches_total",
	 "Context switches that preempted a still runnable task (BPF sched).", 1, 1, {}, false, VmExport::Detail},
	{kVmWaitBehindNs, Kind::Counter, "ns", kAtVmCulprit, "wait_behind_seconds_total",
	 "Run-queue wait of a VM's threads, by what last held the CPU before they got it (culprit: "
	 "self, other_vm, host:kernel, host:vhost, host:other, idle; the named VMs in "
	 "hwsig_vm_wait_behind_vm_seconds_total).",
	 1, 1e9, {}, false, VmExport::All, "wait_behind_vm_seconds_total"},
	{kVmPreemptedBy, Kind::Counter, "switches", kAtVmCulprit, "preempted_by_total",
	 "Involuntary switches of a VM's threads, by what took the CPU (culprit as for "
	 "hwsig_vm_wait_behind_seconds_total).",
	 1, 1, {}, false, VmExport::Detail, "preempted_by_vm_total"},
	{kVmWaitBehindCpus, Kind::CpuCounts, "reads", kAtVmCulprit, nullptr, nullptr},
	{kIoReads, Kind::Counter, "requests", kAtDev | kAtVm | kAtVmDev, "block_reads_total",
	 "Completed read requests (BPF block)."},
	{kIoWrites, Kind::Counter, "requests", kAtDev | kAtVm | kAtVmDev, "block_writes_total",
	 "Completed write requests (BPF block)."},
	{kIoReadBytes, Kind::Counter, "B", kAtDev | kAtVm | kAtVmDev, "block_read_bytes_total",
	 "Bytes of completed read requests (BPF block)."},
	{kIoWriteBytes, Kind::Counter, "B", kAtDev | kAtVm | kAtVmDev, "block_write_bytes_total",
	 "Bytes of completed write requests (BPF block)."},
	{kIoLatencyUs, Kind::Histogram, "us", kAtDev | kAtVm | kAtVmDev, "block_latency_seconds",
	 "Block request issue to completion (BPF block; _sum estimated from slot midpoints).", 1, 1, kBlockSeconds,
	 false, VmExport::Detail},
	{kIoQueueUs, Kind::Histogram, "us", kAtDev, "block_queue_seconds",
	 "Block request insert to issue, time queued (BPF block; _sum estimated from slot midpoints).", 1, 1,
	 kQueueSeconds},
	{kIoSizeKib, Kind::Histogram, "KiB", kAtDev, "block_request_size_bytes",
	 "Issued block request size (BPF block; _sum estimated from slot midpoints).", 1, 1, kSizeBytes},
	{kIoSeekSlots, Kind::Histogram, "sectors", kAtDev, "block_seek_distance_bytes",
	 "Gap from the nearest of the disk's 4 stream heads (recent request ends), 512 B sectors (BPF block; "
	 "_sum estimated from slot midpoints).",
	 1, 1, kSeekBytes},
	{kVhostDepth, Kind::Histogram, "descriptors", kAtQueues, "vhost_queue_depth",
	 "TX: packets the guest made available and vhost has not yet taken, sampled at each handle_tx "
	 "(BPF vhost; _sum estimated from slot midpoints).",
	 1, 1, kExactDepth, false, VmExport::Detail},
	{kVhostRxBuffers, Kind::Histogram, "buffers", kAtQueues, "vhost_rx_buffers",
	 "RX: receive buffers the guest had posted, sampled at each handle_rx; low is trouble "
	 "(BPF vhost; _sum estimated from slot midpoints).",
	 1, 1, kExactDepth, false, VmExport::Detail},
	// Read by vhost.rx_empty_ratio; Prometheus has them as hwsig_vhost_rx_buffers' first bucket and count.
	{kVhostRxEmpty, Kind::Counter, "samples", kAtQueues, nullptr, nullptr},
	{kVhostRxSamples, Kind::Counter, "samples", kAtQueues, nullptr, nullptr},
	{kVhostStalls, Kind::Counter, "stalls", kAtQueues, "vhost_ring_stalls_total",
	 "handle_rx invocations that found no guest receive buffer (BPF vhost).", 1, 1, {}, false,
	 VmExport::Detail},
};

// The row of a series, nullptr if it has none.
constexpr const Def *find(std::string_view name)
{
	for (const Def &d : kRegistry)
		if (name == d.name)
			return &d;
	return nullptr;
}

} // namespace hwsig::series

// The catalog's metric ids (Documentation/metrics.rst); catalog.cpp gives
// each its rule. (metric_id, not metric: code that uses namespace hwsig has
// functions named metric().)
namespace hwsig::metric_id {

inline constexpr const char *kCpuIpc = "cpu.ipc";
inline constexpr const char *kCpuStallRatio = "cpu.stall_ratio";
inline constexpr const char *kCpuL1dMpki = "cpu.l1d_mpki";
inline constexpr const char *kCpuL2Mpki = "cpu.l2_mpki";
inline constexpr const char *kCpuLlcMpki = "cpu.llc_mpki";
inline constexpr const char *kCpuLlcMissRatio = "cpu.llc_miss_ratio";
inline constexpr const char *kCpuBranchMissRatio = "cpu.branch_miss_ratio";
inline constexpr const char *kCpuDtlbMpki = "cpu.dtlb_mpki";
inline constexpr const char *kCpuItlbMpki = "cpu.itlb_mpki";

inline constexpr const char *kMemImcReadBps = "mem.imc_read_bps";
inline constexpr const char *kMemImcWriteBps = "mem.imc_write_bps";
inline constexpr const char *kMemImcBps = "mem.imc_bps";
inline constexpr const char *kMemLlcMissBps = "mem.llc_miss_bps";
inline constexpr const char *kMemNumaRemoteRatio = "mem.numa_remote_ratio";
inline constexpr const char *kMemNumaFallbackRatio = "mem.numa_fallback_ratio";
inline constexpr const char *kMemPageMigrationsPs = "mem.page_migrations_ps";
inline constexpr const char *kMemNumaPagesMigratedPs = "mem.numa_pages_migrated_ps";
inline constexpr const char *kMemHugepageUtilization = "mem.hugepage_utilization";
inline constexpr const char *kMemThpAnonBytes = "mem.thp_anon_bytes";
inline constexpr const char *kMemAvailableBytes = "mem.available_bytes";
inline constexpr const char *kMemThpFallbackRatio = "mem.thp_fallback_ratio";
inline constexpr const char *kMemLlcOccupancyBytes = "mem.llc_occupancy_bytes";
inline constexpr const char *kMemMbmTotalBps = "mem.mbm_total_bps";
inline constexpr const char *kMemMbmLocalBps = "mem.mbm_local_bps";

inline constexpr const char *kIoIopsRead = "io.iops_read";
inline constexpr const char *kIoIopsWrite = "io.iops_write";
inline constexpr const char *kIoReadBps = "io.read_bps";
inline constexpr const char *kIoWriteBps = "io.write_bps";
inline constexpr const char *kIoLatencyP50Us = "io.latency_p50_us";
inline constexpr const char *kIoLatencyP99Us = "io.latency_p99_us";
inline constexpr const char *kIoQueueP50Us = "io.queue_p50_us";
inline constexpr const char *kIoQueueP99Us = "io.queue_p99_us";
inline constexpr const char *kIoPatternEntropy = "io.pattern_entropy";

inline constexpr const char *kVhostQueueDepthP50 = "vhost.queue_depth_p50";
inline constexpr const char *kVhostQueueDepthP99 = "vhost.queue_depth_p99";
inline constexpr const char *kVhostRxBuffersP1 = "vhost.rx_buffers_p1";
inline constexpr const char *kVhostRxBuffersP50 = "vhost.rx_buffers_p50";
inline constexpr const char *kVhostRxEmptyRatio = "vhost.rx_empty_ratio";
inline constexpr const char *kVhostRingStallsPs = "vhost.ring_stalls_ps";

inline constexpr const char *kSchedRunqWaitP50Us = "sched.runq_wait_p50_us";
inline constexpr const char *kSchedRunqWaitP99Us = "sched.runq_wait_p99_us";
inline constexpr const char *kSchedRunqWaitAvgUs = "sched.runq_wait_avg_us";
inline constexpr const char *kSchedVcpuWaitRatio = "sched.vcpu_wait_ratio";
inline constexpr const char *kSchedVcpuCpus = "sched.vcpu_cpus";
inline constexpr const char *kSchedWaitBehindRatio = "sched.wait_behind_ratio";
inline constexpr const char *kSchedPreemptedByPs = "sched.preempted_by_ps";
inline constexpr const char *kSchedCpuBusyRatio = "sched.cpu_busy_ratio";
inline constexpr const char *kSchedStealRatio = "sched.steal_ratio";
inline constexpr const char *kSchedInvoluntaryCtxswPs = "sched.involuntary_ctxsw_ps";

inline constexpr const char *kThermalHeadroomC = "thermal.headroom_c";

inline constexpr const char *kPsiCpuSomePct = "psi.cpu_some_pct";
inline constexpr const char *kPsiMemorySomePct = "psi.memory_some_pct";
inline constexpr const char *kPsiMemoryFullPct = "psi.memory_full_pct";
inline constexpr const char *kPsiIoSomePct = "psi.io_some_pct";
inline constexpr const char *kPsiIoFullPct = "psi.io_full_pct";

} // namespace hwsig::metric_id
