#include "fixture_exposition.h"

#include "hwsig/sampler.h"
#include "hwsig/series.h"

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
	in.per_cpu = per_cpu;
	in.version = version;
	return in;
}

} // namespace hwsig_test
