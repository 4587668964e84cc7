#include "fixture_exposition.h"

#include "hwsig/sampler.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

#include <cstdio>

namespace {

// A multiplexed counter's point: counted half the time, scaled by 2.
hwsig::CounterPoint half_counted(double raw, double cpus)
{
	return {2 * raw, {raw, cpus * 4e9, cpus * 2e9, 0}};
}

} // namespace

namespace hwsig_test {

void add_synthetic_series(hwsig::Snapshot &snap, const std::vector<hwsig::Vm> &vms)
{
	using namespace hwsig::series;
	using hwsig::Histogram;
	const std::vector<std::string> cpus = {"cpu:0", "cpu:1"};
	double n = 1000;
	for (const char *c : {kPmuCycles, kPmuInstructions, kPmuStallCycles, kPmuL1dMisses, kPmuL2Misses,
			      kPmuLlcReferences, kPmuLlcMisses, kPmuBranches, kPmuBranchMisses, kPmuDtlbMisses,
			      kPmuItlbMisses}) {
		for (const auto &cpu : cpus)
			snap.add_counter(c, cpu, half_counted(n, 1), "kmod");
		snap.add_counter(c, "system", half_counted(2 * n, 2), "kmod");
		n += 1000;
	}
	for (const char *c : {kImcCasReads, kImcCasWrites}) {
		snap.add_counter(c, "socket:0", hwsig::CounterPoint{100, {100, 4e9, 4e9, 0}}, "perf");
		snap.add_counter(c, "socket:1", hwsig::CounterPoint{200, {200, 4e9, 4e9, 0}}, "perf");
		snap.add_counter(c, "system", hwsig::CounterPoint{300, {300, 8e9, 8e9, 0}}, "perf");
	}
	snap.add_counter("kmod.records_lost", "cpu:0", 1, "kmod");
	snap.add_counter("kmod.records_lost", "system", 1, "kmod");
	Histogram t = Histogram::from_slots(Histogram::Layout::Log2, std::vector<int>(27, 1).data(), 27);
	for (const char *h : {kRunqWaitUs, kRunqWakeupWaitUs, kRunqPreemptWaitUs}) {
		for (const auto &cpu : cpus)
			snap.add_histogram(h, cpu, t, "bpf");
		snap.add_histogram(h, "system", t, "bpf");
		snap.add_histogram(h, "pid:1", t, "bpf");
		for (const auto &vm : vms)
			snap.add_histogram(h, vm.scope(), t, "bpf");
	}
	snap.add_counter(kInvoluntarySwitches, "system", 5, "bpf");
	for (const char *dev : {"dev:sda", "dev:nvme0n1"}) {
		snap.add_counter(kIoReads, dev, 10, "bpf");
		snap.add_counter(kIoWrites, dev, 20, "bpf");
		snap.add_counter(kIoReadBytes, dev, 40960, "bpf");
		snap.add_counter(kIoWriteBytes, dev, 81920, "bpf");
		snap.add_histogram(kIoLatencyUs, dev, t, "bpf");
		snap.add_histogram(kIoQueueUs, dev, t, "bpf");
		snap.add_histogram(kIoSizeKib, dev,
				   Histogram::from_slots(Histogram::Layout::Log2, std::vector<int>(20, 2).data(), 20), "bpf");
		snap.add_histogram(kIoSeekSlots, dev,
				   Histogram::from_slots(Histogram::Layout::Log2, std::vector<int>(48, 3).data(), 48), "bpf");
	}
	Histogram depth = Histogram::from_slots(Histogram::Layout::LinearLog2, std::vector<int>(74, 1).data(), 74);
	const int pid = vms.empty() ? 4242 : vms.front().pid;
	for (const char *q : {":0:rx", ":1:tx"})
		snap.add_histogram(kVhostDepth, "vq:" + std::to_string(pid) + q, depth, "bpf");
	snap.add_counter(kVhostStalls, "vq:" + std::to_string(pid) + ":0:rx", 3, "bpf");
	snap.add_histogram(kVhostDepth, "system", depth, "bpf");
	snap.add_counter(kVhostStalls, "system", 3, "bpf");
}

std::vector<hwsig::Vm> add_guests(hwsig::Snapshot &snap, unsigned n, unsigned vcpus, unsigned devices, unsigned step)
{
	using namespace hwsig::series;
	using hwsig::Histogram;
	const double k = step;
	const Histogram wait = Histogram::from_slots(Histogram::Layout::Log2, std::vector<int>(27, step).data(), 27);
	const Histogram depth =
		Histogram::from_slots(Histogram::Layout::LinearLog2, std::vector<int>(74, step).data(), 74);
	std::vector<hwsig::Vm> vms;
	for (unsigned v = 0; v < n; ++v) {
		char name[16];
		std::snprintf(name, sizeof(name), "vm%03u", v);
		hwsig::Vm vm;
		vm.pid = 10000 + static_cast<int>(v);
		vm.name = name;
		const std::string scope = vm.scope();
		for (unsigned c = 0; c < vcpus; ++c) {
			vm.vcpu_tids.push_back(vm.pid + 1 + static_cast<int>(c));
			const std::string vcpu = scope + "/vcpu:" + std::to_string(c);
			snap.add_counter(kVcpuRunDelayNs, vcpu, 1e6 * k, "procfs");
			snap.add_counter(kVcpuRunNs, vcpu, 1e8 * k, "procfs");
		}
		snap.add_counter(kSchedstatRunDelayNs, scope, 8e6 * k, "procfs");
		snap.add_counter(kSchedstatTimeslices, scope, 800 * k, "procfs");
		snap.add_counter(kSchedstatRunNs, scope, 8e8 * k, "procfs");
		snap.add_gauge(kVmVcpus, scope, vcpus, "procfs");
		for (const char *c : {kPmuCycles, kPmuInstructions, kPmuLlcReferences, kPmuLlcMisses})
			snap.add_counter(c, scope, hwsig::CounterPoint{2e9 * k, {1e9 * k, 2e9 * k, 1e9 * k, 0}}, "perf");
		for (const char *h : {kRunqWaitUs, kRunqWakeupWaitUs, kRunqPreemptWaitUs, kIoLatencyUs})
			snap.add_histogram(h, scope, wait, "bpf");
		snap.add_counter(kInvoluntarySwitches, scope, 50 * k, "bpf");
		for (const char *c : {kIoReads, kIoWrites, kIoReadBytes, kIoWriteBytes})
			snap.add_counter(c, scope, 4096 * k, "bpf");
		snap.add_counter(kIoReads, scope + "/dev:sd0", 4096 * k, "bpf");
		// Every other VM, its own and each host class: the full matrix.
		// Totals differ by culprit so that a top few exists.
		for (unsigned o = 0; o < n; ++o) {
			char other[16];
			std::snprintf(other, sizeof(other), "vm%03u", o);
			const std::string cell = scope + "/culprit:" + hwsig::Scope::vm(other).str();
			snap.add_counter(kVmWaitBehindNs, cell, 1000.0 * ((o + v) % n + 1) * k, "bpf");
			snap.add_counter(kVmPreemptedBy, cell, 1.0 * ((o + v) % n + 1) * k, "bpf");
			// Where: the CPU the two share (the victim's), one read a step.
			snap.add_cpu_counts(kVmWaitBehindCpus, cell, {{v % 256, step}}, "bpf");
		}
		for (const char *who : {"host:kernel", "host:vhost", "host:other", "idle"}) {
			snap.add_counter(kVmWaitBehindNs, scope + "/culprit:" + who, 500 * k, "bpf");
			if (std::string_view(who) != "idle")
				snap.add_counter(kVmPreemptedBy, scope + "/culprit:" + who, 5 * k, "bpf");
		}
		const std::string vq = "vq:" + std::to_string(vm.pid);
		snap.add_histogram(kVhostRxBuffers, vq + ":0:rx", depth, "bpf");
		snap.add_counter(kVhostStalls, vq + ":0:rx", 2 * k, "bpf");
		snap.add_histogram(kVhostDepth, vq + ":1:tx", depth, "bpf");
		snap.add_histogram(kVhostRxBuffers, scope, depth, "bpf");
		snap.add_histogram(kVhostDepth, scope, depth, "bpf");
		snap.add_counter(kVhostStalls, scope, 2 * k, "bpf");
		vms.push_back(std::move(vm));
	}
	if (n > 0) {
		Histogram all = depth;
		for (std::size_t i = 0; i < all.counts.size(); ++i)
			all.counts[i] *= n;
		snap.add_histogram(kVhostRxBuffers, "system", all, "bpf");
		snap.add_histogram(kVhostDepth, "system", all, "bpf");
		snap.add_counter(kVhostStalls, "system", 2 * k * n, "bpf");
	}
	for (unsigned d = 0; d < devices; ++d) {
		const std::string dev = "dev:sd" + std::to_string(d);
		snap.add_counter(kIoReads, dev, 10 * k, "bpf");
		snap.add_counter(kIoWrites, dev, 20 * k, "bpf");
		snap.add_counter(kIoReadBytes, dev, 40960 * k, "bpf");
		snap.add_counter(kIoWriteBytes, dev, 81920 * k, "bpf");
		snap.add_histogram(kIoLatencyUs, dev, wait, "bpf");
		snap.add_histogram(kIoQueueUs, dev, wait, "bpf");
		snap.add_histogram(kIoSizeKib, dev,
				   Histogram::from_slots(Histogram::Layout::Log2, std::vector<int>(20, step).data(), 20), "bpf");
		snap.add_histogram(kIoSeekSlots, dev,
				   Histogram::from_slots(Histogram::Layout::Log2, std::vector<int>(48, step).data(), 48), "bpf");
	}
	return vms;
}

FixtureExport fixture_export(const std::string &root, bool synthetic)
{
	hwsig::SourceOptions opt;
	opt.root = root;
	opt.pmu = false;
	opt.bpf = false;
	hwsig::Sampler sampler(hwsig::default_sources(opt), root, 0);
	hwsig::Snapshot prev = sampler.take();
	FixtureExport out;
	out.snapshot = sampler.take();
	out.vms = sampler.vms();
	if (synthetic)
		add_synthetic_series(out.snapshot, out.vms);
	out.interval = hwsig::derive(prev, out.snapshot, sampler.claimed_ids());
	return out;
}

hwsig::ExportInput FixtureExport::input(bool per_cpu, const std::string &version) const
{
	hwsig::ExportInput in;
	in.snapshot = &snapshot;
	in.unavailable = &interval.unavailable;
	in.vms = &vms;
	in.switches.per_cpu = per_cpu;
	in.version = version;
	return in;
}

} // namespace hwsig_test
