// catalog-rules-test --coverage RULES.yml | --promtool-test RULES.yml
// The formulas of the catalog (catalog.cpp, applied by derive) and of the
// recording rules (Documentation/prometheus/rules.yml) checked against each
// other on the same counter sequences. --promtool-test prints a `promtool
// test rules` file: a few minutes of snapshots per scenario, rendered by
// render_prometheus as the input series, and for every recording rule that
// computes a catalog metric the value derive() gives for each minute as the
// expected samples, both sides rounded to about 9 significant digits
// (promtool 2.42 compares floats exactly). --coverage prints one line per
// recording rule that is neither compared nor excused or that reads another
// group's record, and per catalog Ratio or Rate (what PromQL can express)
// that has no rule and is not a known gap; exit 1 if any. For
// tests/daemon/test_rules_catalog.sh.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/catalog.h"
#include "hwsig/derive.h"
#include "hwsig/multiplex.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

namespace {

using namespace hwsig;

// A recording rule that computes one catalog metric at one level of scope.
struct Compared {
	const char *record;
	const char *id;
	const char *level;    // the scope kind: system, socket, node, dev, vm
	double to_rule = 1.0; // rule value per catalog value: the rules keep Prometheus' base units
};

const std::vector<Compared> kCompared = {
	{"instance:hwsig_ipc:ratio_rate1m", "cpu.ipc", "system"},
	{"instance:hwsig_cpu_stall:ratio_rate1m", "cpu.stall_ratio", "system"},
	{"instance:hwsig_cpu_l1d_mpki:rate1m", "cpu.l1d_mpki", "system"},
	{"instance:hwsig_cpu_l2_mpki:rate1m", "cpu.l2_mpki", "system"},
	{"instance:hwsig_cpu_llc_mpki:rate1m", "cpu.llc_mpki", "system"},
	{"instance:hwsig_cpu_dtlb_mpki:rate1m", "cpu.dtlb_mpki", "system"},
	{"instance:hwsig_cpu_itlb_mpki:rate1m", "cpu.itlb_mpki", "system"},
	{"instance:hwsig_cpu_llc_miss:ratio_rate1m", "cpu.llc_miss_ratio", "system"},
	{"instance:hwsig_cpu_branch_miss:ratio_rate1m", "cpu.branch_miss_ratio", "system"},
	{"socket:hwsig_dram_read_bytes:rate1m", "mem.imc_read_bps", "socket"},
	{"socket:hwsig_dram_write_bytes:rate1m", "mem.imc_write_bps", "socket"},
	{"socket:hwsig_dram_bytes:rate1m", "mem.imc_bps", "socket"},
	{"instance:hwsig_dram_read_bytes:rate1m", "mem.imc_read_bps", "system"},
	{"instance:hwsig_dram_write_bytes:rate1m", "mem.imc_write_bps", "system"},
	{"instance:hwsig_dram_bytes:rate1m", "mem.imc_bps", "system"},
	{"node:hwsig_numa_remote:ratio_rate1m", "mem.numa_remote_ratio", "node"},
	{"instance:hwsig_numa_remote:ratio_rate1m", "mem.numa_remote_ratio", "system"},
	{"node:hwsig_numa_fallback:ratio_rate1m", "mem.numa_fallback_ratio", "node"},
	{"instance:hwsig_numa_fallback:ratio_rate1m", "mem.numa_fallback_ratio", "system"},
	{"instance:hwsig_page_migrations:rate1m", "mem.page_migrations_ps", "system"},
	{"instance:hwsig_numa_pages_migrated:rate1m", "mem.numa_pages_migrated_ps", "system"},
	{"instance:hwsig_thp_fault_fallback:ratio_rate1m", "mem.thp_fallback_ratio", "system"},
	{"instance:hwsig_mbm_total_bytes:rate1m", "mem.mbm_total_bps", "system"},
	{"instance:hwsig_mbm_local_bytes:rate1m", "mem.mbm_local_bps", "system"},
	{"vm:hwsig_mbm_total_bytes:rate1m", "mem.mbm_total_bps", "vm"},
	{"vm:hwsig_mbm_local_bytes:rate1m", "mem.mbm_local_bps", "vm"},
	{"instance:hwsig_llc_miss_bytes:rate1m", "mem.llc_miss_bps", "system"},
	{"vm:hwsig_llc_miss_bytes:rate1m", "mem.llc_miss_bps", "vm"},
	{"device:hwsig_block_reads:rate1m", "io.iops_read", "dev"},
	{"device:hwsig_block_writes:rate1m", "io.iops_write", "dev"},
	{"device:hwsig_block_read_bytes:rate1m", "io.read_bps", "dev"},
	{"device:hwsig_block_write_bytes:rate1m", "io.write_bps", "dev"},
	{"instance:hwsig_schedstat_run_delay_seconds_per_timeslice:rate1m", "sched.runq_wait_avg_us", "system", 1e-6},
	{"instance:hwsig_cpu_steal:ratio_rate1m", "sched.steal_ratio", "system"},
	{"instance:hwsig_involuntary_switches:rate1m", "sched.involuntary_ctxsw_ps", "system"},
	{"vm:hwsig_involuntary_switches:rate1m", "sched.involuntary_ctxsw_ps", "vm"},
	{"vm:hwsig_vhost_ring_stalls:rate1m", "vhost.ring_stalls_ps", "vm"},
	{"vm:hwsig_vhost_rx_empty:ratio_rate1m", "vhost.rx_empty_ratio", "vm"},
	{"instance:hwsig_thermal_headroom_celsius:min", "thermal.headroom_c", "system"},
	{"instance:hwsig_cpu_busy:ratio_rate1m", "sched.cpu_busy_ratio", "system"},
	{"vm:hwsig_vcpu_wait:ratio_rate1m", "sched.vcpu_wait_ratio", "vm"},
	{"vm:hwsig_vcpu_cpus:rate1m", "sched.vcpu_cpus", "vm"},
	{"culprit:hwsig_vm_wait_behind:ratio_rate1m", "sched.wait_behind_ratio", "culprit"},
	{"culprit:hwsig_vm_wait_behind_vm:ratio_rate1m", "sched.wait_behind_ratio", "culprit_vm"},
	{"culprit:hwsig_vm_preempted_by:rate1m", "sched.preempted_by_ps", "culprit"},
	{"instance:hwsig_pressure_cpu_some:ratio_rate1m", "psi.cpu_some_pct", "system", 0.01},
	{"instance:hwsig_pressure_memory_some:ratio_rate1m", "psi.memory_some_pct", "system", 0.01},
	{"instance:hwsig_pressure_memory_full:ratio_rate1m", "psi.memory_full_pct", "system", 0.01},
	{"instance:hwsig_pressure_io_some:ratio_rate1m", "psi.io_some_pct", "system", 0.01},
	{"instance:hwsig_pressure_io_full:ratio_rate1m", "psi.io_full_pct", "system", 0.01},
};

struct Excused {
	const char *name;
	const char *why;
};

constexpr const char *kQuantile =
	"histogram_quantile interpolates between bucket bounds, derive's percentile() inside the log2 "
	"slot (nearest rank for integer quantities): both land in the same slot, not on one number "
	"(prometheus.rst, Histograms); rules_test.yml checks it by hand";

// Recording rules not compared with a catalog metric, and why.
const std::vector<Excused> kNotCompared = {
	{"counter:hwsig_pmu_scale:ratio_rate1m", "the multiplex factor of every cpu.* rule: compared through them"},
	{"instance:hwsig_pmu_running:ratio_min",
	 "no catalog metric: derive says the running share in a note (\"multiplexed: counted N%\")"},
	{"device:hwsig_block_latency_seconds:p50_rate1m", kQuantile},
	{"device:hwsig_block_latency_seconds:p99_rate1m", kQuantile},
	{"device:hwsig_block_queue_seconds:p50_rate1m", kQuantile},
	{"device:hwsig_block_queue_seconds:p99_rate1m", kQuantile},
	{"instance:hwsig_runq_wait_seconds:p50_rate1m", kQuantile},
	{"instance:hwsig_runq_wait_seconds:p99_rate1m", kQuantile},
	{"vm:hwsig_runq_wait_seconds:p50_rate1m", kQuantile},
	{"vm:hwsig_runq_wait_seconds:p99_rate1m", kQuantile},
	{"queue:hwsig_vhost_queue_depth:p50_rate1m", kQuantile},
	{"queue:hwsig_vhost_queue_depth:p99_rate1m", kQuantile},
	{"vm:hwsig_vhost_queue_depth:p99_rate1m", kQuantile},
	{"queue:hwsig_vhost_rx_buffers:p1_rate1m", kQuantile},
	{"queue:hwsig_vhost_rx_buffers:p50_rate1m", kQuantile},
	{"vm:hwsig_vhost_rx_buffers:p1_rate1m", kQuantile},
	{"queue:hwsig_vhost_rx_empty:ratio_rate1m",
	 "per queue: the catalog has vhost.rx_empty_ratio per queue as a vq:PID:I:rx scope, the rule per "
	 "{vm, queue}; compared per VM (vm:hwsig_vhost_rx_empty:ratio_rate1m), the same formula"},
};

// Catalog ratios and rates that PromQL could compute but rules.yml does not yet.
const std::vector<Excused> kKnownGaps = {};

template <typename T> bool listed(const std::vector<T> &list, const std::string &name)
{
	return std::any_of(list.begin(), list.end(), [&](const T &e) { return name == e.name; });
}

bool compared_record(const std::string &record)
{
	return std::any_of(kCompared.begin(), kCompared.end(),
			   [&](const Compared &c) { return record == c.record; });
}

bool compared_id(const std::string &id)
{
	return std::any_of(kCompared.begin(), kCompared.end(), [&](const Compared &c) { return id == c.id; });
}

struct RecordingRule {
	std::string record;
	std::string group;
	std::string expr; // its lines after `record:`, comments left out
};

// The recording rules of rules.yml in order, read line by line: the file
// keeps one `- name:` per group and one `- record:` per rule.
std::vector<RecordingRule> recording_rules(const char *rules_path)
{
	std::ifstream in(rules_path);
	if (!in)
		throw std::runtime_error(std::string("cannot read ") + rules_path);
	static const std::regex group(R"(^\s*-\s*name:\s*(\S+))"), record(R"(^\s*-\s*record:\s*(\S+))"),
		comment(R"(^\s*#)");
	std::vector<RecordingRule> rules;
	std::string current_group;
	std::smatch m;
	for (std::string line; std::getline(in, line);) {
		if (std::regex_search(line, m, group))
			current_group = m[1];
		else if (std::regex_search(line, m, record))
			rules.push_back({m[1], current_group, {}});
		else if (!rules.empty() && !std::regex_search(line, comment))
			rules.back().expr += line + "\n";
	}
	return rules;
}

// A rule reading another rule's record sees it as of that rule's last
// evaluation: the same one only for an earlier rule of its own group (a
// group's rules run in order; groups run on their own schedules), else a
// window up to one interval older than its own.
std::vector<std::string> stale_reads(const std::vector<RecordingRule> &rules)
{
	static const std::regex name(R"([A-Za-z_:][A-Za-z0-9_:]*)");
	std::vector<std::string> out;
	for (std::size_t i = 0; i < rules.size(); ++i) {
		const RecordingRule &r = rules[i];
		for (auto it = std::sregex_iterator(r.expr.begin(), r.expr.end(), name); it != std::sregex_iterator(); ++it)
			for (std::size_t j = 0; j < rules.size(); ++j)
				if (it->str() == rules[j].record && (j >= i || rules[j].group != r.group))
					out.push_back("rule " + r.record + " reads " + rules[j].record +
						      ", not recorded before it in its group " + r.group);
	}
	return out;
}

// A line "<what> NAME <where>" per entry whose name is not among `known`:
// an entry of the tables above that no longer matches rules.yml or the catalog.
template <typename T, typename Name>
void stale_entries(std::vector<std::string> &out, const std::vector<T> &entries, Name name,
		   const std::set<std::string> &known, const char *what, const char *where)
{
	for (const T &e : entries)
		if (!known.count(name(e)))
			out.push_back(std::string(what) + " " + name(e) + " " + where);
}

// One line per rule or metric the comparison leaves out unexplained, per
// excuse that no longer applies, and per rule reading a stale record.
std::vector<std::string> coverage_problems(const char *rules_path)
{
	const auto rules = recording_rules(rules_path);
	std::vector<std::string> out = stale_reads(rules);
	std::set<std::string> records, ids;
	for (const auto &r : rules) {
		records.insert(r.record);
		if (!compared_record(r.record) && !listed(kNotCompared, r.record))
			out.push_back("rule " + r.record + ": neither compared with a catalog metric nor excused");
	}
	for (const MetricDef &m : catalog()) {
		ids.insert(m.id);
		const bool promql = m.rule.kind == Rule::Kind::Ratio || m.rule.kind == Rule::Kind::Rate;
		if (promql && !compared_id(m.id) && !listed(kKnownGaps, m.id))
			out.push_back("metric " + m.id + ": a ratio or rate of counters with no rule, not a known gap");
		if (compared_id(m.id) && listed(kKnownGaps, m.id))
			out.push_back("metric " + m.id + " has a rule now: no longer a known gap");
	}
	const auto record = [](const Compared &c) { return std::string(c.record); };
	const auto id = [](const Compared &c) { return std::string(c.id); };
	const auto name = [](const Excused &e) { return std::string(e.name); };
	stale_entries(out, kCompared, record, records, "compared rule", "is not in rules.yml");
	stale_entries(out, kNotCompared, name, records, "excused rule", "is not in rules.yml");
	stale_entries(out, kCompared, id, ids, "compared metric", "is not in the catalog");
	stale_entries(out, kKnownGaps, name, ids, "known gap", "is not in the catalog");
	return out;
}

// --- the counter sequences ---------------------------------------------------

constexpr int kMinutes = 4; // snapshots at 0..kMinutes minutes, one rate() window each
constexpr double kMinuteNs = 60e9;

// What a counter counts in minute m (1-based): another amount every minute
// and every seed, so that a window scaled by anything but its own counts
// and times comes out wrong.
double per_minute(int m, unsigned seed, double base)
{
	return base * (2 + (3 * m + 7 * seed) % 5);
}

double cumulative(int minute, unsigned seed, double base)
{
	double sum = 0;
	for (int m = 1; m <= minute; ++m)
		sum += per_minute(m, seed, base);
	return sum;
}

// The share of minute m a multiplexed counter was counting, in twentieths:
// seeds apart by less than 7 never count alike, so that no two counters of
// a ratio have the same factor to cancel.
std::uint64_t running_ns(int m, unsigned seed)
{
	static const std::uint64_t twentieths[] = {20, 10, 16, 5, 12, 15, 8};
	return static_cast<std::uint64_t>(kMinuteNs) * twentieths[(m + seed) % 7] / 20;
}

// The series a source reads per part and sums at `total` (system, a VM):
// /proc/stat's cpu line, schedstat, numastat, the BPF maps.
void add_summed(Snapshot &snap, const char *name, const std::vector<std::string> &parts, const char *total,
		int minute, unsigned seed, double base)
{
	double sum = 0;
	for (std::size_t i = 0; i < parts.size(); ++i) {
		const double v = cumulative(minute, seed + static_cast<unsigned>(i), base);
		snap.add_counter(name, parts[i], v, "test");
		sum += v;
	}
	snap.add_counter(name, total, sum, "test");
}

struct Scenario {
	const char *name;
	const char *what;
	bool per_cpu;
	bool per_queue; // vhost per virtqueue, or per VM (hwsig_vm_vhost_*)
	// Every CPU counted the same share of each minute: what a sum of
	// CPUs scaled by its summed times (per-CPU export off) gets exactly.
	bool same_share;
};

const std::vector<Scenario> kScenarios = {
	{"per-cpu", "per-CPU and per-queue export on, each CPU multiplexed its own share of each minute", true, true,
	 false},
	{"summed", "per-CPU export off, every CPU counting the same share of each minute", false, false, true},
};

const std::vector<std::string> kCpus = {"cpu:0", "cpu:1", "cpu:2"};
constexpr int kQemuPid = 4242;
constexpr int kVcpuTids[] = {4250, 4251};
const std::vector<std::string> kQueues = {"vq:4242:0:rx", "vq:4242:2:rx"};

const std::vector<Vm> &vms()
{
	static const std::vector<Vm> v = {{kQemuPid, "web", {kVcpuTids[0], kVcpuTids[1]}, {}, {}}};
	return v;
}

// The PMU's counters as the PMU sources read them, each read once a minute
// and scaled per interval (multiplex.h): per CPU (and summed at system), per
// uncore box (summed per socket and at system), per vCPU thread (summed per
// VM). A socket's boxes and a VM's threads count the same share of each
// minute: the rules scale their sums by the summed times, exact only then.
class Pmu {
public:
	explicit Pmu(const Scenario &sc) : sc_(sc) {}

	void read(int minute)
	{
		// Counts per minute of the order of a CPU at a few percent busy.
		const std::pair<const char *, double> core[] = {
			{series::kPmuCycles, 6e8},	 {series::kPmuInstructions, 9e8},
			{series::kPmuStallCycles, 1e8},	 {series::kPmuL1dMisses, 2e7},
			{series::kPmuL2Misses, 6e6},	 {series::kPmuLlcReferences, 3e6},
			{series::kPmuLlcMisses, 8e5},	 {series::kPmuBranches, 1.5e8},
			{series::kPmuBranchMisses, 2e6}, {series::kPmuDtlbMisses, 5e5},
			{series::kPmuItlbMisses, 1e5}};
		for (unsigned e = 0; e < std::size(core); ++e) {
			const auto [name, base] = core[e];
			for (unsigned cpu = 0; cpu < kCpus.size(); ++cpu)
				core_.read({cpu, e}, name, kCpus[cpu],
					   reading(minute, e + (sc_.same_share ? 0 : 3 * cpu), 17 * e + cpu, base));
			for (unsigned t = 0; t < std::size(kVcpuTids); ++t)
				vm_.read({t, e}, name, "vm:web", reading(minute, 200 + e, 31 * e + t, base / 4, t + 1));
		}
		const char *imc[] = {series::kImcCasReads, series::kImcCasWrites, series::kImcCasReadWrite};
		for (unsigned e = 0; e < std::size(imc); ++e)
			for (unsigned box = 0; box < 4; ++box) // two boxes per socket, a socket's counting alike
				uncore_.read({box, e}, imc[e], "socket:" + std::to_string(box / 2),
					     reading(minute, 300 + 10 * e + box / 2, 13 * e + box, 1e7));
	}

	void add_to(Snapshot &snap)
	{
		core_.add_to(snap, "kmod");
		vm_.add_to(snap, "perf", false);
		uncore_.add_to(snap, "perf");
	}

private:
	// share_seed picks the share of each minute counted, seed the counts.
	// Enabled `sixths` of each minute: a per-thread counter only while its
	// thread runs.
	static CounterReading reading(int minute, unsigned share_seed, unsigned seed, double base,
				      unsigned sixths = 6)
	{
		CounterReading r;
		for (int m = 1; m <= minute; ++m) {
			r.enabled_ns += static_cast<std::uint64_t>(kMinuteNs) / 6 * sixths;
			r.running_ns += running_ns(m, share_seed) / 6 * sixths;
			r.count += static_cast<std::uint64_t>(per_minute(m, seed, base));
		}
		return r;
	}

	const Scenario &sc_;
	ScaledCounters core_, vm_, uncore_;
};

Snapshot snapshot_at(int minute, Pmu &pmu)
{
	using namespace series;
	Snapshot s;
	s.mono_ns = static_cast<std::uint64_t>(minute * kMinuteNs);
	pmu.read(minute);
	pmu.add_to(s);
	const std::vector<std::string> nodes = {"node:0", "node:1"}, devs = {"dev:nvme0n1", "dev:sda"};
	add_summed(s, kCpuStealTicks, kCpus, "system", minute, 1, 60);
	add_summed(s, kCpuTotalTicks, kCpus, "system", minute, 2, 6000);
	add_summed(s, kCpuBusyTicks, kCpus, "system", minute, 3, 2000);
	add_summed(s, kSchedstatRunDelayNs, kCpus, "system", minute, 4, 3e8);
	add_summed(s, kSchedstatTimeslices, kCpus, "system", minute, 5, 9000);
	add_summed(s, kInvoluntarySwitches, kCpus, "system", minute, 6, 700);
	s.add_counter(kInvoluntarySwitches, "vm:web", cumulative(minute, 7, 90), "bpf");
	add_summed(s, kNumaLocal, nodes, "system", minute, 8, 5e5);
	add_summed(s, kNumaOther, nodes, "system", minute, 9, 4e4);
	add_summed(s, kNumaHit, nodes, "system", minute, 10, 5e5);
	add_summed(s, kNumaForeign, nodes, "system", minute, 11, 3e3);
	s.add_counter(kPgmigrateSuccess, "system", cumulative(minute, 12, 600), "procfs");
	s.add_counter(kNumaPagesMigrated, "system", cumulative(minute, 13, 240), "procfs");
	s.add_counter(kThpFaultAlloc, "system", cumulative(minute, 14, 1200), "procfs");
	s.add_counter(kThpFaultFallback, "system", cumulative(minute, 15, 30), "procfs");
	// The VM's vCPUs: each one's run delay and run time, the VM's mean
	// delay and summed run time (as the schedstat source gives them).
	double delay_sum = 0, run_sum = 0;
	for (unsigned v = 0; v < 2; ++v) {
		const std::string at = Scope::vm("web").vcpu(v).str();
		const double delay = cumulative(minute, 50 + v, 3e9), run = cumulative(minute, 52 + v, 9e9);
		s.add_counter(kVcpuRunDelayNs, at, delay, "procfs");
		s.add_counter(kVcpuRunNs, at, run, "procfs");
		delay_sum += delay;
		run_sum += run;
	}
	s.add_counter(kVcpuRunDelayNs, "vm:web", delay_sum / 2, "procfs");
	s.add_counter(kVcpuRunNs, "vm:web", run_sum, "procfs");
	s.add_counter(kSchedstatRunDelayNs, "vm:web", delay_sum, "procfs");
	s.add_counter(kSchedstatRunNs, "vm:web", run_sum, "procfs");
	s.add_gauge(kVmVcpus, "vm:web", 2, "procfs");
	// Its waits behind, and preemptions by, two culprits. A cell exists
	// once the program blamed a wait on it, so never at 0 (a named
	// culprit VM at 0 is not exported: its rate would start a minute late).
	unsigned cell_seed = 60;
	for (const Scope &who : {Scope::vm("db"), Scope::host(Scope::HostWork::Kernel)}) {
		const std::string cell = Scope::vm("web").culprit(who).str();
		s.add_counter(kVmWaitBehindNs, cell, 5e8 + cumulative(minute, cell_seed++, 2e9), "bpf");
		s.add_counter(kVmPreemptedBy, cell, 7 + cumulative(minute, cell_seed++, 900), "bpf");
	}
	// PSI stall time, us: at most a few seconds of each minute.
	unsigned psi_seed = 40;
	for (const char *name : {kPsiCpuSomeUs, kPsiMemorySomeUs, kPsiMemoryFullUs, kPsiIoSomeUs, kPsiIoFullUs})
		s.add_counter(name, "system", cumulative(minute, psi_seed++, 3e6), "procfs");
	unsigned seed = 16;
	for (const char *name : {kResctrlMbmTotalBytes, kResctrlMbmLocalBytes})
		for (const char *scope : {"system", "vm:web"}) // the default group's and the VM's: apart
			s.add_counter(name, scope, cumulative(minute, seed++, 6e9), "resctrl");
	for (const auto &[name, base] : {std::pair{kIoReads, 3000.0}, {kIoWrites, 2000.0}, {kIoReadBytes, 4e7},
					 {kIoWriteBytes, 3e7}})
		for (const auto &dev : devs)
			s.add_counter(name, dev, cumulative(minute, seed++, base), "bpf");
	add_summed(s, kVhostStalls, kQueues, "vm:web", minute, 30, 45);
	s.add_counter(kVhostStalls, "system", s.counter(kVhostStalls, "vm:web")->value, "bpf");
	// RX: the free-buffer samples of each queue, the empty ones in slot 0
	// of the histogram and counted apart, as the vhost program keeps them.
	Histogram vm_buffers{Histogram::Layout::LinearLog2, {}};
	double vm_empty = 0, vm_samples = 0;
	for (std::size_t q = 0; q < kQueues.size(); ++q) {
		const double empty = cumulative(minute, 70 + 2 * static_cast<unsigned>(q), 5);
		const double full = cumulative(minute, 71 + 2 * static_cast<unsigned>(q), 40);
		std::vector<std::uint64_t> slots(9, 0);
		slots[0] = static_cast<std::uint64_t>(empty);
		slots[8] = static_cast<std::uint64_t>(full);
		Histogram h = Histogram::from_slots(Histogram::Layout::LinearLog2, slots.data(), slots.size());
		s.add_histogram(kVhostRxBuffers, kQueues[q], h, "bpf");
		s.add_counter(kVhostRxEmpty, kQueues[q], empty, "bpf");
		s.add_counter(kVhostRxSamples, kQueues[q], empty + full, "bpf");
		vm_buffers += h;
		vm_empty += empty;
		vm_samples += empty + full;
	}
	for (const char *scope : {"vm:web", "system"}) {
		s.add_histogram(kVhostRxBuffers, scope, vm_buffers, "bpf");
		s.add_counter(kVhostRxEmpty, scope, vm_empty, "bpf");
		s.add_counter(kVhostRxSamples, scope, vm_samples, "bpf");
	}
	// Thermal headroom: a gauge, the hottest zone's at system (as the
	// thermal source gives it).
	const double pkg = 20 + minute, core = 31.5 - 4 * minute;
	s.add_gauge(kThermalHeadroom, "zone:x86_pkg_temp", pkg, "sysfs");
	s.add_gauge(kThermalHeadroom, "zone:coretemp.0/Core_0", core, "sysfs");
	s.add_gauge(kThermalHeadroom, "system", std::min(pkg, core), "sysfs");
	return s;
}

// --- the promtool test -------------------------------------------------------

std::string number(double v)
{
	char buf[64];
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return std::string(buf, r.ptr);
}

std::string yaml_quoted(const std::string &s)
{
	std::string out = "'";
	for (char c : s)
		out += c == '\'' ? std::string("''") : std::string(1, c);
	return out + "'";
}

// The samples of an exposition, by series ("name{labels}") to value text.
std::map<std::string, std::string> samples(const std::string &text)
{
	std::map<std::string, std::string> out;
	std::size_t pos = 0;
	while (pos < text.size()) {
		std::size_t end = text.find('\n', pos);
		if (end == std::string::npos)
			end = text.size();
		const std::string line = text.substr(pos, end - pos);
		pos = end + 1;
		const std::size_t space = line.rfind(' ');
		if (line.empty() || line[0] == '#' || space == std::string::npos)
			continue;
		out[line.substr(0, space)] = line.substr(space + 1);
	}
	return out;
}

// The label a rule keeps for a scope of its level, e.g. {socket="1"};
// empty when the scope is not of that level.
std::optional<std::string> rule_labels(const std::string &level, const std::string &scope)
{
	if (level == "system")
		return scope == "system" ? std::optional<std::string>("{}") : std::nullopt;
	if (level == "culprit" || level == "culprit_vm") {
		// vm:NAME/culprit:WHO -> {vm="NAME",culprit="WHO"} for a host
		// class; another VM's cell -> its class (the scenario has one such
		// VM, so the class is that cell) or, by name, {vm,culprit_vm}.
		const Scope s = Scope::parse(scope);
		if (s.kind() != Scope::Kind::VmCulprit)
			return std::nullopt;
		const Scope who = s.culprit_scope();
		const bool other_vm = who.kind() == Scope::Kind::Vm && who.vm() != s.vm();
		const std::string vm = "{vm=\"" + std::string(s.vm()) + "\",";
		if (level == "culprit_vm")
			return other_vm ? std::optional<std::string>(vm + "culprit_vm=\"" + std::string(who.vm()) + "\"}")
					: std::nullopt;
		return vm + "culprit=\"" + (other_vm ? std::string("other_vm") : std::string(s.culprit())) + "\"}";
	}
	static const std::map<std::string, std::string> label = {
		{"socket", "socket"}, {"node", "node"}, {"dev", "device"}, {"vm", "vm"}};
	const std::string prefix = level + ":";
	if (scope.rfind(prefix, 0) != 0 || scope.find('/') != std::string::npos)
		return std::nullopt;
	return "{" + label.at(level) + "=\"" + scope.substr(prefix.size()) + "\"}";
}

// PromQL's round(v, step) as Prometheus computes it.
double promql_round(double v, double step)
{
	const double inverse = 1.0 / step;
	return std::floor(v * inverse + 0.5) / inverse;
}

// A rounding step near 1e-9 of v whose rounding boundaries are far from v:
// the last bits in which the two sides' arithmetic differs cannot round
// apart, while any real difference (a scale, a wrong counter) shows.
double rounding_step(double v)
{
	const double magnitude = v == 0 ? 0 : std::floor(std::log10(std::fabs(v)));
	double step = 0;
	for (int digits = 9; digits >= 6; --digits) {
		step = std::pow(10.0, magnitude - digits);
		const double x = v * (1.0 / step) + 0.5;
		const double frac = x - std::floor(x);
		if (frac > 0.1 && frac < 0.9)
			break;
	}
	return step;
}

struct Expected {
	std::string labels;
	double value;
};

// The promql_expr_tests of one rule at one minute: each series rounded to
// its step, and how many series there are (a rule that keeps a label it
// should sum away has more). The PromQL comment shows in promtool's report.
void write_rule_tests(std::string &out, const Compared &c, int minute, const std::vector<Expected> &expected)
{
	const std::string at = "        eval_time: " + std::to_string(minute) + "m\n";
	const std::string record = c.record;
	// Culprit classes are there at 0 too: count the ones derive has.
	const std::string counted = std::string_view(c.level) == "culprit" ? record + " != 0" : record;
	out += "      - expr: " + yaml_quoted("count(" + counted + ") # " + c.id) + "\n" + at;
	out += "        exp_samples:\n          - labels: '{}'\n            value: " +
	       std::to_string(expected.size()) + "\n";
	for (const auto &e : expected) {
		const double step = rounding_step(e.value);
		const std::string selector = e.labels == "{}" ? "" : e.labels;
		out += "      - expr: " +
		       yaml_quoted("round(" + record + selector + ", " + number(step) + ") # " + c.id + ": derive " +
				   number(e.value)) +
		       "\n" + at;
		out += "        exp_samples:\n          - labels: " + yaml_quoted(e.labels) +
		       "\n            value: " + number(promql_round(e.value, step)) + "\n";
	}
}

// Appends the test group of one scenario; counts the comparisons made per rule.
void write_scenario(std::string &out, const Scenario &sc, std::map<std::string, int> &comparisons)
{
	Pmu pmu(sc);
	std::vector<Snapshot> snaps;
	std::map<std::string, std::vector<std::string>> input; // series -> value text per minute
	for (int minute = 0; minute <= kMinutes; ++minute) {
		snaps.push_back(snapshot_at(minute, pmu));
		ExportInput in;
		in.snapshot = &snaps.back();
		in.vms = &vms();
		in.switches.per_cpu = sc.per_cpu;
		in.switches.per_queue = sc.per_queue;
		in.switches.vm_detail = true; // the rules of the detail families too
		in.version = "test";
		for (auto &[series, value] : samples(render_prometheus(in, ExpositionFormat::Prometheus004))) {
			auto &values = input[series];
			values.resize(static_cast<std::size_t>(minute), "_");
			values.push_back(value);
		}
	}
	out += "  # " + std::string(sc.name) + ": " + sc.what + "\n";
	out += "  - interval: 1m\n    input_series:\n";
	for (auto &[series, values] : input) {
		std::string text;
		for (const auto &v : values)
			text += (text.empty() ? "" : " ") + v;
		out += "      - series: " + yaml_quoted(series) + "\n        values: '" + text + "'\n";
	}
	out += "    promql_expr_test:\n";
	for (int minute = 1; minute <= kMinutes; ++minute) {
		const Interval iv = derive(snaps[static_cast<std::size_t>(minute - 1)],
					   snaps[static_cast<std::size_t>(minute)], {});
		for (const Compared &c : kCompared) {
			std::vector<Expected> expected;
			for (const Metric &m : iv.metrics)
				if (m.id == c.id)
					if (auto labels = rule_labels(c.level, m.scope))
						expected.push_back({*labels, m.value * c.to_rule});
			if (expected.empty())
				continue;
			write_rule_tests(out, c, minute, expected);
			comparisons[c.record] += static_cast<int>(expected.size());
		}
	}
}

int promtool_test(const char *rules_path)
{
	std::string out = "# Generated by catalog-rules-test: rules.yml's answers on counter sequences whose\n"
			  "# expected values derive() computed with the catalog's rules.\n";
	out += "rule_files:\n  - " + yaml_quoted(rules_path) + "\nevaluation_interval: 1m\ntests:\n";
	std::map<std::string, int> comparisons;
	for (const Scenario &sc : kScenarios)
		write_scenario(out, sc, comparisons);
	int missing = 0;
	for (const Compared &c : kCompared)
		if (!comparisons[c.record]) {
			std::fprintf(stderr, "catalog-rules-test: no scenario gives %s a value (for %s)\n", c.id,
				     c.record);
			++missing;
		}
	std::fwrite(out.data(), 1, out.size(), stdout);
	return missing ? 1 : 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3 || (std::strcmp(argv[1], "--coverage") && std::strcmp(argv[1], "--promtool-test"))) {
		std::fprintf(stderr, "usage: %s --coverage|--promtool-test RULES.yml\n", argv[0]);
		return 2;
	}
	try {
		if (!std::strcmp(argv[1], "--promtool-test"))
			return promtool_test(argv[2]);
		const auto problems = coverage_problems(argv[2]);
		for (const auto &p : problems)
			std::printf("%s\n", p.c_str());
		return problems.empty() ? 0 : 1;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
		return 2;
	}
}
