// psi.* against the kernel's own /proc/pressure totals over the same
// window, with a known stall: more CPU hogs than CPUs for part of it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/fs.h"
#include "hwsig/procfs.h"
#include "hwsig/sampler.h"
#include "workloads.h"

namespace {

struct Reading {
	std::uint64_t ns = 0;
	std::uint64_t some_us = 0;
};

// The kernel's "some" total of /proc/pressure/cpu, and when it was read.
Reading cpu_pressure()
{
	Reading r;
	r.ns = hwsig::monotonic_ns();
	hwsig::FileRead f = hwsig::read_file("/proc/pressure/cpu");
	REQUIRE(f.data);
	hwsig::Pressure p = hwsig::parse_pressure(*f.data);
	REQUIRE(p.error.empty());
	REQUIRE(p.some);
	r.some_us = p.some->total_us;
	return r;
}

} // namespace

TEST_CASE("psi.cpu_some_pct is the kernel's Δtotal / Δt over the same window, under a known CPU stall", "[psi]")
{
	if (!hwsig::path_exists("/proc/pressure/cpu")) {
		FAIL("no /proc/pressure/cpu: this kernel has no PSI (CONFIG_PSI, psi=1)");
	}
	std::vector<hwsig::SourcePtr> sources;
	sources.push_back(hwsig::make_psi_source());
	hwsig::Sampler sampler(std::move(sources));
	// Two hogs per CPU, pinned, for 1 s of a ~2 s window: every CPU has a
	// runnable task waiting while they run, so "some" is stalled then.
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	REQUIRE(cpus > 0);
	std::vector<hwsig_test::Child> hogs;
	for (long c = 0; c < cpus; ++c)
		for (int i = 0; i < 2; ++i)
			hogs.push_back(hwsig_test::Child::hog(static_cast<int>(c), 1000));
	hwsig::Snapshot a = sampler.take();
	const Reading r0 = cpu_pressure(); // right after hwsig's first reading
	for (auto &h : hogs)
		h.go();
	for (auto &h : hogs)
		h.wait_report();
	std::this_thread::sleep_for(std::chrono::milliseconds(800));
	const Reading r1 = cpu_pressure(); // right before hwsig's second one
	hwsig::Snapshot b = sampler.take();

	const double kernel_pct = static_cast<double>(r1.some_us - r0.some_us) / 1e6 /
				  (static_cast<double>(r1.ns - r0.ns) / 1e9) * 100.0;
	auto iv = hwsig::derive(a, b, sampler.claimed_ids());
	const hwsig::Metric *m = nullptr;
	for (const auto &x : iv.metrics)
		if (x.id == "psi.cpu_some_pct" && x.scope == "system")
			m = &x;
	REQUIRE(m);
	INFO("psi.cpu_some_pct " << m->value << " %, kernel Δtotal/Δt " << kernel_pct << " % over "
				 << (r1.ns - r0.ns) / 1e6 << " ms");
	// The stall is real and large: about half the window.
	CHECK(kernel_pct > 25.0);
	CHECK(kernel_pct <= 100.5);
	// hwsig's window holds the reference one plus the few hundred us
	// between each of its reads and the test's (no hog runs there): the
	// same share within half a percentage point.
	CHECK(std::fabs(m->value - kernel_pct) <= 0.5);
}
