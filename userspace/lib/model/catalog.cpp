// The metric catalog: the brief's metrics plus a few documented extensions.
// Order here is the order of output. Each id is named in metric_ids.h; each
// rule names the registry series it reads (series.h): that is also what says
// which source feeds a metric (metrics_reading). Documentation/metrics.rst
// defines every entry; test_catalog_doc.cpp keeps the two in step.
#include "hwsig/catalog.h"

#include "hwsig/series.h"

namespace hwsig {

namespace s = series;
using K = Rule::Kind;

std::string_view layer_name(Layer l)
{
	switch (l) {
	case Layer::Cpu: return "CPU";
	case Layer::Memory: return "Memory/NUMA";
	case Layer::Io: return "I/O";
	case Layer::Vhost: return "vhost/virtio";
	case Layer::Sched: return "Scheduler";
	case Layer::Thermal: return "Thermal";
	case Layer::Pressure: return "Pressure";
	}
	return "?";
}

static MetricDef ratio(const char *id, const char *unit, Layer layer, const char *source,
		       const char *desc, std::vector<std::string> num,
		       std::vector<std::string> den, double scale = 1.0)
{
	return {id, unit, layer, source, desc, {K::Ratio, std::move(num), std::move(den), scale, 0}};
}

static MetricDef rate(const char *id, const char *unit, Layer layer, const char *source,
		      const char *desc, std::vector<std::string> num, double scale = 1.0)
{
	return {id, unit, layer, source, desc, {K::Rate, std::move(num), {}, scale, 0}};
}

static MetricDef gauge(const char *id, const char *unit, Layer layer, const char *source,
		       const char *desc, const char *name)
{
	return {id, unit, layer, source, desc, {K::Gauge, {name}, {}, 1.0, 0}};
}

static MetricDef pct(const char *id, const char *unit, Layer layer, const char *source,
		     const char *desc, const char *hist, double q)
{
	return {id, unit, layer, source, desc, {K::Percentile, {hist}, {}, 1.0, q}};
}

static std::vector<MetricDef> build_catalog()
{
	const auto cpu = Layer::Cpu, mem = Layer::Memory, io = Layer::Io, vh = Layer::Vhost,
		   sch = Layer::Sched, th = Layer::Thermal, ps = Layer::Pressure;
	std::vector<MetricDef> c;
	// CPU: core PMU
	c.push_back(ratio(metric_id::kCpuIpc, "insn/cycle", cpu, "PMU", "instructions / cycles",
			  {s::kPmuInstructions}, {s::kPmuCycles}));
	c.push_back(ratio(metric_id::kCpuStallRatio, "ratio", cpu, "PMU",
			  "stalled cycles / cycles: cycles retiring no op (Intel and AMD alike, Documentation/pmu.rst)",
			  {s::kPmuStallCycles}, {s::kPmuCycles}));
	c.push_back(ratio(metric_id::kCpuL1dMpki, "MPKI", cpu, "PMU", "L1D misses per 1000 instructions",
			  {s::kPmuL1dMisses}, {s::kPmuInstructions}, 1000));
	c.push_back(ratio(metric_id::kCpuL2Mpki, "MPKI", cpu, "PMU", "L2 misses per 1000 instructions",
			  {s::kPmuL2Misses}, {s::kPmuInstructions}, 1000));
	c.push_back(ratio(metric_id::kCpuLlcMpki, "MPKI", cpu, "PMU", "LLC misses per 1000 instructions",
			  {s::kPmuLlcMisses}, {s::kPmuInstructions}, 1000));
	c.push_back(ratio(metric_id::kCpuLlcMissRatio, "ratio", cpu, "PMU", "LLC misses / LLC references",
			  {s::kPmuLlcMisses}, {s::kPmuLlcReferences}));
	c.push_back(ratio(metric_id::kCpuBranchMissRatio, "ratio", cpu, "PMU", "branch misses / branches",
			  {s::kPmuBranchMisses}, {s::kPmuBranches}));
	c.push_back(ratio(metric_id::kCpuDtlbMpki, "MPKI", cpu, "PMU", "data TLB walks per 1000 instructions",
			  {s::kPmuDtlbMisses}, {s::kPmuInstructions}, 1000));
	c.push_back(ratio(metric_id::kCpuItlbMpki, "MPKI", cpu, "PMU",
			  "instruction TLB walks per 1000 instructions",
			  {s::kPmuItlbMisses}, {s::kPmuInstructions}, 1000));
	// Memory / NUMA
	c.push_back(rate(metric_id::kMemImcReadBps, "B/s", mem, "uncore PMU", "DRAM read bytes/s (CAS x 64 B)",
			 {s::kImcCasReads}, 64));
	c.push_back(rate(metric_id::kMemImcWriteBps, "B/s", mem, "uncore PMU",
			 "DRAM write bytes/s (CAS x 64 B)", {s::kImcCasWrites}, 64));
	c.push_back(rate(metric_id::kMemImcBps, "B/s", mem, "uncore PMU",
			 "DRAM read+write bytes/s where reads and writes are not counted apart (CAS x 64 B)",
			 {s::kImcCasReadWrite}, 64));
	c.push_back(rate(metric_id::kMemLlcMissBps, "B/s", mem, "PMU",
			 "LLC misses x 64 B per second: an estimate of the memory traffic of demand misses, per "
			 "VM on its vCPU threads (prefetches and write-backs not counted: below the IMC's bytes)",
			 {s::kPmuLlcMisses}, 64));
	c.push_back(ratio(metric_id::kMemNumaRemoteRatio, "ratio", mem, "numastat",
			  "remote / (local + remote) page allocations in the interval",
			  {s::kNumaOther}, {s::kNumaLocal, s::kNumaOther}));
	c.push_back(ratio(metric_id::kMemNumaFallbackRatio, "ratio", mem, "numastat",
			  "share of the allocations that preferred a node served by another node "
			  "(numa_foreign / (numa_hit + numa_foreign)), by preferred node",
			  {s::kNumaForeign}, {s::kNumaHit, s::kNumaForeign}));
	c.push_back(rate(metric_id::kMemPageMigrationsPs, "pages/s", mem, "/proc/vmstat",
			 "pages migrated per second (pgmigrate_success)", {s::kPgmigrateSuccess}));
	c.push_back(rate(metric_id::kMemNumaPagesMigratedPs, "pages/s", mem, "/proc/vmstat",
			 "pages migrated by NUMA balancing per second (numa_pages_migrated)",
			 {s::kNumaPagesMigrated}, 1.0));
	c.push_back(gauge(metric_id::kMemHugepageUtilization, "ratio", mem, "sysfs hugepages",
			  "HugeTLB pages in use / total, per page size", s::kHugepageUtilization));
	c.push_back(gauge(metric_id::kMemThpAnonBytes, "B", mem, "/proc/meminfo",
			  "anonymous memory backed by transparent huge pages", s::kThpAnonBytes));
	c.push_back(gauge(metric_id::kMemAvailableBytes, "B", mem, "/proc/meminfo",
			  "memory available for new work without swapping (the kernel's estimate)",
			  s::kMemAvailableBytes));
	c.push_back(ratio(metric_id::kMemThpFallbackRatio, "ratio", mem, "/proc/vmstat",
			  "THP faults that fell back to small pages / all THP fault attempts",
			  {s::kThpFaultFallback}, {s::kThpFaultAlloc, s::kThpFaultFallback}));
	// resctrl monitoring (opt-in, Documentation/resctrl.rst)
	c.push_back(gauge(metric_id::kMemLlcOccupancyBytes, "B", mem, "resctrl",
			  "last-level cache held by a VM's threads (its monitoring group), or by the default "
			  "group at system", s::kResctrlLlcOccupancy));
	c.push_back(rate(metric_id::kMemMbmTotalBps, "B/s", mem, "resctrl",
			 "memory bandwidth of a VM's threads, local and remote node (MBM total bytes/s)",
			 {s::kResctrlMbmTotalBytes}, 1.0));
	c.push_back(rate(metric_id::kMemMbmLocalBps, "B/s", mem, "resctrl",
			 "memory bandwidth of a VM's threads to their own node's memory (MBM local bytes/s)",
			 {s::kResctrlMbmLocalBytes}, 1.0));
	// I/O: BPF block
	c.push_back(rate(metric_id::kIoIopsRead, "req/s", io, "BPF block", "completed read requests/s",
			 {s::kIoReads}));
	c.push_back(rate(metric_id::kIoIopsWrite, "req/s", io, "BPF block", "completed write requests/s",
			 {s::kIoWrites}));
	c.push_back(rate(metric_id::kIoReadBps, "B/s", io, "BPF block", "bytes of completed reads/s",
			 {s::kIoReadBytes}, 1.0));
	c.push_back(rate(metric_id::kIoWriteBps, "B/s", io, "BPF block", "bytes of completed writes/s",
			 {s::kIoWriteBytes}, 1.0));
	c.push_back(pct(metric_id::kIoLatencyP50Us, "us", io, "BPF block", "issue -> complete, median",
			s::kIoLatencyUs, 0.50));
	c.push_back(pct(metric_id::kIoLatencyP99Us, "us", io, "BPF block", "issue -> complete, 99th percentile",
			s::kIoLatencyUs, 0.99));
	c.push_back(pct(metric_id::kIoQueueP50Us, "us", io, "BPF block", "allocation -> issue (queue time), median",
			s::kIoQueueUs, 0.50));
	c.push_back(pct(metric_id::kIoQueueP99Us, "us", io, "BPF block",
			"allocation -> issue (queue time), 99th percentile", s::kIoQueueUs, 0.99));
	c.push_back({metric_id::kIoPatternEntropy, "0..1", io, "BPF block",
		     "normalized entropy of log2 seek distances: sequential ~0, random ~1",
		     {K::Entropy, {s::kIoSeekSlots}, {}, 1.0, 0}});
	// vhost (Documentation/vhost.rst). A TX queue's depth is work waiting
	// (high is trouble); an RX queue's is the guest's free receive
	// buffers (low is trouble): apart, each with the end that signals.
	c.push_back(pct(metric_id::kVhostQueueDepthP50, "descriptors", vh, "BPF vhost",
			"TX: packets queued by the guest (avail - last_avail) when the worker handles the queue, median",
			s::kVhostDepth, 0.50));
	c.push_back(pct(metric_id::kVhostQueueDepthP99, "descriptors", vh, "BPF vhost",
			"TX: packets queued by the guest when the worker handles the queue, 99th percentile",
			s::kVhostDepth, 0.99));
	c.push_back(pct(metric_id::kVhostRxBuffersP1, "buffers", vh, "BPF vhost",
			"RX: receive buffers the guest had posted when the worker handled the queue, 1st "
			"percentile (the low end: near 0, packets wait for the guest)",
			s::kVhostRxBuffers, 0.01));
	c.push_back(pct(metric_id::kVhostRxBuffersP50, "buffers", vh, "BPF vhost",
			"RX: receive buffers the guest had posted when the worker handled the queue, median",
			s::kVhostRxBuffers, 0.50));
	c.push_back(ratio(metric_id::kVhostRxEmptyRatio, "ratio", vh, "BPF vhost",
			  "RX: share of handle_rx runs that found no receive buffer posted",
			  {s::kVhostRxEmpty}, {s::kVhostRxSamples}));
	c.push_back(rate(metric_id::kVhostRingStallsPs, "stalls/s", vh, "BPF vhost",
			 "RX: handle_rx runs that had a packet pending but no guest buffer for it, per second",
			 {s::kVhostStalls}));
	// Scheduler
	c.push_back(pct(metric_id::kSchedRunqWaitP50Us, "us", sch, "BPF sched",
			"wakeup or preemption -> running, median", s::kRunqWaitUs, 0.50));
	c.push_back(pct(metric_id::kSchedRunqWaitP99Us, "us", sch, "BPF sched",
			"wakeup or preemption -> running, 99th percentile", s::kRunqWaitUs, 0.99));
	c.push_back(ratio(metric_id::kSchedRunqWaitAvgUs, "us", sch, "schedstat",
			  "procfs estimate: run-queue wait per timeslice (run_delay / pcount)",
			  {s::kSchedstatRunDelayNs}, {s::kSchedstatTimeslices}, 1e-3));
	c.push_back(rate(metric_id::kSchedVcpuWaitRatio, "ratio", sch, "schedstat",
			 "share of the time a vCPU thread was runnable but not running (run_delay / wall time; "
			 "per VM: the mean of its vCPUs)",
			 {s::kVcpuRunDelayNs}, 1e-9));
	c.push_back(rate(metric_id::kSchedVcpuCpus, "CPUs", sch, "schedstat",
			 "CPUs a VM's vCPU threads kept busy (time on a CPU / wall time; per vCPU: its share of one CPU)",
			 {s::kVcpuRunNs}, 1e-9));
	c.push_back(rate(metric_id::kSchedWaitBehindRatio, "s/s", sch, "BPF sched",
			 "run-queue wait of a VM's threads blamed on what last held the CPU before they got it "
			 "(another VM, host work, idle), seconds per second (vm:NAME/culprit:WHO)",
			 {s::kVmWaitBehindNs}, 1e-9));
	c.push_back(rate(metric_id::kSchedPreemptedByPs, "switches/s", sch, "BPF sched",
			 "a VM's threads switched out while runnable, by what took the CPU (vm:NAME/culprit:WHO)",
			 {s::kVmPreemptedBy}));
	c.push_back(ratio(metric_id::kSchedCpuBusyRatio, "ratio", sch, "/proc/stat",
			  "share of CPU time not idle (idle and iowait excluded); system: of all CPUs",
			  {s::kCpuBusyTicks}, {s::kCpuTotalTicks}));
	c.push_back(ratio(metric_id::kSchedStealRatio, "ratio", sch, "/proc/stat", "steal / total CPU time",
			  {s::kCpuStealTicks}, {s::kCpuTotalTicks}));
	c.push_back(rate(metric_id::kSchedInvoluntaryCtxswPs, "switches/s", sch, "BPF sched",
			 "preemptions/s (switched out while still runnable)", {s::kInvoluntarySwitches}));
	// Thermal
	c.push_back(gauge(metric_id::kThermalHeadroomC, "degC", th, "sysfs thermal/hwmon",
			  "throttle point - temperature; system = minimum over the host",
			  s::kThermalHeadroom));
	// Pressure
	// The share of the interval stalled: Δtotal (us) / Δt (s) / 1e6 * 100.
	constexpr double kUsPerSecondToPct = 1e-4;
	c.push_back(rate(metric_id::kPsiCpuSomePct, "%", ps, "/proc/pressure",
			 "CPU pressure, some: share of the interval some task waited for a CPU",
			 {s::kPsiCpuSomeUs}, kUsPerSecondToPct));
	c.push_back(rate(metric_id::kPsiMemorySomePct, "%", ps, "/proc/pressure",
			 "memory pressure, some: share of the interval some task stalled on memory",
			 {s::kPsiMemorySomeUs}, kUsPerSecondToPct));
	c.push_back(rate(metric_id::kPsiMemoryFullPct, "%", ps, "/proc/pressure",
			 "memory pressure, full: share of the interval all non-idle tasks stalled on memory",
			 {s::kPsiMemoryFullUs}, kUsPerSecondToPct));
	c.push_back(rate(metric_id::kPsiIoSomePct, "%", ps, "/proc/pressure",
			 "I/O pressure, some: share of the interval some task stalled on I/O", {s::kPsiIoSomeUs},
			 kUsPerSecondToPct));
	c.push_back(rate(metric_id::kPsiIoFullPct, "%", ps, "/proc/pressure",
			 "I/O pressure, full: share of the interval all non-idle tasks stalled on I/O",
			 {s::kPsiIoFullUs}, kUsPerSecondToPct));
	return c;
}

const std::vector<MetricDef> &catalog()
{
	static const std::vector<MetricDef> c = build_catalog();
	return c;
}

std::vector<std::string> metrics_reading(const std::vector<std::string_view> &series)
{
	auto wanted = [&](const std::string &name) {
		for (std::string_view s : series)
			if (s == name)
				return true;
		return false;
	};
	std::vector<std::string> ids;
	for (const MetricDef &m : catalog()) {
		bool reads = false;
		for (const auto &name : m.rule.num)
			reads = reads || wanted(name);
		for (const auto &name : m.rule.den)
			reads = reads || wanted(name);
		if (reads)
			ids.push_back(m.id);
	}
	return ids;
}

} // namespace hwsig
