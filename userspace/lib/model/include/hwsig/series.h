// Names of the raw series sources put into a Snapshot and the catalog's rules
// read. A source and the catalog must agree on these, so they live here once.
#pragma once

#include <string_view>

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
// A vCPU thread's run_delay (scope vm:NAME/vcpu:N); at vm:NAME the mean over
// the VM's vCPU threads (left out of a snapshot whose vCPU set changed).
inline constexpr const char *kVcpuRunDelayNs = "vcpu.run_delay_ns";
// A vCPU thread's time on a CPU (schedstat's first field; scope
// vm:NAME/vcpu:N); at vm:NAME the sum over its vCPU threads (left out as
// above).
inline constexpr const char *kVcpuRunNs = "vcpu.run_ns";

// Core PMU counts, scaled for multiplexing per interval (multiplex.h); the
// points carry the raw count and times too (Multiplexing).
// Scopes: cpu:N, system, (vm:NAME when counted per VM).
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
// of vm:NAME, host:kernel, host:vhost, host:other, idle (culprit_scope()).
inline constexpr const char *kVmWaitBehindNs = "bpf.vm_wait_behind_ns"; // waits ended after WHO ran
inline constexpr const char *kVmPreemptedBy = "bpf.vm_preempted_by";     // preemptions with WHO next
inline constexpr std::string_view kCulpritSep = "/culprit:";

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

} // namespace hwsig::series
