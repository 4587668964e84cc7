// render-prometheus-fixture --root FIXTURE [--per-cpu] [--openmetrics|--protobuf] [--synthetic]
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

#include "fixture_exposition.h"
#include "hwsig/render_prometheus.h"

int main(int argc, char **argv)
{
	std::string root;
	bool per_cpu = false, synthetic = false;
	auto fmt = hwsig::ExpositionFormat::Prometheus004;
	for (int i = 1; i < argc; ++i) {
		if (!std::strcmp(argv[i], "--root") && i + 1 < argc) {
			root = argv[++i];
		} else if (!std::strcmp(argv[i], "--per-cpu")) {
			per_cpu = true;
		} else if (!std::strcmp(argv[i], "--openmetrics")) {
			fmt = hwsig::ExpositionFormat::OpenMetrics100;
		} else if (!std::strcmp(argv[i], "--protobuf")) {
			fmt = hwsig::ExpositionFormat::PrometheusProtobuf;
		} else if (!std::strcmp(argv[i], "--synthetic")) {
			synthetic = true;
		} else {
			std::fprintf(stderr, "usage: %s --root FIXTURE [--per-cpu] [--openmetrics|--protobuf] [--synthetic]\n",
				     argv[0]);
			return 2;
		}
	}
	if (root.empty()) {
		std::fprintf(stderr, "%s: --root FIXTURE is required\n", argv[0]);
		return 2;
	}
	try {
		const auto fx = hwsig_test::fixture_export(root, synthetic);
		hwsig::ExportInput in = fx.input(per_cpu, HWSIG_VERSION);
		in.self.push_back({"hwsig_snapshots_total", "Snapshots taken.", true, {}, 2});
		in.self.push_back({"hwsig_render_fixture_root", "The fixture rendered.", false, {{"root", root}}, 1});
		std::string text = hwsig::render_prometheus(in, fmt);
		std::fwrite(text.data(), 1, text.size(), stdout);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
		return 1;
	}
	return 0;
}
