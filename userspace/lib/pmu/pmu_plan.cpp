// The core events behind the metric catalog's cpu.* metrics, per vendor and
// model (pmu_plan.h, Documentation/pmu.rst), and the series PMU plans feed.

#include "hwsig/pmu_plan.h"

#include <linux/perf_event.h>
#include <optional>

#include "hwsig/error.h"
#include "hwsig/perf_open.h"
#include "hwsig/series.h"

namespace hwsig {

const std::vector<std::string_view> &pmu_core_series()
{
	using namespace series;
	static const std::vector<std::string_view> s = {
		kPmuCycles,       kPmuInstructions,  kPmuStallCycles, kPmuL1dMisses,
		kPmuL2Misses,     kPmuLlcReferences, kPmuLlcMisses,   kPmuBranches,
		kPmuBranchMisses, kPmuDtlbMisses,    kPmuItlbMisses,
	};
	return s;
}

const std::vector<std::string_view> &pmu_dram_series()
{
	static const std::vector<std::string_view> s = {series::kImcCasReads, series::kImcCasWrites,
							series::kImcCasReadWrite};
	return s;
}

std::string no_pmu_reason(const CpuIdentity &cpu, int err, std::string_view via)
{
	return std::string("no hardware PMU") + (cpu.hypervisor ? ": running under a hypervisor" : "") + " (" +
	       std::string(via) + " cycles: " + errno_name(err) + ")";
}

namespace {

PerfEventSpec hw(const char *name, std::uint64_t config)
{
	return PerfEventSpec{name, PERF_TYPE_HARDWARE, config, 0, 0};
}

PerfEventSpec hw_cache(const char *name, std::uint64_t cache, std::uint64_t op, std::uint64_t result)
{
	return PerfEventSpec{name, PERF_TYPE_HW_CACHE, hw_cache_config(cache, op, result), 0, 0};
}

// A raw core event through the core PMU's format, when that PMU exists and
// knows every term; nullopt otherwise.
std::optional<PerfEventSpec> raw_core(const PmuDevices &pmus, const char *name, const char *terms)
{
	const PmuDevice *core = pmus.core_pmu();
	if (!core)
		return std::nullopt;
	try {
		return pmus.encode(*core, terms, name);
	} catch (const Error &) {
		return std::nullopt;
	}
}

// Intel CPUs of the Atom line, whose every core is an E-core (family 6).
// Their event 0xC2 is UOPS_RETIRED with other unit masks: umask 0x00 counts
// every retired uop (.ALL; TOPDOWN_RETIRING.ALL on Crestmont), umask 0x02 a
// subset, not the P-cores' retirement slots.
enum class IntelCore { P, AtomRetiredUops, AtomUnknown };

IntelCore intel_core_kind(const CpuIdentity &cpu)
{
	if (cpu.family != 6)
		return IntelCore::P;
	switch (cpu.model) {
	case 0x5C: // Goldmont (Apollo Lake)
	case 0x5F: // Goldmont D (Denverton)
	case 0x7A: // Goldmont Plus (Gemini Lake)
	case 0x86: // Tremont D (Snow Ridge)
	case 0x96: // Tremont (Elkhart Lake)
	case 0x9C: // Tremont L (Jasper Lake)
	case 0xBE: // Gracemont (Alder Lake-N)
	case 0xAF: // Crestmont X (Sierra Forest)
	case 0xB6: // Crestmont (Grand Ridge)
	case 0xDD: // Darkmont X (Clearwater Forest)
		return IntelCore::AtomRetiredUops;
	case 0x37: // Silvermont, Airmont: another retired-uops encoding
	case 0x4A:
	case 0x4C:
	case 0x4D:
	case 0x5A:
	case 0x5D:
		return IntelCore::AtomUnknown;
	default:
		return IntelCore::P;
	}
}

} // namespace

std::vector<std::string> default_software_event_names()
{
	return {"task-clock", "context-switches", "cpu-migrations", "page-faults"};
}

CorePlan plan_core_events(const PmuDevices &pmus, const CpuIdentity &cpu)
{
	using namespace series;
	CorePlan plan;
	auto add = [&](const char *s, PerfEventSpec e) { plan.series.push_back(CoreSeriesPlan{s, std::move(e)}); };
	add(kPmuCycles, hw("cycles", PERF_COUNT_HW_CPU_CYCLES));
	add(kPmuInstructions, hw("instructions", PERF_COUNT_HW_INSTRUCTIONS));

	// Stall cycles: cycles in which this thread retired no (micro-)op,
	// whatever held it up (an empty window behind a front-end miss or a
	// mispredict, the oldest op waiting for data). Both vendors count
	// exactly that with the retired-ops event and an inverted count mask
	// of 1 ("fewer than 1 this cycle"), so the ratio means the same on
	// both. The generic stalled-cycles-* events do not: Intel never mapped
	// them, and on Zen 2 and later the kernel maps an event these CPUs
	// lack (PMCx087, before Linux 6.9) or a front-end one alone ("uop
	// queue empty").
	std::optional<PerfEventSpec> stall;
	if (cpu.vendor == CpuVendor::Intel && intel_core_kind(cpu) == IntelCore::P)
		// retirement slots used: UOPS_RETIRED.STALLS (.STALL_CYCLES)
		stall = raw_core(pmus, "stall-cycles", "event=0xc2,umask=0x02,inv=1,cmask=1");
	else if (cpu.vendor == CpuVendor::Intel && intel_core_kind(cpu) == IntelCore::AtomRetiredUops)
		// E-cores: UOPS_RETIRED.ALL (umask 0) inverted
		stall = raw_core(pmus, "stall-cycles", "event=0xc2,umask=0x00,inv=1,cmask=1");
	else if (cpu.vendor == CpuVendor::Amd) // retired ops, PMCx0C1: Zen 4's ex_no_retire.all
		stall = raw_core(pmus, "stall-cycles", "event=0xc1,inv=1,cmask=1");
	if (stall)
		add(kPmuStallCycles, *stall);
	else
		plan.missing.emplace_back(kPmuStallCycles, pmus.core_pmu()
								   ? "no known stall-cycles event for this CPU model"
								   : "no core PMU to program the stall-cycles event");

	add(kPmuL1dMisses, hw_cache("L1-dcache-load-misses", PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
				    PERF_COUNT_HW_CACHE_RESULT_MISS));

	std::optional<PerfEventSpec> l2;
	if (cpu.vendor == CpuVendor::Intel)
		l2 = raw_core(pmus, "l2-misses", "event=0x24,umask=0x3f"); // L2_RQSTS.MISS
	else if (cpu.vendor == CpuVendor::Amd && cpu.family >= 0x17)
		l2 = raw_core(pmus, "l2-misses", "event=0x64,umask=0x09"); // L2_CACHE_REQ_STAT.IC_DC_MISS_IN_L2
	if (l2)
		add(kPmuL2Misses, *l2);
	else
		plan.missing.emplace_back(kPmuL2Misses, pmus.core_pmu() ? "no known L2-miss event for this CPU model"
								 : "no core PMU to program the L2-miss event");

	if (cpu.vendor == CpuVendor::Amd) {
		// The kernel maps the generic cache-references/misses to L2 events
		// on Zen; the L3 is counted by the per-CCX amd_l3 PMU instead.
		const char *why = "AMD: the L3 is counted by the per-CCX amd_l3 PMU, which hwsig does not program";
		plan.missing.emplace_back(kPmuLlcMisses, why);
		plan.missing.emplace_back(kPmuLlcReferences, why);
	} else {
		add(kPmuLlcReferences, hw("cache-references", PERF_COUNT_HW_CACHE_REFERENCES));
		add(kPmuLlcMisses, hw("cache-misses", PERF_COUNT_HW_CACHE_MISSES));
	}
	add(kPmuBranches, hw("branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS));
	add(kPmuBranchMisses, hw("branch-misses", PERF_COUNT_HW_BRANCH_MISSES));
	add(kPmuDtlbMisses, hw_cache("dTLB-load-misses", PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
				     PERF_COUNT_HW_CACHE_RESULT_MISS));
	add(kPmuItlbMisses, hw_cache("iTLB-load-misses", PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ,
				     PERF_COUNT_HW_CACHE_RESULT_MISS));
	return plan;
}

} // namespace hwsig
