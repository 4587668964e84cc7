// render-prometheus-fixture --root FIXTURE [--per-cpu] [--openmetrics]
// Takes two snapshots of a captured /proc and /sys tree (no PMU, no BPF),
// derives the interval between them for the unavailable list, and prints
// the exposition of the second snapshot: what hwsigd would serve for that
// host. For tests/daemon/test_promtool.sh and by-hand inspection.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "hwsig/derive.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/sampler.h"

int main(int argc, char **argv)
{
	std::string root;
	bool per_cpu = false, om = false;
	for (int i = 1; i < argc; ++i) {
		if (!std::strcmp(argv[i], "--root") && i + 1 < argc) {
			root = argv[++i];
		} else if (!std::strcmp(argv[i], "--per-cpu")) {
			per_cpu = true;
		} else if (!std::strcmp(argv[i], "--openmetrics")) {
			om = true;
		} else {
			std::fprintf(stderr, "usage: %s --root FIXTURE [--per-cpu] [--openmetrics]\n", argv[0]);
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
