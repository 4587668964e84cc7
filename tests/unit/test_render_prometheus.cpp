// The Prometheus / OpenMetrics exposition (render_prometheus.h): exact lines
// for hand-built snapshots, and the size of a 256-CPU host's exposition.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "fixture_exposition.h"
#include "hwsig/derive.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/sampler.h"
#include "hwsig/series.h"

using namespace hwsig;

namespace {

std::vector<std::string> lines_of(const std::string &text)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);)
		out.push_back(l);
	return out;
}

bool has_line(const std::string &text, const std::string &line)
{
	for (const auto &l : lines_of(text))
		if (l == line)
			return true;
	return false;
}

// Lines starting with prefix, in order.
std::vector<std::string> grep(const std::string &text, const std::string &prefix)
{
	std::vector<std::string> out;
	for (const auto &l : lines_of(text))
		if (l.rfind(prefix, 0) == 0)
			out.push_back(l);
	return out;
}

double value_of(const std::string &text, const std::string &series)
{
	for (const auto &l : lines_of(text))
		if (l.rfind(series + " ", 0) == 0)
			return std::strtod(l.c_str() + series.size() + 1, nullptr);
	FAIL("no sample " << series);
	return 0;
}

// A family's expected samples: the lines starting with prefix, in order.
struct Samples {
	std::string prefix;
	std::vector<std::string> lines;
};

void check_samples(const std::string &text, const std::vector<Samples> &rows)
{
	for (const auto &row : rows) {
		INFO(row.prefix);
		CHECK(grep(text, row.prefix) == row.lines);
	}
}

void check_has_lines(const std::string &text, const std::vector<std::string> &lines)
{
	for (const auto &line : lines) {
		INFO(line);
		CHECK(has_line(text, line));
	}
}

std::string render(const Snapshot &snap, ExportSwitches sw, const std::vector<Vm> *vms = nullptr,
		   ExpositionFormat fmt = ExpositionFormat::Prometheus004)
{
	ExportInput in;
	in.snapshot = &snap;
	in.switches = sw;
	in.vms = vms;
	in.version = "1.2.3";
	return render_prometheus(in, fmt);
}

std::string render(const Snapshot &snap, bool per_cpu = false, const std::vector<Vm> *vms = nullptr,
		   ExpositionFormat fmt = ExpositionFormat::Prometheus004)
{
	ExportSwitches sw;
	sw.per_cpu = per_cpu;
	return render(snap, sw, vms, fmt);
}

// Every bucket of per-VM and per-device histograms (text-buckets = full).
ExportSwitches full_buckets()
{
	ExportSwitches sw;
	sw.full_text_buckets = true;
	return sw;
}

// Structural rules every exposition keeps: each sample's family has HELP
// and TYPE before it, families are contiguous, no series twice.
void check_structure(const std::string &text)
{
	std::set<std::string> helped, typed, seen_series, closed;
	std::string current;
	for (const auto &l : lines_of(text)) {
		if (l.rfind("# HELP ", 0) == 0) {
			std::string name = l.substr(7, l.find(' ', 7) - 7);
			INFO(l);
			CHECK(helped.insert(name).second);
			CHECK(closed.count(name) == 0);
			if (!current.empty())
				closed.insert(current);
			current = name;
			continue;
		}
		if (l.rfind("# TYPE ", 0) == 0) {
			std::string name = l.substr(7, l.find(' ', 7) - 7);
			INFO(l);
			CHECK(name == current);
			CHECK(typed.insert(name).second);
			continue;
		}
		if (l.empty() || l[0] == '#')
			continue;
		std::string series = l.substr(0, l.rfind(' '));
		INFO(l);
		CHECK(seen_series.insert(series).second);
		std::string metric = series.substr(0, series.find('{'));
		CHECK(metric.rfind(current, 0) == 0);
	}
}

} // namespace

TEST_CASE("prometheus: counters in base units, breakdown instead of aggregate", "[render_prometheus]")
{
	Snapshot s;
	s.add_counter(series::kCpuStealTicks, "system", 2210, "procfs");
	s.add_counter(series::kCpuStealTicks, "cpu:0", 1000, "procfs");
	s.add_counter(series::kCpuStealTicks, "cpu:1", 1210, "procfs");
	s.add_counter(series::kCpuTotalTicks, "system", 100000, "procfs");
	s.add_counter(series::kSchedstatRunDelayNs, "system", 1.5e9, "procfs");
	s.add_counter(series::kSchedstatRunDelayNs, "vm:web01", 2.5e8, "procfs");
	s.add_counter(series::kVcpuRunDelayNs, "vm:web01/vcpu:0", 1e8, "procfs");
	s.add_counter(series::kVcpuRunDelayNs, "vm:web01/vcpu:1", 1.5e8, "procfs");
	s.add_counter(series::kVcpuRunDelayNs, "vm:web01", 1.25e8, "procfs"); // the mean: not exported
	// Multiplexed: counted half and a quarter of the time.
	s.add_counter(series::kImcCasReads, "socket:0", CounterPoint{200, {100, 2e9, 1e9, 0}}, "perf");
	s.add_counter(series::kImcCasReads, "socket:1", CounterPoint{200, {50, 4e9, 1e9, 0}}, "perf");
	s.add_counter(series::kImcCasReads, "system", CounterPoint{400, {150, 6e9, 2e9, 0}}, "perf");
	s.add_counter(series::kNumaLocal, "node:0", 7, "sysfs");
	s.add_counter(series::kNumaLocal, "system", 7, "sysfs");
	s.add_counter(series::kIoReads, "dev:sda", 42, "bpf");
	s.add_counter(series::kIoReadBytes, "dev:sda", 42 * 4096, "bpf");
	s.add_counter(series::kInvoluntarySwitches, "system", 9, "bpf");
	s.add_counter(series::kInvoluntarySwitches, "cpu:3", 9, "bpf");
	s.add_counter(series::kInvoluntarySwitches, "pid:1234", 5, "bpf");
	s.add_counter(series::kVmWaitBehindNs, "vm:web01/culprit:vm:batch7", 2.5e9, "bpf");
	s.add_counter(series::kVmWaitBehindNs, "vm:web01/culprit:host:kernel", 1e6, "bpf");
	s.add_counter(series::kVmPreemptedBy, "vm:web01/culprit:vm:batch7", 40, "bpf");
	s.add_counter(series::kIoReads, "vm:web01", 30, "bpf");
	s.add_counter(series::kIoReads, "vm:web01/dev:sda", 30, "bpf");

	SECTION("per_cpu off: system, no cpu label")
	{
		std::string t = render(s);
		check_structure(t);
		check_has_lines(t, {"# HELP hwsig_cpu_steal_seconds_total CPU time stolen by the hypervisor "
				    "(/proc/stat steal, USER_HZ ticks / 100).",
				    "# TYPE hwsig_cpu_steal_seconds_total counter",
				    "hwsig_schedstat_run_delay_seconds_total 1.5",
				    "# TYPE hwsig_pmu_enabled_seconds_total counter",
				    "hwsig_block_reads_total{device=\"sda\"} 42",
				    "hwsig_block_read_bytes_total{device=\"sda\"} 172032"});
		check_samples(
			t,
			{
				{"hwsig_cpu_steal_seconds_total", {"hwsig_cpu_steal_seconds_total 22.1"}},
				{"hwsig_cpu_time_seconds_total", {"hwsig_cpu_time_seconds_total 1000"}},
				// vm:NAME: the hwsig_vm_* family, never next to the host sample.
				{"hwsig_vm_schedstat_run_delay_seconds_total",
				 {"hwsig_vm_schedstat_run_delay_seconds_total{vm=\"web01\"} 0.25"}},
				{"hwsig_schedstat_run_delay_seconds_total{", {}},
				// vm:NAME/vcpu:N only with per-vcpu; the VM's mean never.
				{"hwsig_vm_vcpu_run_delay_seconds_total", {}},
				{"hwsig_vcpu_run_delay_seconds_total", {}},
				// vm:NAME/culprit:WHO: by class, every class, seconds;
				// the other VMs by name.
				{"hwsig_vm_wait_behind_seconds_total",
				 {"hwsig_vm_wait_behind_seconds_total{vm=\"web01\",culprit=\"host:kernel\"} 0.001",
				  "hwsig_vm_wait_behind_seconds_total{vm=\"web01\",culprit=\"host:other\"} 0",
				  "hwsig_vm_wait_behind_seconds_total{vm=\"web01\",culprit=\"host:vhost\"} 0",
				  "hwsig_vm_wait_behind_seconds_total{vm=\"web01\",culprit=\"idle\"} 0",
				  "hwsig_vm_wait_behind_seconds_total{vm=\"web01\",culprit=\"other_vm\"} 2.5",
				  "hwsig_vm_wait_behind_seconds_total{vm=\"web01\",culprit=\"self\"} 0"}},
				{"hwsig_vm_wait_behind_vm_seconds_total",
				 {"hwsig_vm_wait_behind_vm_seconds_total{vm=\"web01\",culprit_vm=\"batch7\"} 2.5"}},
				// Preemptions by culprit only with vm-detail.
				{"hwsig_vm_preempted_by_total", {}},
				{"hwsig_wait_behind_seconds_total", {}},
				// CAS as counted x 64 B, per socket only (system is their sum),
				// with the times that scale any window of them in PromQL.
				{"hwsig_dram_read_bytes_total",
				 {"hwsig_dram_read_bytes_total{socket=\"0\"} 6400",
				  "hwsig_dram_read_bytes_total{socket=\"1\"} 3200"}},
				{"hwsig_pmu_enabled_seconds_total{",
				 {"hwsig_pmu_enabled_seconds_total{counter=\"hwsig_dram_read_bytes_total\",socket=\"0\"} 2",
				  "hwsig_pmu_enabled_seconds_total{counter=\"hwsig_dram_read_bytes_total\",socket=\"1\"} 4"}},
				{"hwsig_pmu_running_seconds_total{",
				 {"hwsig_pmu_running_seconds_total{counter=\"hwsig_dram_read_bytes_total\",socket=\"0\"} 1",
				  "hwsig_pmu_running_seconds_total{counter=\"hwsig_dram_read_bytes_total\",socket=\"1\"} 1"}},
				{"hwsig_numa_local_node_pages_total", {"hwsig_numa_local_node_pages_total{node=\"0\"} 7"}},
				// A VM's requests: per VM only, never its per-disk split.
				{"hwsig_vm_block_reads_total", {"hwsig_vm_block_reads_total{vm=\"web01\"} 30"}},
				{"hwsig_involuntary_switches_total", {"hwsig_involuntary_switches_total 9"}},
			});
		CHECK(t.find("hwsig_pmu_running_ratio") == std::string::npos);
		CHECK(t.find("1234") == std::string::npos); // pid:N never exported
		CHECK(t.find("{cpu=") == std::string::npos); // no cpu label (vcpu= is a VM's)
		CHECK(t.find(",cpu=") == std::string::npos);
		CHECK(has_line(t, "hwsig_build_info{version=\"1.2.3\"} 1"));
		CHECK(has_line(t, "# TYPE hwsig_build_info gauge"));
	}
	SECTION("per-vcpu and vm-detail: the vCPUs and the preemptions by class")
	{
		ExportSwitches sw;
		sw.per_vcpu = true;
		sw.vm_detail = true;
		std::string t = render(s, sw);
		check_structure(t);
		check_samples(
			t,
			{
				{"hwsig_vm_vcpu_run_delay_seconds_total",
				 {"hwsig_vm_vcpu_run_delay_seconds_total{vm=\"web01\",vcpu=\"0\"} 0.1",
				  "hwsig_vm_vcpu_run_delay_seconds_total{vm=\"web01\",vcpu=\"1\"} 0.15"}},
				{"hwsig_vm_preempted_by_total",
				 {"hwsig_vm_preempted_by_total{vm=\"web01\",culprit=\"host:kernel\"} 0",
				  "hwsig_vm_preempted_by_total{vm=\"web01\",culprit=\"host:other\"} 0",
				  "hwsig_vm_preempted_by_total{vm=\"web01\",culprit=\"host:vhost\"} 0",
				  "hwsig_vm_preempted_by_total{vm=\"web01\",culprit=\"other_vm\"} 40",
				  "hwsig_vm_preempted_by_total{vm=\"web01\",culprit=\"self\"} 0"}},
				// The named preemptions only with culprit-matrix.
				{"hwsig_vm_preempted_by_vm_total", {}},
			});
	}
	SECTION("culprit-matrix: every pair by name")
	{
		ExportSwitches sw;
		sw.culprit_matrix = true;
		std::string t = render(s, sw);
		check_samples(t, {{"hwsig_vm_preempted_by_vm_total",
				   {"hwsig_vm_preempted_by_vm_total{vm=\"web01\",culprit_vm=\"batch7\"} 40"}}});
	}
	SECTION("per_cpu on: the CPUs, no unlabelled aggregate")
	{
		std::string t = render(s, true);
		check_structure(t);
		check_samples(t, {
					 {"hwsig_cpu_steal_seconds_total",
					  {"hwsig_cpu_steal_seconds_total{cpu=\"0\"} 10",
					   "hwsig_cpu_steal_seconds_total{cpu=\"1\"} 12.1"}},
					 // A series without cpu:N scopes keeps its system sample.
					 {"hwsig_cpu_time_seconds_total", {"hwsig_cpu_time_seconds_total 1000"}},
					 {"hwsig_involuntary_switches_total", {"hwsig_involuntary_switches_total{cpu=\"3\"} 9"}},
				 });
	}
}

TEST_CASE("prometheus: gauges", "[render_prometheus]")
{
	Snapshot s;
	s.add_gauge(series::kPsiCpuSome, "system", 12.5, "procfs");
	s.add_gauge(series::kPsiIoFull, "system", 22.1, "procfs");
	s.add_gauge(series::kThpAnonBytes, "system", 4194304, "procfs");
	s.add_gauge(series::kThermalHeadroom, "zone:acpitz.0", 40.5, "sysfs");
	s.add_gauge(series::kThermalHeadroom, "zone:coretemp.0/Core_1", 12, "sysfs");
	s.add_gauge(series::kThermalHeadroom, "system", 12, "sysfs");
	s.add_gauge(series::kHugepageUtilization, "hugepages:2048kB", 0.5, "sysfs");
	s.add_gauge(series::kHugepageUtilization, "node:1/hugepages:2048kB", 0.25, "sysfs");
	std::string t = render(s);
	check_structure(t);
	check_has_lines(t, {"hwsig_pressure_cpu_some_avg10_ratio 0.125", "hwsig_pressure_io_full_avg10_ratio 0.221",
			    "hwsig_thp_anon_bytes 4194304", "# TYPE hwsig_thermal_headroom_celsius gauge"});
	check_samples(t, {
				 {"hwsig_thermal_headroom_celsius",
				  {"hwsig_thermal_headroom_celsius{zone=\"acpitz.0\"} 40.5",
				   "hwsig_thermal_headroom_celsius{zone=\"coretemp.0/Core_1\"} 12"}},
				 {"hwsig_hugepage_utilization_ratio",
				  {"hwsig_hugepage_utilization_ratio{size=\"2048kB\"} 0.5"}},
				 {"hwsig_node_hugepage_utilization_ratio",
				  {"hwsig_node_hugepage_utilization_ratio{node=\"1\",size=\"2048kB\"} 0.25"}},
			 });
}

TEST_CASE("prometheus: log2 histograms as cumulative buckets in seconds", "[render_prometheus]")
{
	Snapshot s;
	Histogram h;
	h.layout = Histogram::Layout::Log2;
	h.counts = {3, 0, 2, 1}; // [0,2) [2,4) [4,8) us, last slot clamped: [8, inf)
	s.add_histogram(series::kRunqWaitUs, "system", h, "bpf");
	s.add_histogram(series::kRunqWaitUs, "cpu:0", h, "bpf");
	s.add_histogram(series::kRunqWaitUs, "vm:web01", h, "bpf");
	s.add_histogram(series::kIoLatencyUs, "dev:nvme0n1", h, "bpf");
	std::string t = render(s);
	check_structure(t);
	CHECK(has_line(t, "# TYPE hwsig_runq_wait_seconds histogram"));
	CHECK(grep(t, "hwsig_runq_wait_seconds") ==
	      std::vector<std::string>{
		      "hwsig_runq_wait_seconds_bucket{le=\"2e-06\"} 3",
		      "hwsig_runq_wait_seconds_bucket{le=\"4e-06\"} 3",
		      "hwsig_runq_wait_seconds_bucket{le=\"8e-06\"} 5",
		      "hwsig_runq_wait_seconds_bucket{le=\"+Inf\"} 6",
		      grep(t, "hwsig_runq_wait_seconds_sum")[0],
		      "hwsig_runq_wait_seconds_count 6",
	      });
	// _sum: midpoints 1, 3, 6 us; the open last slot at its lower bound 8 us:
	// 3*1 + 0*3 + 2*6 + 1*8 = 23 us.
	CHECK(value_of(t, "hwsig_runq_wait_seconds_sum") == Approx(23e-6).epsilon(1e-12));
	CHECK(value_of(t, "hwsig_vm_runq_wait_seconds_count{vm=\"web01\"}") == 6);
	// Per device, coarse buckets by default (the first at 256 us: beyond
	// these 4 slots, so only +Inf), every one with text-buckets = full.
	CHECK(grep(t, "hwsig_block_latency_seconds_bucket{device=\"nvme0n1\"").size() == 1);
	CHECK(has_line(t, "hwsig_block_latency_seconds_bucket{device=\"nvme0n1\",le=\"+Inf\"} 6"));
	CHECK(has_line(t, "hwsig_block_latency_seconds_count{device=\"nvme0n1\"} 6"));
	const std::string full = render(s, full_buckets());
	CHECK(has_line(full, "hwsig_block_latency_seconds_bucket{device=\"nvme0n1\",le=\"8e-06\"} 5"));

	std::string pc = render(s, true);
	CHECK(has_line(pc, "hwsig_runq_wait_seconds_bucket{cpu=\"0\",le=\"+Inf\"} 6"));
	CHECK(grep(pc, "hwsig_runq_wait_seconds_bucket{le=").empty());
}

TEST_CASE("prometheus: every series of a family has the same buckets, +Inf equals _count", "[render_prometheus]")
{
	Snapshot s;
	Histogram a, b;
	a.counts = {1, 2};
	b.counts = {0, 0, 0, 4, 1};
	s.add_histogram(series::kIoQueueUs, "dev:sda", a, "bpf");
	s.add_histogram(series::kIoQueueUs, "dev:sdb", b, "bpf");
	std::string t = render(s, full_buckets());
	check_structure(t);
	CHECK(grep(t, "hwsig_block_queue_seconds_bucket{device=\"sda\"") ==
	      std::vector<std::string>{
		      "hwsig_block_queue_seconds_bucket{device=\"sda\",le=\"2e-06\"} 1",
		      "hwsig_block_queue_seconds_bucket{device=\"sda\",le=\"4e-06\"} 3",
		      "hwsig_block_queue_seconds_bucket{device=\"sda\",le=\"8e-06\"} 3",
		      "hwsig_block_queue_seconds_bucket{device=\"sda\",le=\"1.6e-05\"} 3",
		      "hwsig_block_queue_seconds_bucket{device=\"sda\",le=\"+Inf\"} 3",
	      });
	CHECK(has_line(t, "hwsig_block_queue_seconds_bucket{device=\"sdb\",le=\"1.6e-05\"} 4"));
	CHECK(has_line(t, "hwsig_block_queue_seconds_bucket{device=\"sdb\",le=\"+Inf\"} 5"));
	CHECK(has_line(t, "hwsig_block_queue_seconds_count{device=\"sdb\"} 5"));
	// sdb: slot [8,16) us at its midpoint 12 x 4, the open last slot at its
	// lower bound 16 x 1: 64 us.
	CHECK(value_of(t, "hwsig_block_queue_seconds_sum{device=\"sdb\"}") == Approx(64e-6).epsilon(1e-12));
}

TEST_CASE("prometheus: integer-valued histograms use inclusive bucket bounds", "[render_prometheus]")
{
	Snapshot s;
	Histogram size;
	size.counts = {1, 1, 0, 5}; // KiB: [0,2) [2,4) [4,8) [8,inf)
	s.add_histogram(series::kIoSizeKib, "dev:sda", size, "bpf");
	Histogram seek;
	seek.counts = {10, 0, 3}; // sectors: 0..1, 2..3, >= 4
	s.add_histogram(series::kIoSeekSlots, "dev:sda", seek, "bpf");
	std::string t = render(s, full_buckets());
	check_structure(t);
	// bytes >> 10 is the slot's KiB: [0,2) KiB is 0..2047 bytes.
	CHECK(grep(t, "hwsig_block_request_size_bytes_bucket") ==
	      std::vector<std::string>{
		      "hwsig_block_request_size_bytes_bucket{device=\"sda\",le=\"2047\"} 1",
		      "hwsig_block_request_size_bytes_bucket{device=\"sda\",le=\"4095\"} 2",
		      "hwsig_block_request_size_bytes_bucket{device=\"sda\",le=\"8191\"} 2",
		      "hwsig_block_request_size_bytes_bucket{device=\"sda\",le=\"+Inf\"} 7",
	      });
	// Sectors of 512 B: 0..1 sectors is at most 512 bytes, 2..3 at most 1536.
	CHECK(grep(t, "hwsig_block_seek_distance_bytes_bucket") ==
	      std::vector<std::string>{
		      "hwsig_block_seek_distance_bytes_bucket{device=\"sda\",le=\"512\"} 10",
		      "hwsig_block_seek_distance_bytes_bucket{device=\"sda\",le=\"1536\"} 10",
		      "hwsig_block_seek_distance_bytes_bucket{device=\"sda\",le=\"+Inf\"} 13",
	      });
	// size _sum: (0+2047)/2 + (2048+4095)/2 + 5 * 8192 = 1023.5 + 3071.5 + 40960.
	CHECK(value_of(t, "hwsig_block_request_size_bytes_sum{device=\"sda\"}") == 45055);
}

TEST_CASE("prometheus: vhost queues carry vm and queue labels, VM names escaped", "[render_prometheus]")
{
	Snapshot s;
	Histogram d;
	d.layout = Histogram::Layout::LinearLog2;
	d.counts.assign(74, 0);
	d.counts[8] = 200;
	d.counts[73] = 1; // [32768, 65536): bounded, every 16-bit depth
	s.add_histogram(series::kVhostDepth, "vq:2101:0:rx", d, "bpf");
	s.add_histogram(series::kVhostDepth, "vq:999:1:tx", d, "bpf");
	s.add_histogram(series::kVhostDepth, "vm:we\"b\\01", d, "bpf");
	s.add_histogram(series::kVhostDepth, "system", d, "bpf");
	s.add_counter(series::kVhostStalls, "vq:2101:0:rx", 4, "bpf");
	s.add_counter(series::kVhostStalls, "vm:we\"b\\01", 4, "bpf");
	s.add_counter(series::kVhostStalls, "system", 4, "bpf");
	std::vector<Vm> vms(1);
	vms[0].pid = 2101;
	vms[0].name = "we\"b\\01";
	ExportSwitches sw = full_buckets();
	sw.per_queue = true;
	std::string t = render(s, sw, &vms);
	check_structure(t);
	const std::string vm = "vm=\"we\\\"b\\\\01\"";
	CHECK(grep(t, "hwsig_vhost_ring_stalls_total") ==
	      std::vector<std::string>{"hwsig_vhost_ring_stalls_total{" + vm + ",queue=\"0-rx\"} 4"});
	const std::string rx = "hwsig_vhost_queue_depth_bucket{" + vm + ",queue=\"0-rx\",le=";
	check_has_lines(t, {
				   "hwsig_vm_info{" + vm + ",pid=\"2101\"} 1",
				   rx + "\"7\"} 0",
				   rx + "\"8\"} 200",
				   rx + "\"127\"} 200",
				   rx + "\"65535\"} 201",
				   rx + "\"+Inf\"} 201",
				   "hwsig_vhost_queue_depth_count{vm=\"pid-999\",queue=\"1-tx\"} 201",
			   });
	// _sum: 200 x 8 + 1 x (32768 + 65535) / 2.
	CHECK(value_of(t, "hwsig_vhost_queue_depth_sum{vm=\"pid-999\",queue=\"1-tx\"}") == 1600 + 49151.5);
	// The per-VM and system aggregates are sums of the queues: left out.
	CHECK(grep(t, "hwsig_vhost_queue_depth_count").size() == 2);
	CHECK(t.find("hwsig_vm_vhost") == std::string::npos);
	// 74 slots: 73 bounded buckets and +Inf per queue.
	CHECK(grep(t, "hwsig_vhost_queue_depth_bucket{vm=\"pid-999\"").size() == 75);
}

TEST_CASE("prometheus: unavailable metrics, one line each, scopes folded", "[render_prometheus]")
{
	using enum UnavailableCode;
	Snapshot s;
	std::vector<UnavailableNote> notes = {
		{"cpu.ipc", "system", unsupported, "no hardware PMU: \"quoted\" \\ and\nnewline"},
		{"sched.steal_ratio", "cpu:3", unsupported, "/proc/stat has no steal column"},
		{"sched.steal_ratio", "cpu:4", unsupported, "/proc/stat has no steal column"},
		{"sched.runq_wait_p50_us", "pid:77", capacity, "too many processes selected for BPF"},
		{"vhost.ring_stalls_ps", "vq:2101:1:tx", no_target, "no ring stalls on TX queues"},
		// Transient: not exported, whatever their words.
		{"io.latency_p50_us", "dev:sda", no_events, "no I/O in this interval"},
		{"cpu.ipc", "cpu:5", incomplete, "pmu.cycles went backwards (counter reset)"},
		// From a dump older than the codes: not exported either.
		{"psi.cpu_some_pct", "system", unknown, "PSI not available"},
	};
	std::vector<Vm> vms(1);
	vms[0].pid = 2101;
	vms[0].name = "web01";
	ExportInput in;
	in.snapshot = &s;
	in.unavailable = &notes;
	in.vms = &vms;
	std::string t = render_prometheus(in, ExpositionFormat::Prometheus004);
	check_structure(t);
	CHECK(grep(t, "hwsig_unavailable{") ==
	      std::vector<std::string>{
		      "hwsig_unavailable{metric=\"cpu.ipc\",scope=\"system\",reason=\"unsupported\"} 1",
		      "hwsig_unavailable{metric=\"sched.steal_ratio\",scope=\"cpu:*\",reason=\"unsupported\"} 1",
		      "hwsig_unavailable{metric=\"vhost.ring_stalls_ps\",scope=\"vq:web01:1:tx\",reason=\"no_target\"} 1",
	      });
	in.switches.per_cpu = true;
	t = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(grep(t, "hwsig_unavailable{metric=\"sched.steal_ratio\"").size() == 2);
	CHECK(has_line(t, "hwsig_unavailable{metric=\"sched.steal_ratio\",scope=\"cpu:4\",reason=\"unsupported\"} 1"));
	CHECK(grep(t, "hwsig_unavailable{metric=\"cpu.ipc\"").size() == 1); // cpu:5's is transient
}

TEST_CASE("prometheus: a note's live count in its words changes no series", "[render_prometheus]")
{
	Snapshot s;
	auto render = [&](std::uint64_t requests) {
		std::vector<UnavailableNote> notes = {
			{"io.pattern_entropy", "dev:sda", UnavailableCode::capacity,
			 std::to_string(requests) + " requests not counted: the BPF table of disks was full (64 with I/O)"},
		};
		ExportInput in;
		in.snapshot = &s;
		in.unavailable = &notes;
		return grep(render_prometheus(in, ExpositionFormat::Prometheus004), "hwsig_unavailable{");
	};
	const auto once = render(3);
	CHECK(once == std::vector<std::string>{"hwsig_unavailable{metric=\"io.pattern_entropy\",scope=\"dev:sda\","
					       "reason=\"capacity\"} 1"});
	CHECK(render(12345) == once);
}

TEST_CASE("prometheus: self metrics grouped by name, HELP and TYPE once", "[render_prometheus]")
{
	ExportInput in;
	in.version = "1.0";
	in.self.push_back({"hwsig_collect_duration_seconds", "Time to collect.", false, {{"source", "procfs"}}, 0.5});
	in.self.push_back({"hwsig_scrapes_total", "Scrapes served.", true, {}, 7});
	in.self.push_back({"hwsig_collect_duration_seconds", "Time to collect.", false, {{"source", "bpf"}}, 0.25});
	in.self.push_back({"bad name", "Refused.", false, {}, 1});
	in.self.push_back({"hwsig_not_a_counter", "Counter without _total: refused.", true, {}, 1});
	std::string t = render_prometheus(in, ExpositionFormat::Prometheus004);
	check_structure(t);
	CHECK(lines_of(t) == std::vector<std::string>{
				     "# HELP hwsig_build_info The hwsig version exporting these metrics.",
				     "# TYPE hwsig_build_info gauge",
				     "hwsig_build_info{version=\"1.0\"} 1",
				     "# HELP hwsig_collect_duration_seconds Time to collect.",
				     "# TYPE hwsig_collect_duration_seconds gauge",
				     "hwsig_collect_duration_seconds{source=\"bpf\"} 0.25",
				     "hwsig_collect_duration_seconds{source=\"procfs\"} 0.5",
				     "# HELP hwsig_scrapes_total Scrapes served.",
				     "# TYPE hwsig_scrapes_total counter",
				     "hwsig_scrapes_total 7",
			     });
}

TEST_CASE("openmetrics: family names without _total, UNIT, info, # EOF", "[render_prometheus]")
{
	Snapshot s;
	s.add_counter(series::kCpuStealTicks, "system", 2210, "procfs");
	Histogram h;
	h.counts = {1, 1};
	s.add_histogram(series::kIoLatencyUs, "dev:sda", h, "bpf");
	std::string t = render(s, full_buckets(), nullptr, ExpositionFormat::OpenMetrics100);
	auto l = lines_of(t);
	REQUIRE(!l.empty());
	CHECK(l.back() == "# EOF");
	CHECK(t.back() == '\n');
	CHECK(grep(t, "# EOF").size() == 1);
	CHECK(grep(t, "# TYPE hwsig_cpu_steal_seconds") ==
	      std::vector<std::string>{"# TYPE hwsig_cpu_steal_seconds counter"});
	check_has_lines(t, {
				   "# UNIT hwsig_cpu_steal_seconds seconds",
				   "# HELP hwsig_cpu_steal_seconds CPU time stolen by the hypervisor (/proc/stat steal, "
				   "USER_HZ ticks / 100).",
				   "hwsig_cpu_steal_seconds_total 22.1",
				   "# TYPE hwsig_build info",
				   "hwsig_build_info{version=\"1.2.3\"} 1",
				   "# TYPE hwsig_block_latency_seconds histogram",
				   "# UNIT hwsig_block_latency_seconds seconds",
				   "hwsig_block_latency_seconds_bucket{device=\"sda\",le=\"2e-06\"} 1",
				   "hwsig_block_latency_seconds_bucket{device=\"sda\",le=\"+Inf\"} 2",
			   });
	CHECK(t.find("_total counter") == std::string::npos);
	// 0.0.4 of the same: no EOF, no UNIT, _total in TYPE.
	std::string p = render(s);
	CHECK(p.find("# EOF") == std::string::npos);
	CHECK(p.find("# UNIT") == std::string::npos);
	CHECK(has_line(p, "# TYPE hwsig_cpu_steal_seconds_total counter"));
}

TEST_CASE("openmetrics: HELP escapes quotes, 0.0.4 does not", "[render_prometheus]")
{
	ExportInput in;
	in.self.push_back({"hwsig_x", "a \"b\" \\ c\nd", false, {}, 1});
	CHECK(has_line(render_prometheus(in, ExpositionFormat::OpenMetrics100), "# HELP hwsig_x a \\\"b\\\" \\\\ c\\nd"));
	CHECK(has_line(render_prometheus(in, ExpositionFormat::Prometheus004), "# HELP hwsig_x a \"b\" \\\\ c\\nd"));
}

TEST_CASE("negotiate_format and content_type", "[render_prometheus]")
{
	using F = ExpositionFormat;
	struct Accept {
		const char *header;
		F format;
	};
	for (const Accept a : {
		     Accept{"", F::Prometheus004},
		     Accept{"*/*", F::Prometheus004},
		     Accept{"text/plain; version=0.0.4", F::Prometheus004},
		     Accept{"application/openmetrics-text", F::OpenMetrics100},
		     Accept{"application/openmetrics-text; version=1.0.0", F::OpenMetrics100},
		     Accept{"Application/OpenMetrics-Text;Version=\"1.0.0\"", F::OpenMetrics100},
		     Accept{"application/openmetrics-text; version=0.0.1", F::Prometheus004},
		     Accept{"application/openmetrics-text; version=1.0.0; q=0", F::Prometheus004},
		     // What Prometheus 2.x sends.
		     Accept{"application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
			    "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
			    F::OpenMetrics100},
		     Accept{"application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5",
			    F::Prometheus004},
	     }) {
		INFO("Accept: " << a.header);
		CHECK(negotiate_format(a.header) == a.format);
	}
	CHECK(content_type(F::Prometheus004) == "text/plain; version=0.0.4; charset=utf-8");
	CHECK(content_type(F::OpenMetrics100) == "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST_CASE("prometheus: a 256-CPU, 8-node host stays small without per_cpu", "[render_prometheus][fixture]")
{
	const auto fx = hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/xeon-2s-256cpu-8node", false);
	ExportInput in = fx.input(false);
	auto series_count = [](const std::string &t) {
		std::size_t n = 0;
		for (const auto &l : lines_of(t))
			n += !l.empty() && l[0] != '#';
		return n;
	};
	std::string t = render_prometheus(in, ExpositionFormat::Prometheus004);
	check_structure(t);
	INFO("series " << series_count(t) << ", bytes " << t.size());
	CHECK(series_count(t) <= 2000);
	CHECK(t.size() <= 200 * 1000);
	CHECK(t.find("cpu=\"") == std::string::npos);
	CHECK(grep(t, "hwsig_numa_local_node_pages_total{node=").size() == 8);
	CHECK(grep(t, "hwsig_numa_local_node_pages_total ").empty());
	CHECK(has_line(t, "hwsig_cpu_steal_seconds_total 979.2"));

	in.switches.per_cpu = true;
	std::string pc = render_prometheus(in, ExpositionFormat::Prometheus004);
	check_structure(pc);
	CHECK(series_count(pc) > series_count(t));
	CHECK(grep(pc, "hwsig_cpu_steal_seconds_total{cpu=").size() == 256);
	CHECK(grep(pc, "hwsig_cpu_steal_seconds_total ").empty());
	// The breakdown adds up to the aggregate it replaces.
	double sum = 0;
	for (const auto &l : grep(pc, "hwsig_cpu_steal_seconds_total{cpu="))
		sum += std::strtod(l.c_str() + l.rfind(' ') + 1, nullptr);
	CHECK(sum == Approx(979.2));
}

TEST_CASE("prometheus: label values stay valid UTF-8", "[render_prometheus]")
{
	std::vector<Vm> vms(3);
	vms[0] = {1, "caf\xc3\xa9", {}, {}, {}};        // valid two-byte sequence: kept
	vms[1] = {2, "bad\xff", {}, {}, {}};            // not UTF-8: U+FFFD
	vms[2] = {3, "trunc\xe2\x82", {}, {}, {}};      // truncated three-byte sequence
	ExportInput in;
	in.vms = &vms;
	std::string t = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(has_line(t, "hwsig_vm_info{vm=\"caf\xc3\xa9\",pid=\"1\"} 1"));
	CHECK(has_line(t, "hwsig_vm_info{vm=\"bad\xef\xbf\xbd\",pid=\"2\"} 1"));
	CHECK(has_line(t, "hwsig_vm_info{vm=\"trunc\xef\xbf\xbd\xef\xbf\xbd\",pid=\"3\"} 1"));
}

TEST_CASE("prometheus: label values that differ only in leading zeros are two series", "[render_prometheus]")
{
	Snapshot s;
	s.add_counter(series::kIoReads, "dev:sd07", 1, "bpf");
	s.add_counter(series::kIoReads, "dev:sd7", 2, "bpf");
	std::string t = render(s);
	CHECK(grep(t, "hwsig_block_reads_total{") ==
	      std::vector<std::string>{"hwsig_block_reads_total{device=\"sd07\"} 1",
				       "hwsig_block_reads_total{device=\"sd7\"} 2"});
}

TEST_CASE("prometheus: PMU counts as counted with their times, per VM as estimated", "[render_prometheus]")
{
	Snapshot s;
	s.add_counter(series::kPmuCycles, "system", CounterPoint{8000, {4000, 2e9, 1e9, 0}}, "perf");
	// Per VM: 1000 counted in a quarter of the time, estimated 4000.
	s.add_counter(series::kPmuCycles, "vm:web01", CounterPoint{4000, {1000, 4e9, 1e9, 0}}, "perf");
	s.add_counter(series::kPmuCycles, "pid:4242", CounterPoint{80, {10, 0.125e9, 0.125e9, 0}}, "perf");
	std::string t = render(s);
	check_structure(t);
	check_samples(t, {
				 {"hwsig_cpu_cycles_total", {"hwsig_cpu_cycles_total 4000"}},
				 {"hwsig_vm_cpu_cycles_total", {"hwsig_vm_cpu_cycles_total{vm=\"web01\"} 4000"}},
				 {"hwsig_pmu_enabled_seconds_total{",
				  {"hwsig_pmu_enabled_seconds_total{counter=\"hwsig_cpu_cycles_total\"} 2"}},
				 {"hwsig_pmu_running_seconds_total{",
				  {"hwsig_pmu_running_seconds_total{counter=\"hwsig_cpu_cycles_total\"} 1"}},
			 });
	CHECK(t.find("0.125") == std::string::npos); // pid:N is not exported
}

TEST_CASE("prometheus: resctrl per VM and host-wide", "[render_prometheus][resctrl]")
{
	Snapshot s;
	s.add_gauge(series::kResctrlLlcOccupancy, "system", 20971520, "resctrl");
	s.add_gauge(series::kResctrlLlcOccupancy, "vm:web01", 4194304, "resctrl");
	s.add_counter(series::kResctrlMbmTotalBytes, "system", 1500000000, "resctrl");
	s.add_counter(series::kResctrlMbmTotalBytes, "vm:web01", 100000000, "resctrl");
	s.add_counter(series::kResctrlMbmLocalBytes, "system", 1250000000, "resctrl");
	s.add_counter(series::kResctrlMbmLocalBytes, "vm:web01", 60000000, "resctrl");
	std::vector<Vm> vms(1);
	vms[0].pid = 4242;
	vms[0].name = "web01";
	std::string t = render(s, false, &vms);
	check_structure(t);
	check_samples(t, {
				 {"hwsig_llc_occupancy_bytes", {"hwsig_llc_occupancy_bytes 20971520"}},
				 {"hwsig_vm_llc_occupancy_bytes", {"hwsig_vm_llc_occupancy_bytes{vm=\"web01\"} 4194304"}},
				 {"hwsig_mbm_total_bytes_total", {"hwsig_mbm_total_bytes_total 1500000000"}},
				 {"hwsig_vm_mbm_total_bytes_total",
				  {"hwsig_vm_mbm_total_bytes_total{vm=\"web01\"} 100000000"}},
				 {"hwsig_mbm_local_bytes_total", {"hwsig_mbm_local_bytes_total 1250000000"}},
				 {"hwsig_vm_mbm_local_bytes_total", {"hwsig_vm_mbm_local_bytes_total{vm=\"web01\"} 60000000"}},
			 });
	check_has_lines(t, {"# TYPE hwsig_vm_mbm_local_bytes_total counter", "# TYPE hwsig_llc_occupancy_bytes gauge"});
}
