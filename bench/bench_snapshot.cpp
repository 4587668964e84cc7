// CPU time of one snapshot of every procfs/sysfs source and of one
// derivation: on this machine, and on fixture trees of 2 and 256 CPUs (so
// the cost per CPU is visible), plus the reader's RSS across 1000 intervals.
#include <cstdio>
#include <ctime>
#include <unistd.h>
#include <string>

#include "hwsig/derive.h"
#include "hwsig/fs.h"
#include "hwsig/sampler.h"
#include "hwsig/vm_discovery.h"

using namespace hwsig;

static double cpu_seconds()
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

static long rss_kib()
{
	auto statm = read_file("/proc/self/statm");
	long pages = 0, resident = 0;
	if (!statm.data || std::sscanf(statm.data->c_str(), "%ld %ld", &pages, &resident) != 2)
		return -1;
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static Sampler procfs_sampler(const std::string &root)
{
	SourceOptions opt;
	opt.root = root;
	opt.pmu = false;
	opt.bpf = false;
	// Discovery is measured on its own below; here it runs once.
	return Sampler(default_sources(opt), root, ~0ull);
}

static double discovery_us(const std::string &root, int rounds)
{
	double t0 = cpu_seconds();
	std::size_t found = 0;
	for (int i = 0; i < rounds; ++i)
		found += discover_vms(root).size();
	(void)found;
	return (cpu_seconds() - t0) / rounds * 1e6;
}

struct Cost {
	double snapshot_us;
	double derive_us;
	std::size_t metrics;
};

static Cost measure(const std::string &root, int rounds)
{
	Sampler sampler = procfs_sampler(root);
	auto claimed = sampler.claimed_ids();
	Snapshot prev = sampler.take();
	double snap_cpu = 0, derive_cpu = 0;
	std::size_t metrics = 0;
	for (int i = 0; i < rounds; ++i) {
		double t0 = cpu_seconds();
		Snapshot cur = sampler.take();
		double t1 = cpu_seconds();
		// Fixture trees do not move: shift time so rates have an interval.
		cur.mono_ns = prev.mono_ns + 1000000000ull;
		Interval iv = derive(prev, cur, claimed);
		double t2 = cpu_seconds();
		snap_cpu += t1 - t0;
		derive_cpu += t2 - t1;
		metrics = iv.metrics.size();
		prev = std::move(cur);
	}
	return {snap_cpu / rounds * 1e6, derive_cpu / rounds * 1e6, metrics};
}

int main()
{
	const std::string fixtures = HWSIG_FIXTURES;
	const int rounds = 200;
	struct Case {
		const char *name;
		std::string root;
		int cpus;
	} cases[] = {
		{"this machine", "/", static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))},
		{"fixture debian12-host", fixtures + "/debian12-host", 2},
		{"fixture xeon-2s-256cpu-8node", fixtures + "/xeon-2s-256cpu-8node", 256},
	};
	std::printf("procfs/sysfs sources: CPU time per interval (mean of %d)\n", rounds);
	double small = 0, large = 0;
	for (const auto &c : cases) {
		if (!path_exists(c.root + "/proc")) {
			std::printf("  %-30s missing fixture tree\n", c.name);
			continue;
		}
		Cost cost = measure(c.root, rounds);
		double scan = discovery_us(c.root, 20);
		std::printf("  %-30s %4d CPUs: snapshot %8.1f us, derive %7.1f us, total %8.1f us (%zu metrics);"
			    " VM discovery %8.1f us per /proc scan (every 5 s: %.1f us per 1 s interval)\n",
			    c.name, c.cpus, cost.snapshot_us, cost.derive_us, cost.snapshot_us + cost.derive_us,
			    cost.metrics, scan, scan / 5);
		if (c.cpus == 2 && c.root != "/")
			small = cost.snapshot_us + cost.derive_us;
		if (c.cpus == 256)
			large = cost.snapshot_us + cost.derive_us;
	}
	if (small > 0 && large > 0)
		std::printf("  ratio 256-CPU / 2-CPU fixture: %.1fx for 128x the CPUs (per-CPU cost %.2f us)\n",
			    large / small, (large - small) / 254.0);

	// Memory: 2000 intervals on this machine, no sleeping. Growth from 1000
	// to 2000 is what "no growth" means; the first intervals warm malloc up.
	Sampler sampler = procfs_sampler("/");
	auto claimed = sampler.claimed_ids();
	Snapshot prev = sampler.take();
	long rss_10 = 0, rss_1000 = 0;
	for (int i = 1; i <= 2000; ++i) {
		Snapshot cur = sampler.take();
		Interval iv = derive(prev, cur, claimed);
		prev = std::move(cur);
		if (i == 10)
			rss_10 = rss_kib();
		if (i == 1000)
			rss_1000 = rss_kib();
	}
	long rss_2000 = rss_kib();
	std::printf("reader RSS: %ld KiB after 10 intervals, %ld after 1000, %ld after 2000"
		    " (growth 10->1000: %ld KiB, 1000->2000: %ld KiB)\n",
		    rss_10, rss_1000, rss_2000, rss_1000 - rss_10, rss_2000 - rss_1000);
	return 0;
}
