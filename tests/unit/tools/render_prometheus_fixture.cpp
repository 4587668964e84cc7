// render-prometheus-fixture --root FIXTURE [--per-cpu] [--openmetrics] [--synthetic]
// Takes two snapshots of a captured /proc and /sys tree (no PMU, no BPF),
// derives the interval between them for the unavailable list, and prints
// the exposition of the second snapshot: what hwsigd would serve for that
// host. --synthetic adds made-up PMU, uncore, kmod and BPF series (the
// fixtures cannot produce them) so every family shape is exercised. For
// tests/daemon/test_promtool.sh and by-hand inspection.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/sampler.h"
#include "hwsig/series.h"

namespace {

// A multiplexed counter's point: counted half the time, scaled by 2.
hwsig::CounterPoint half_counted(double raw, double cpus)
{
	return {2 * raw, {raw, cpus * 4e9, cpus * 2e9, 0}};
}

void add_synthetic(hwsig::Snapshot &snap, const std::vector<hwsig::Vm> &vms)
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

} // namespace

int main(int argc, char **argv)
{
	std::string root;
	bool per_cpu = false, om = false, synthetic = false;
	for (int i = 1; i < argc; ++i) {
		if (!std::strcmp(argv[i], "--root") && i + 1 < argc) {
			root = argv[++i];
		} else if (!std::strcmp(argv[i], "--per-cpu")) {
			per_cpu = true;
		} else if (!std::strcmp(argv[i], "--openmetrics")) {
			om = true;
		} else if (!std::strcmp(argv[i], "--synthetic")) {
			synthetic = true;
		} else {
			std::fprintf(stderr, "usage: %s --root FIXTURE [--per-cpu] [--openmetrics] [--synthetic]\n", argv[0]);
			return 2;
		}
	}
	if (root.empty()) {
		std::fprintf(stderr, "%s: --root FIXTURE is required\n", argv[0]);
		return 2;
	}
	try {
		hwsig::SourceOptions opt;
		opt.root = root;
		opt.pmu = false;
		opt.bpf = false;
		hwsig::Sampler sampler(hwsig::default_sources(opt), root, 0);
		hwsig::Snapshot prev = sampler.take();
		hwsig::Snapshot cur = sampler.take();
		if (synthetic)
			add_synthetic(cur, sampler.vms());
		hwsig::Interval iv = hwsig::derive(prev, cur, sampler.claimed_ids());
		hwsig::ExportInput in;
		in.snapshot = &cur;
		in.unavailable = &iv.unavailable;
		in.vms = &sampler.vms();
		in.per_cpu = per_cpu;
		in.version = HWSIG_VERSION;
		in.self.push_back({"hwsig_snapshots_total", "Snapshots taken.", true, {}, 2});
		in.self.push_back({"hwsig_render_fixture_root", "The fixture rendered.", false, {{"root", root}}, 1});
		std::string text = hwsig::render_prometheus(
			in, om ? hwsig::ExpositionFormat::OpenMetrics100 : hwsig::ExpositionFormat::Prometheus004);
		std::fwrite(text.data(), 1, text.size(), stdout);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
		return 1;
	}
	return 0;
}
