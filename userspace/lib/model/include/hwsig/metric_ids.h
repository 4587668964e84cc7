// The catalog's metric ids (Documentation/metrics.rst), named once: the
// catalog defines them and verdicts, renderers and sources refer
// to them by these names, so a misspelt id fails to compile instead of
// finding nothing. (metric_id, not metric: code that uses namespace hwsig
// has functions named metric().)
#pragma once

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
