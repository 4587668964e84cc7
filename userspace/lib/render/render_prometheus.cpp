// The Prometheus text (0.0.4) and OpenMetrics 1.0 exposition of a snapshot.
// Documentation/prometheus.rst is the contract: names, units, labels, the
// aggregate-vs-breakdown rule, the histogram bucket and _sum rules.
#include "hwsig/render_prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "hwsig/series.h"

namespace hwsig {

namespace {

enum class Type { Counter, Gauge, Histogram, Info };

using Labels = std::vector<std::pair<std::string, std::string>>;

// How a log2 histogram's slots become buckets in the exported unit.
struct HistSpec {
	double scale = 1;   // exported unit per raw unit: bound * scale / div
	double div = 1;     // 1e6: us -> s (a division: 4/1e6 prints as 4e-06)
	double step = 0;    // resolution of an integer-valued quantity in the exported unit, 0 if continuous
	bool open_last = true; // the BPF program clamps into the last slot: it has no upper bound
};

struct Spec {
	const char *raw;
	Type type;
	const char *name; // without the hwsig_ prefix; hwsig_vm_<name> for vm:NAME scopes
	double scale;     // counters and gauges: value * scale / div, a division
	double div;       // so that 2210 ticks print as 22.1, not 22.100000000000001
	const char *help;
	HistSpec hist{};
	bool pmu = false; // multiplexed hardware counter: exported raw, with hwsig_pmu_{enabled,running}_seconds_total
};

// USER_HZ: /proc/stat counts in 1/100 s on every Linux ABI hwsig runs on
// (the kernel converts from HZ for userspace).
constexpr double kUserHz = 100.0;

const std::vector<Spec> &specs()
{
	using namespace series;
	const HistSpec us{1, 1e6, 0, true};
	static const std::vector<Spec> s = {
		{kCpuStealTicks, Type::Counter, "cpu_steal_seconds_total", 1, kUserHz,
		 "CPU time stolen by the hypervisor (/proc/stat steal, USER_HZ ticks / 100)."},
		{kCpuTotalTicks, Type::Counter, "cpu_time_seconds_total", 1, kUserHz,
		 "CPU time in every mode: user+nice+system+idle+iowait+irq+softirq+steal (/proc/stat)."},
		{kCpuBusyTicks, Type::Counter, "cpu_busy_seconds_total", 1, kUserHz,
		 "CPU time not idle (/proc/stat total less idle and iowait, USER_HZ ticks / 100)."},
		{kNumaLocal, Type::Counter, "numa_local_node_pages_total", 1, 1,
		 "Pages of this node's memory allocated by tasks running on it (numastat local_node)."},
		{kNumaOther, Type::Counter, "numa_other_node_pages_total", 1, 1,
		 "Pages of this node's memory allocated by tasks running on another node (numastat other_node)."},
		{kNumaHit, Type::Counter, "numa_hit_pages_total", 1, 1,
		 "Pages allocated that preferred this node and were served by it (numastat numa_hit)."},
		{kNumaForeign, Type::Counter, "numa_foreign_pages_total", 1, 1,
		 "Pages allocated that preferred this node but were served by another node (numastat numa_foreign)."},
		{kPgmigrateSuccess, Type::Counter, "page_migrations_total", 1, 1,
		 "Pages migrated successfully (/proc/vmstat pgmigrate_success)."},
		{kNumaPagesMigrated, Type::Counter, "numa_pages_migrated_total", 1, 1,
		 "Pages migrated by automatic NUMA balancing (/proc/vmstat numa_pages_migrated)."},
		{kThpFaultAlloc, Type::Counter, "thp_fault_alloc_total", 1, 1,
		 "Page faults served with a transparent huge page (/proc/vmstat thp_fault_alloc)."},
		{kThpFaultFallback, Type::Counter, "thp_fault_fallback_total", 1, 1,
		 "THP page faults that fell back to small pages (/proc/vmstat thp_fault_fallback)."},
		{kHugepageUtilization, Type::Gauge, "hugepage_utilization_ratio", 1, 1,
		 "HugeTLB pages in use or reserved by a mapping / nr_hugepages (surplus included), per page size."},
		{kThpAnonBytes, Type::Gauge, "thp_anon_bytes", 1, 1,
		 "Anonymous memory mapped with transparent huge pages (/proc/meminfo AnonHugePages)."},
		{kResctrlLlcOccupancy, Type::Gauge, "llc_occupancy_bytes", 1, 1,
		 "Last-level cache held by the tasks of a resctrl monitoring group, summed over the L3 domains "
		 "(resctrl llc_occupancy; host: the default group)."},
		{kResctrlMbmTotalBytes, Type::Counter, "mbm_total_bytes_total", 1, 1,
		 "Memory bandwidth bytes of a resctrl monitoring group's tasks, any node, summed over the L3 "
		 "domains (resctrl mbm_total_bytes; host: the default group)."},
		{kResctrlMbmLocalBytes, Type::Counter, "mbm_local_bytes_total", 1, 1,
		 "Memory bandwidth bytes of a resctrl monitoring group's tasks to their own node, summed over "
		 "the L3 domains (resctrl mbm_local_bytes; host: the default group)."},
		{kThermalHeadroom, Type::Gauge, "thermal_headroom_celsius", 1, 1,
		 "Throttle point minus current temperature of a thermal zone or hwmon sensor."},
		{kPsiCpuSome, Type::Gauge, "pressure_cpu_some_avg10_ratio", 1, 100,
		 "Share of the last 10 s some task waited for a CPU (/proc/pressure/cpu some avg10 / 100)."},
		{kPsiMemorySome, Type::Gauge, "pressure_memory_some_avg10_ratio", 1, 100,
		 "Share of the last 10 s some task stalled on memory (/proc/pressure/memory some avg10 / 100)."},
		{kPsiMemoryFull, Type::Gauge, "pressure_memory_full_avg10_ratio", 1, 100,
		 "Share of the last 10 s all non-idle tasks stalled on memory (/proc/pressure/memory full avg10 / 100)."},
		{kPsiIoSome, Type::Gauge, "pressure_io_some_avg10_ratio", 1, 100,
		 "Share of the last 10 s some task stalled on I/O (/proc/pressure/io some avg10 / 100)."},
		{kPsiIoFull, Type::Gauge, "pressure_io_full_avg10_ratio", 1, 100,
		 "Share of the last 10 s all non-idle tasks stalled on I/O (/proc/pressure/io full avg10 / 100)."},
		{kPsiCpuSomeUs, Type::Counter, "pressure_cpu_some_seconds_total", 1, 1e6,
		 "Time some task waited for a CPU (/proc/pressure/cpu some total, us / 1e6)."},
		{kPsiMemorySomeUs, Type::Counter, "pressure_memory_some_seconds_total", 1, 1e6,
		 "Time some task stalled on memory (/proc/pressure/memory some total, us / 1e6)."},
		{kPsiMemoryFullUs, Type::Counter, "pressure_memory_full_seconds_total", 1, 1e6,
		 "Time all non-idle tasks stalled on memory (/proc/pressure/memory full total, us / 1e6)."},
		{kPsiIoSomeUs, Type::Counter, "pressure_io_some_seconds_total", 1, 1e6,
		 "Time some task stalled on I/O (/proc/pressure/io some total, us / 1e6)."},
		{kPsiIoFullUs, Type::Counter, "pressure_io_full_seconds_total", 1, 1e6,
		 "Time all non-idle tasks stalled on I/O (/proc/pressure/io full total, us / 1e6)."},
		{kSchedstatRunDelayNs, Type::Counter, "schedstat_run_delay_seconds_total", 1, 1e9,
		 "Time tasks spent runnable waiting for a CPU (schedstat run_delay; per VM: its vCPU threads)."},
		{kSchedstatTimeslices, Type::Counter, "schedstat_timeslices_total", 1, 1,
		 "Timeslices run (schedstat pcount; per VM: its vCPU threads)."},
		{kVcpuRunDelayNs, Type::Counter, "vcpu_run_delay_seconds_total", 1, 1e9,
		 "Time a vCPU thread spent runnable waiting for a CPU (its schedstat run_delay), per vCPU."},
		{kVcpuRunNs, Type::Counter, "vcpu_run_seconds_total", 1, 1e9,
		 "Time a vCPU thread spent on a CPU (its schedstat), per vCPU."},
		{kVmWaitBehindNs, Type::Counter, "wait_behind_seconds_total", 1, 1e9,
		 "Run-queue wait of a VM's threads, by what last held the CPU before they got it (culprit: "
		 "vm:NAME, host:kernel, host:vhost, host:other, idle)."},
		{kVmPreemptedBy, Type::Counter, "preempted_by_total", 1, 1,
		 "Involuntary switches of a VM's threads, by what took the CPU (culprit as for "
		 "hwsig_vm_wait_behind_seconds_total)."},
		{kPmuCycles, Type::Counter, "cpu_cycles_total", 1, 1,
		 "Core cycles (PMU, as counted).", {}, true},
		{kPmuInstructions, Type::Counter, "cpu_instructions_total", 1, 1,
		 "Instructions retired (PMU, as counted).", {}, true},
		{kPmuStallCycles, Type::Counter, "cpu_stall_cycles_total", 1, 1,
		 "Stall cycles: cycles in which the thread retired no op (Intel UOPS_RETIRED.STALLS, "
		 "AMD retired ops inv cmask=1; PMU, as counted).",
		 {}, true},
		{kPmuL1dMisses, Type::Counter, "cpu_l1d_misses_total", 1, 1,
		 "L1 data cache misses (PMU, as counted).", {}, true},
		{kPmuL2Misses, Type::Counter, "cpu_l2_misses_total", 1, 1, "L2 cache misses (PMU, as counted).",
		 {}, true},
		{kPmuLlcReferences, Type::Counter, "cpu_llc_references_total", 1, 1,
		 "Last-level cache references (PMU, as counted).", {}, true},
		{kPmuLlcMisses, Type::Counter, "cpu_llc_misses_total", 1, 1,
		 "Last-level cache misses (PMU, as counted).", {}, true},
		{kPmuBranches, Type::Counter, "cpu_branches_total", 1, 1,
		 "Branch instructions retired (PMU, as counted).", {}, true},
		{kPmuBranchMisses, Type::Counter, "cpu_branch_misses_total", 1, 1,
		 "Mispredicted branches (PMU, as counted).", {}, true},
		{kPmuDtlbMisses, Type::Counter, "cpu_dtlb_misses_total", 1, 1,
		 "Data TLB misses that caused a page walk (PMU, as counted).", {}, true},
		{kPmuItlbMisses, Type::Counter, "cpu_itlb_misses_total", 1, 1,
		 "Instruction TLB misses that caused a page walk (PMU, as counted).", {}, true},
		{kImcCasReads, Type::Counter, "dram_read_bytes_total", 64, 1,
		 "DRAM bytes read: memory controller CAS read commands x 64 B (uncore PMU, as counted).", {}, true},
		{kImcCasWrites, Type::Counter, "dram_write_bytes_total", 64, 1,
		 "DRAM bytes written: memory controller CAS write commands x 64 B (uncore PMU, as counted).", {}, true},
		{kImcCasReadWrite, Type::Counter, "dram_bytes_total", 64, 1,
		 "DRAM bytes read or written where the PMU cannot split them: CAS commands x 64 B (uncore PMU, as counted).", {},
		 true},
		{kRunqWaitUs, Type::Histogram, "runq_wait_seconds", 1, 1,
		 "Run-queue wait, wakeup or preemption to running (BPF sched; _sum estimated from slot midpoints).", us},
		{kRunqWakeupWaitUs, Type::Histogram, "runq_wakeup_wait_seconds", 1, 1,
		 "Run-queue wait after a wakeup (BPF sched; _sum estimated from slot midpoints).", us},
		{kRunqPreemptWaitUs, Type::Histogram, "runq_preempt_wait_seconds", 1, 1,
		 "Run-queue wait after a preemption (BPF sched; _sum estimated from slot midpoints).", us},
		{kInvoluntarySwitches, Type::Counter, "involuntary_switches_total", 1, 1,
		 "Context switches that preempted a still runnable task (BPF sched)."},
		{kIoReads, Type::Counter, "block_reads_total", 1, 1, "Completed read requests (BPF block)."},
		{kIoWrites, Type::Counter, "block_writes_total", 1, 1, "Completed write requests (BPF block)."},
		{kIoReadBytes, Type::Counter, "block_read_bytes_total", 1, 1, "Bytes of completed read requests (BPF block)."},
		{kIoWriteBytes, Type::Counter, "block_write_bytes_total", 1, 1,
		 "Bytes of completed write requests (BPF block)."},
		{kIoLatencyUs, Type::Histogram, "block_latency_seconds", 1, 1,
		 "Block request issue to completion (BPF block; _sum estimated from slot midpoints).", us},
		{kIoQueueUs, Type::Histogram, "block_queue_seconds", 1, 1,
		 "Block request insert to issue, time queued (BPF block; _sum estimated from slot midpoints).", us},
		{kIoSizeKib, Type::Histogram, "block_request_size_bytes", 1, 1,
		 "Issued block request size (BPF block; _sum estimated from slot midpoints).", {1024, 1, 1, true}},
		{kIoSeekSlots, Type::Histogram, "block_seek_distance_bytes", 1, 1,
		 "Gap from the previous request's end, 512 B sectors (BPF block; _sum estimated from slot midpoints).",
		 {512, 1, 512, true}},
		{kVhostDepth, Type::Histogram, "vhost_queue_depth", 1, 1,
		 "TX: packets the guest made available and vhost has not yet taken, sampled at each handle_tx "
		 "(BPF vhost; _sum estimated from slot midpoints).",
		 {1, 1, 1, false}},
		{kVhostRxBuffers, Type::Histogram, "vhost_rx_buffers", 1, 1,
		 "RX: receive buffers the guest had posted, sampled at each handle_rx; low is trouble "
		 "(BPF vhost; _sum estimated from slot midpoints).",
		 {1, 1, 1, false}},
		{kVhostStalls, Type::Counter, "vhost_ring_stalls_total", 1, 1,
		 "handle_rx invocations that found no guest receive buffer (BPF vhost)."},
	};
	return s;
}

// --- formatting ------------------------------------------------------------

std::string number(double v)
{
	if (std::isnan(v))
		return "NaN";
	if (std::isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	char buf[64];
	// Whole numbers (counters, bucket counts) in full, not as 1e+06.
	if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
		auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(v));
		return std::string(buf, r.ptr);
	}
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return std::string(buf, r.ptr);
}

// Length of the valid UTF-8 sequence at s[i], 0 if invalid (overlong,
// surrogate, above U+10FFFF or truncated).
std::size_t utf8_length(std::string_view s, std::size_t i)
{
	const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
	const unsigned char c = b(i);
	if (c < 0x80)
		return 1;
	std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
	if (n == 0 || c > 0xF4 || i + n > s.size())
		return 0;
	for (std::size_t k = 1; k < n; ++k)
		if ((b(i + k) & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0) || (c == 0xF0 && b(i + 1) < 0x90) ||
	    (c == 0xF4 && b(i + 1) >= 0x90))
		return 0;
	return n;
}

// Label values and HELP text: the escapes of the format, and every byte
// that is not valid UTF-8 (a VM name from a command line, a sensor label)
// as U+FFFD, because both formats require UTF-8 and Prometheus rejects the
// whole scrape otherwise.
void escape_into(std::string &out, std::string_view s, bool quote)
{
	for (std::size_t i = 0; i < s.size(); ++i) {
		const char c = s[i];
		if (static_cast<unsigned char>(c) >= 0x80) {
			std::size_t n = utf8_length(s, i);
			if (n == 0) {
				out += "\xEF\xBF\xBD";
			} else {
				out.append(s, i, n);
				i += n - 1;
			}
			continue;
		}
		switch (c) {
		case '\\': out += "\\\\"; break;
		case '\n': out += "\\n"; break;
		case '"':
			if (quote) {
				out += "\\\"";
				break;
			}
			[[fallthrough]];
		default: out.push_back(c);
		}
	}
}

bool valid_name(std::string_view n, bool metric)
{
	if (n.empty())
		return false;
	for (std::size_t i = 0; i < n.size(); ++i) {
		char c = n[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':') ||
			  (i > 0 && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

std::string label_text(const Labels &labels)
{
	std::string out;
	for (const auto &[k, v] : labels) {
		if (!out.empty())
			out += ',';
		out += k;
		out += "=\"";
		escape_into(out, v, true);
		out += '"';
	}
	return out;
}

// Sort key of a series: its label text with every run of digits left-padded,
// so cpu="2" sorts before cpu="10".
std::string sort_key(const std::string &text)
{
	// The padded text, then the text itself: cpu="07" and cpu="7" stay apart.
	std::string key;
	for (std::size_t i = 0; i < text.size();) {
		if (text[i] >= '0' && text[i] <= '9') {
			std::size_t j = i;
			while (j < text.size() && text[j] >= '0' && text[j] <= '9')
				++j;
			if (j - i < 12)
				key.append(12 - (j - i), '0');
			key.append(text, i, j - i);
			i = j;
		} else {
			key.push_back(text[i++]);
		}
	}
	key.push_back('\0');
	key += text;
	return key;
}

bool ends_with(std::string_view s, std::string_view suffix)
{
	return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// --- families ----------------------------------------------------------------

struct Family {
	Type type = Type::Gauge;
	std::string help;
	std::map<std::string, std::string> series; // sort key -> sample lines
};

class Exposition {
public:
	// name: the 0.0.4 name (a counter's ends in _total, an info's in _info).
	Family *family(const std::string &name, Type type, std::string_view help)
	{
		auto [it, inserted] = families_.try_emplace(name);
		if (inserted) {
			it->second.type = type;
			it->second.help = help;
		} else if (it->second.type != type) {
			return nullptr; // one name, two types: the first one wins
		}
		return &it->second;
	}

	void sample(const std::string &name, Type type, std::string_view help, const Labels &labels, double value)
	{
		Family *f = family(name, type, help);
		if (!f)
			return;
		std::string lt = label_text(labels);
		auto [it, inserted] = f->series.try_emplace(sort_key(lt));
		if (!inserted)
			return; // no duplicate series
		std::string &s = it->second;
		s = name;
		if (!lt.empty())
			s += "{" + lt + "}";
		s += ' ';
		s += number(value);
		s += '\n';
	}

	// The buckets of one family: every series has the same ones.
	struct Buckets {
		std::vector<std::string> le; // finite bounds, as printed
		std::vector<double> mid;     // per slot: its value in the _sum estimate
	};

	static Buckets buckets(Histogram::Layout layout, std::size_t slots, const HistSpec &spec)
	{
		Buckets b;
		Histogram h;
		h.layout = layout;
		for (std::size_t i = 0; i < slots; ++i) {
			auto [low, high] = h.slot_range(i);
			const double lo = low * spec.scale / spec.div;
			if (spec.open_last && i + 1 == slots) {
				// Clamped slot: no upper bound, only in +Inf; its
				// values count at the slot's lower bound in _sum.
				b.mid.push_back(lo);
				break;
			}
			const double le = high * spec.scale / spec.div - spec.step;
			b.le.push_back(number(le));
			b.mid.push_back((lo + le) / 2);
		}
		return b;
	}

	void histogram(const std::string &name, std::string_view help, const Labels &labels, const Histogram &h,
		       const Buckets &b)
	{
		Family *f = family(name, Type::Histogram, help);
		if (!f)
			return;
		std::string lt = label_text(labels);
		auto [it, inserted] = f->series.try_emplace(sort_key(lt));
		if (!inserted)
			return;
		std::string &s = it->second;
		const std::string prefix = name + "_bucket{" + lt + (lt.empty() ? "" : ",") + "le=\"";
		s.reserve((prefix.size() + 16) * (b.le.size() + 1) + 2 * (name.size() + lt.size() + 32));
		std::uint64_t cum = 0;
		double sum = 0;
		for (std::size_t i = 0; i < b.mid.size(); ++i) {
			const std::uint64_t c = i < h.counts.size() ? h.counts[i] : 0;
			cum += c;
			sum += static_cast<double>(c) * b.mid[i];
			if (i < b.le.size()) {
				s += prefix;
				s += b.le[i];
				s += "\"} ";
				s += std::to_string(cum);
				s += '\n';
			}
		}
		std::string braces = lt.empty() ? "" : "{" + lt + "}";
		s += prefix + "+Inf\"} " + std::to_string(cum) + "\n";
		s += name + "_sum" + braces + " " + number(sum) + "\n";
		s += name + "_count" + braces + " " + std::to_string(cum) + "\n";
	}

	std::string text(ExpositionFormat fmt) const
	{
		const bool om = fmt == ExpositionFormat::OpenMetrics100;
		std::string out;
		std::size_t size = 0;
		for (const auto &[name, f] : families_)
			for (const auto &[k, s] : f.series)
				size += s.size();
		out.reserve(size + families_.size() * 160 + 16);
		for (const auto &[name, f] : families_) {
			if (f.series.empty())
				continue;
			std::string fam = name;
			if (om && f.type == Type::Counter && ends_with(fam, "_total"))
				fam.resize(fam.size() - 6);
			if (om && f.type == Type::Info && ends_with(fam, "_info"))
				fam.resize(fam.size() - 5);
			const char *type = "gauge";
			switch (f.type) {
			case Type::Counter: type = "counter"; break;
			case Type::Histogram: type = "histogram"; break;
			case Type::Info: type = om ? "info" : "gauge"; break;
			case Type::Gauge: break;
			}
			out += "# HELP " + fam + " ";
			escape_into(out, f.help, om);
			out += "\n# TYPE " + fam + " " + type + "\n";
			if (om) {
				for (const char *unit : {"seconds", "bytes", "celsius", "ratio"})
					if (ends_with(fam, std::string("_") + unit)) {
						out += "# UNIT " + fam + " " + unit + "\n";
						break;
					}
			}
			for (const auto &[k, s] : f.series)
				out += s;
		}
		if (om)
			out += "# EOF\n";
		return out;
	}

private:
	std::map<std::string, Family> families_;
};

// --- scopes -> labels --------------------------------------------------------

enum class ScopeKind { System, Cpu, Breakdown, NodeHugepages, Vm, VmVcpu, VmCulprit, Vq, Skip };

struct ScopeLabels {
	ScopeKind kind = ScopeKind::Skip;
	Labels labels;
};

std::string vm_name_of(int pid, const std::vector<Vm> *vms)
{
	if (vms)
		for (const Vm &vm : *vms)
			if (vm.pid == pid)
				return vm.name;
	return "pid-" + std::to_string(pid);
}

// "vq:<pid>:<index>:<rx|tx>" -> {vm, queue "<index>-<dir>"}
std::optional<std::pair<std::string, std::string>> vq_labels(std::string_view rest, const std::vector<Vm> *vms)
{
	auto c1 = rest.find(':');
	if (c1 == std::string_view::npos)
		return std::nullopt;
	auto c2 = rest.find(':', c1 + 1);
	if (c2 == std::string_view::npos)
		return std::nullopt;
	int pid = 0;
	auto pid_s = rest.substr(0, c1);
	auto [p, ec] = std::from_chars(pid_s.data(), pid_s.data() + pid_s.size(), pid);
	if (ec != std::errc() || p != pid_s.data() + pid_s.size())
		return std::nullopt;
	std::string queue(rest.substr(c1 + 1, c2 - c1 - 1));
	queue += '-';
	queue += rest.substr(c2 + 1);
	return std::make_pair(vm_name_of(pid, vms), queue);
}

ScopeLabels scope_labels(std::string_view scope, const std::vector<Vm> *vms)
{
	ScopeLabels out;
	if (scope == "system") {
		out.kind = ScopeKind::System;
		return out;
	}
	const auto colon = scope.find(':');
	if (colon == std::string_view::npos)
		return out;
	const std::string_view kind = scope.substr(0, colon);
	const std::string_view v = scope.substr(colon + 1);
	const std::string value(v);
	if (kind == "cpu") {
		out = {ScopeKind::Cpu, {{"cpu", value}}};
	} else if (kind == "socket") {
		out = {ScopeKind::Breakdown, {{"socket", value}}};
	} else if (kind == "node") {
		constexpr std::string_view huge = "/hugepages:";
		auto slash = v.find(huge);
		if (slash == std::string_view::npos)
			out = {ScopeKind::Breakdown, {{"node", value}}};
		else
			out = {ScopeKind::NodeHugepages,
			       {{"node", std::string(v.substr(0, slash))},
				{"size", std::string(v.substr(slash + huge.size()))}}};
	} else if (kind == "hugepages") {
		out = {ScopeKind::Breakdown, {{"size", value}}};
	} else if (kind == "zone") {
		out = {ScopeKind::Breakdown, {{"zone", value}}};
	} else if (kind == "dev") {
		out = {ScopeKind::Breakdown, {{"device", value}}};
	} else if (kind == "vm") {
		constexpr std::string_view vcpu = "/vcpu:";
		auto slash = v.rfind(vcpu);
		auto culprit = v.find(series::kCulpritSep);
		if (v.find("/dev:") != std::string_view::npos)
			out = {}; // a VM's requests per disk: stat and JSON only (prometheus.rst)
		else if (culprit != std::string_view::npos)
			out = {ScopeKind::VmCulprit,
			       {{"vm", std::string(v.substr(0, culprit))},
				{"culprit", std::string(v.substr(culprit + series::kCulpritSep.size()))}}};
		else if (slash == std::string_view::npos)
			out = {ScopeKind::Vm, {{"vm", value}}};
		else
			out = {ScopeKind::VmVcpu,
			       {{"vm", std::string(v.substr(0, slash))}, {"vcpu", std::string(v.substr(slash + vcpu.size()))}}};
	} else if (kind == "vq") {
		if (auto q = vq_labels(v, vms))
			out = {ScopeKind::Vq, {{"vm", q->first}, {"queue", q->second}}};
	}
	return out; // pid:N and anything unknown: Skip
}

// The scope label of an unavailable note: cpu:N folds into cpu:* without
// per_cpu, pid:N is left out (never a pid), vq:PID:I:D names the VM instead.
std::optional<std::string> note_scope(const std::string &scope, const ExportInput &in)
{
	if (scope.rfind("cpu:", 0) == 0)
		return in.per_cpu ? scope : std::string("cpu:*");
	if (scope.rfind("pid:", 0) == 0)
		return std::nullopt;
	if (scope.rfind("vq:", 0) == 0) {
		auto q = vq_labels(std::string_view(scope).substr(3), in.vms);
		if (!q)
			return scope;
		auto dash = q->second.rfind('-');
		return "vq:" + q->first + ":" + q->second.substr(0, dash) + ":" + q->second.substr(dash + 1);
	}
	return scope;
}

// The scopes of one raw series that are exported, by the rule of
// Documentation/prometheus.rst: a breakdown (cpu:N with per_cpu, socket,
// node, zone, hugepages size, device, virtqueue) replaces its aggregate
// (system); vm:NAME, vm:NAME/vcpu:N and vm:NAME/culprit:WHO go to the
// hwsig_vm_* family (a per-vCPU series only with its vCPUs: vm_scope
// false); pid:N never.
template <typename P> struct Selected {
	std::vector<std::pair<Labels, const P *>> host, vm, node_hugepages;
};

template <typename P>
Selected<P> select(const Series<P> &s, const ExportInput &in, bool vm_family, bool vm_scope = true)
{
	Selected<P> out;
	std::vector<std::pair<Labels, const P *>> system, breakdown;
	for (const auto &[scope, point] : s.by_scope) {
		if (!in.per_cpu && scope.rfind("cpu:", 0) == 0)
			continue; // the common case on a big host: skip before any allocation
		ScopeLabels sl = scope_labels(scope, in.vms);
		switch (sl.kind) {
		case ScopeKind::System: system.push_back({{}, &point}); break;
		case ScopeKind::Cpu:
			if (in.per_cpu)
				breakdown.push_back({std::move(sl.labels), &point});
			break;
		case ScopeKind::Breakdown:
		case ScopeKind::Vq: breakdown.push_back({std::move(sl.labels), &point}); break;
		case ScopeKind::NodeHugepages: out.node_hugepages.push_back({std::move(sl.labels), &point}); break;
		case ScopeKind::Vm:
			// A per-vCPU series' vm:NAME point is a mean, not a count:
			// the vCPUs' own counters are exported instead.
			if (vm_family && vm_scope)
				out.vm.push_back({std::move(sl.labels), &point});
			break;
		case ScopeKind::VmVcpu:
		case ScopeKind::VmCulprit:
			if (vm_family)
				out.vm.push_back({std::move(sl.labels), &point});
			break;
		case ScopeKind::Skip: break;
		}
	}
	out.host = breakdown.empty() ? std::move(system) : std::move(breakdown);
	return out;
}

const char *kEnabledHelp = "Time a PMU counter was enabled (perf time_enabled), summed over the counters "
			   "of its labels.";
const char *kRunningHelp = "Time a PMU counter was actually counting (perf time_running); below "
			   "hwsig_pmu_enabled_seconds_total it was multiplexed: scale its rate by "
			   "rate(enabled) / rate(running).";

// A multiplexed counter is exported as counted, with its enabled and
// running times: PromQL scales any window by that window's own times, which
// a scaled cumulative count (pulled toward the lifetime's running fraction)
// could not give.
void add_counter(Exposition &ex, const Spec &spec, const Series<CounterPoint> &s, const ExportInput &in)
{
	const std::string host = std::string("hwsig_") + spec.name;
	const std::string vm = std::string("hwsig_vm_") + spec.name;
	auto sel = select(s, in, std::string_view(spec.raw) != series::kVhostStalls,
			  std::string_view(spec.raw) != series::kVcpuRunDelayNs &&
				  std::string_view(spec.raw) != series::kVcpuRunNs);
	for (const auto *group : {&sel.host, &sel.vm}) {
		const std::string &name = group == &sel.host ? host : vm;
		for (const auto &[labels, p] : *group) {
			const double count = spec.pmu ? p->mux.raw : p->value;
			ex.sample(name, Type::Counter, spec.help, labels, count * spec.scale / spec.div);
			if (spec.pmu) {
				Labels l{{"counter", name}};
				l.insert(l.end(), labels.begin(), labels.end());
				ex.sample("hwsig_pmu_enabled_seconds_total", Type::Counter, kEnabledHelp, l,
					  p->mux.enabled_ns / 1e9);
				ex.sample("hwsig_pmu_running_seconds_total", Type::Counter, kRunningHelp, l,
					  p->mux.running_ns / 1e9);
			}
		}
	}
}

void add_gauge(Exposition &ex, const Spec &spec, const Series<double> &s, const ExportInput &in)
{
	std::string name = std::string("hwsig_") + spec.name;
	auto sel = select(s, in, true);
	for (const auto &[labels, p] : sel.host)
		ex.sample(name, Type::Gauge, spec.help, labels, *p * spec.scale / spec.div);
	for (const auto &[labels, p] : sel.vm)
		ex.sample(std::string("hwsig_vm_") + spec.name, Type::Gauge, spec.help, labels, *p * spec.scale / spec.div);
	if (!sel.node_hugepages.empty()) {
		const std::string node = "hwsig_node_" + std::string(spec.name);
		for (const auto &[labels, p] : sel.node_hugepages)
			ex.sample(node, Type::Gauge, std::string(spec.help) + " Per NUMA node.", labels, *p * spec.scale / spec.div);
	}
}

void add_histogram(Exposition &ex, const Spec &spec, const Series<Histogram> &s, const ExportInput &in)
{
	std::size_t slots = 0;
	for (const auto &[scope, h] : s.by_scope)
		slots = std::max(slots, h.counts.size());
	if (slots == 0)
		return;
	auto sel = select(s, in,
			  std::string_view(spec.raw) != series::kVhostDepth &&
				  std::string_view(spec.raw) != series::kVhostRxBuffers);
	if (sel.host.empty() && sel.vm.empty())
		return;
	const auto b = Exposition::buckets(s.by_scope.begin()->second.layout, slots, spec.hist);
	for (const auto &[labels, h] : sel.host)
		ex.histogram(std::string("hwsig_") + spec.name, spec.help, labels, *h, b);
	for (const auto &[labels, h] : sel.vm)
		ex.histogram(std::string("hwsig_vm_") + spec.name, spec.help, labels, *h, b);
}

} // namespace

std::string render_prometheus(const ExportInput &in, ExpositionFormat fmt)
{
	Exposition ex;
	if (const Snapshot *snap = in.snapshot) {
		for (const Spec &spec : specs()) {
			switch (spec.type) {
			case Type::Counter:
				if (auto it = snap->counters().find(spec.raw); it != snap->counters().end())
					add_counter(ex, spec, it->second, in);
				break;
			case Type::Gauge:
				if (auto it = snap->gauges().find(spec.raw); it != snap->gauges().end())
					add_gauge(ex, spec, it->second, in);
				break;
			case Type::Histogram:
				if (auto it = snap->histograms().find(spec.raw); it != snap->histograms().end())
					add_histogram(ex, spec, it->second, in);
				break;
			case Type::Info: break;
			}
		}
	}
	if (in.unavailable) {
		for (const auto &note : *in.unavailable) {
			auto scope = note_scope(note.scope, in);
			if (!scope)
				continue;
			ex.sample("hwsig_unavailable", Type::Gauge,
				  "A catalog metric (or one scope of it) that cannot be measured on this host, and why.",
				  {{"metric", note.id}, {"scope", *scope}, {"reason", note.reason}}, 1);
		}
	}
	ex.sample("hwsig_build_info", Type::Info, "The hwsig version exporting these metrics.",
		  {{"version", in.version}}, 1);
	if (in.vms)
		for (const Vm &vm : *in.vms)
			ex.sample("hwsig_vm_info", Type::Info,
				  "A QEMU/KVM guest on this host: its name (the vm label elsewhere) and QEMU pid.",
				  {{"vm", vm.name}, {"pid", std::to_string(vm.pid)}}, 1);
	for (const SelfMetric &m : in.self) {
		if (!valid_name(m.name, true) || m.counter != ends_with(m.name, "_total"))
			continue;
		bool labels_ok = std::all_of(m.labels.begin(), m.labels.end(), [](const auto &l) {
			return valid_name(l.first, false) && l.first.rfind("__", 0) != 0;
		});
		if (!labels_ok)
			continue;
		ex.sample(m.name, m.counter ? Type::Counter : Type::Gauge, m.help, m.labels, m.value);
	}
	return ex.text(fmt);
}

std::string_view content_type(ExpositionFormat fmt)
{
	return fmt == ExpositionFormat::OpenMetrics100 ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
						       : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat negotiate_format(std::string_view accept)
{
	// Accept: a comma-separated list of media ranges with parameters.
	std::size_t pos = 0;
	while (pos <= accept.size()) {
		std::size_t end = accept.find(',', pos);
		if (end == std::string_view::npos)
			end = accept.size();
		std::string_view range = accept.substr(pos, end - pos);
		pos = end + 1;
		auto trim = [](std::string_view s) {
			while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
				s.remove_prefix(1);
			while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
				s.remove_suffix(1);
			return s;
		};
		auto lower = [](std::string_view s) {
			std::string o(s);
			for (char &c : o)
				if (c >= 'A' && c <= 'Z')
					c = static_cast<char>(c - 'A' + 'a');
			return o;
		};
		std::size_t semi = range.find(';');
		std::string type = lower(trim(range.substr(0, semi)));
		if (type != "application/openmetrics-text")
			continue;
		bool version_ok = true, q_zero = false;
		while (semi != std::string_view::npos) {
			std::size_t next = range.find(';', semi + 1);
			std::string_view param = trim(range.substr(semi + 1, next == std::string_view::npos
										      ? std::string_view::npos
										      : next - semi - 1));
			semi = next;
			auto eq = param.find('=');
			if (eq == std::string_view::npos)
				continue;
			std::string key = lower(trim(param.substr(0, eq)));
			std::string_view val = trim(param.substr(eq + 1));
			if (val.size() >= 2 && val.front() == '"' && val.back() == '"')
				val = val.substr(1, val.size() - 2);
			if (key == "version")
				version_ok = val == "1.0.0";
			else if (key == "q")
				q_zero = std::strtod(std::string(val).c_str(), nullptr) <= 0;
		}
		if (version_ok && !q_zero)
			return ExpositionFormat::OpenMetrics100;
	}
	return ExpositionFormat::Prometheus004;
}

} // namespace hwsig
