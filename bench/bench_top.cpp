// CPU time of one frame of 'hwsigctl top' on a big host: the 256-CPU
// fixture tree with 0, 50, 100 and 200 VMs of 8 vCPUs (the unit tests'
// add_guests()). The scheduler program blames waits on at most 64 VMs
// (HWSIG_SCHED_MAX_VMS): the culprit matrix of the VMs past the 64th is
// left out, as the sources leave it; the full matrix of every pair is
// measured too, for when that limit grows. A frame is what top pays every
// interval once the snapshot is in: derive, the rows, the sort, the filter
// and the table of a 200x50 terminal. Target: <= 50 ms of CPU per frame
// with 200 VMs (issue 30).
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

#include "fixture_exposition.h"
#include "hwsig/derive.h"
#include "hwsig/fs.h"
#include "hwsig/sampler.h"
#include "hwsig/scope.h"
#include "hwsig/top_view.h"

using namespace hwsig;

namespace {

constexpr double kTargetMs = 50;
constexpr unsigned kVcpus = 8, kDisks = 10, kMatrixVms = 64;

double cpu_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Host {
	Snapshot prev, cur;
	std::vector<Vm> vms;
	std::vector<std::string> claimed;
};

// add_guests() names VMs vm000..: their index.
unsigned vm_index(std::string_view name)
{
	return static_cast<unsigned>(std::stoul(std::string(name.substr(2))));
}

// Whether the sources would report this scope: no culprit pair of a VM past
// the matrix's capacity (full_matrix: every pair).
bool reported(const std::string &scope, bool full_matrix)
{
	const Scope s = Scope::parse(scope);
	if (full_matrix || s.kind() != Scope::Kind::VmCulprit)
		return true;
	const Scope who = s.culprit_scope();
	return vm_index(s.vm()) < kMatrixVms && (who.kind() != Scope::Kind::Vm || vm_index(who.vm()) < kMatrixVms);
}

std::vector<Vm> add_guests(Snapshot &snap, unsigned guests, unsigned step, bool full_matrix)
{
	Snapshot all;
	std::vector<Vm> vms = hwsig_test::add_guests(all, guests, kVcpus, kDisks, step);
	for (const auto &[name, series] : all.counters())
		for (const auto &[scope, point] : series.by_scope)
			if (reported(scope, full_matrix))
				snap.add_counter(name, scope, point, series.source);
	for (const auto &[name, series] : all.gauges())
		for (const auto &[scope, value] : series.by_scope)
			snap.add_gauge(name, scope, value, series.source);
	for (const auto &[name, series] : all.histograms())
		for (const auto &[scope, h] : series.by_scope)
			snap.add_histogram(name, scope, h, series.source);
	for (const auto &[name, series] : all.cpu_counts())
		for (const auto &[scope, counts] : series.by_scope)
			if (reported(scope, full_matrix))
				snap.add_cpu_counts(name, scope, counts, series.source);
	return vms;
}

Host big_host(const std::string &root, unsigned guests, bool full_matrix)
{
	SourceOptions opt;
	opt.root = root;
	opt.pmu = false;
	opt.bpf = false;
	Sampler sampler(default_sources(opt), root, 0);
	Host h;
	h.claimed = sampler.claimed_ids();
	h.prev = sampler.take();
	h.cur = sampler.take();
	// Fixture trees do not move: one second between the two snapshots.
	h.cur.mono_ns = h.prev.mono_ns + 1000000000ull;
	(void)add_guests(h.prev, guests, 1, full_matrix);
	h.vms = add_guests(h.cur, guests, 2, full_matrix);
	return h;
}

struct FrameCost {
	double derive_ms = 0, rows_ms = 0, sort_ms = 0, render_ms = 0; // sort: and filter
	std::size_t metrics = 0, lines = 0;
	double total() const { return derive_ms + rows_ms + sort_ms + render_ms; }
};

FrameCost frame_cost(const Host &h, int rounds)
{
	const TopColumn &sort = *find_top_column("WAIT%");
	TopTableOptions table;
	table.title = "hwsig top";
	table.sort = &sort;
	table.width = 200;
	table.height = 50;
	table.footer = "keys";
	table.more_hint = "more";
	const VmNameFilter filter;
	FrameCost c;
	for (int i = 0; i < rounds; ++i) {
		double t0 = cpu_ms();
		Interval iv = derive(h.prev, h.cur, h.claimed);
		double t1 = cpu_ms();
		std::vector<TopRow> rows = top_rows(iv, h.vms);
		double t2 = cpu_ms();
		sort_top_rows(rows, sort, false);
		filter_top_rows(rows, filter);
		double t3 = cpu_ms();
		std::string text = render_top_table(rows, table);
		double t4 = cpu_ms();
		c.derive_ms += t1 - t0;
		c.rows_ms += t2 - t1;
		c.sort_ms += t3 - t2;
		c.render_ms += t4 - t3;
		c.metrics = iv.metrics.size();
		c.lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
	}
	c.derive_ms /= rounds;
	c.rows_ms /= rounds;
	c.sort_ms /= rounds;
	c.render_ms /= rounds;
	return c;
}

} // namespace

int main()
{
	const std::string root = std::string(HWSIG_FIXTURES) + "/xeon-2s-256cpu-8node";
	if (!path_exists(root + "/proc")) {
		std::printf("top frame: missing fixture tree %s\n", root.c_str());
		return 1;
	}
	const int rounds = 5;
	std::printf("hwsigctl top: CPU per frame on the 256-CPU fixture, VMs of %u vCPUs (mean of %d;"
		    " derive + rows + sort and filter + table of 200x50)\n", kVcpus, rounds);
	FrameCost at200[2];
	for (bool full : {false, true}) {
		std::printf(full ? " the full culprit matrix (every pair of VMs):\n"
				 : " culprits of the first %u VMs (the scheduler program's capacity):\n",
			    kMatrixVms);
		for (unsigned guests : {0u, 50u, 100u, 200u}) {
			const Host h = big_host(root, guests, full);
			const FrameCost c = frame_cost(h, rounds);
			std::printf("  %3u VMs: %8.2f ms (derive %7.2f, rows %6.2f, sort %5.2f, table %5.2f);"
				    " %zu metrics, %zu lines\n",
				    guests, c.total(), c.derive_ms, c.rows_ms, c.sort_ms, c.render_ms, c.metrics, c.lines);
			at200[full] = c;
		}
	}
	const bool ok = at200[0].total() <= kTargetMs;
	std::printf("  200 VMs: %.2f ms per frame (target <= %.0f): %s; with the full matrix %.2f ms"
		    " (derive %.2f of it)\n",
		    at200[0].total(), kTargetMs, ok ? "PASS" : "FAIL", at200[1].total(), at200[1].derive_ms);
	return ok ? 0 : 1;
}
