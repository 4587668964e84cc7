// The uncore events behind the metric catalog's mem.imc_* metrics: Intel
// uncore_imc (free-running or CAS events), AMD amd_umc or amd_df, one event
// per PMU instance and socket (pmu_plan.h, Documentation/pmu.rst).

#include "hwsig/pmu_plan.h"

#include <algorithm>

#include "hwsig/error.h"
#include "hwsig/series.h"

namespace hwsig {

const char *dram_series(DramDirection d)
{
	switch (d) {
	case DramDirection::Read: return series::kImcCasReads;
	case DramDirection::Write: return series::kImcCasWrites;
	case DramDirection::ReadWrite: return series::kImcCasReadWrite;
	}
	return series::kImcCasReadWrite;
}

namespace {

bool numbered(std::string_view name, std::string_view prefix)
{
	if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size())
		return false;
	name.remove_prefix(prefix.size());
	return std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Adds one event per CPU of the PMU's cpumask (one CPU per socket/die).
void add_per_socket(const PmuDevices &pmus, const PmuDevice &pmu, const PerfEventSpec &spec,
		    DramDirection dir, UncoreDramPlan &plan)
{
	if (pmu.cpumask.empty()) {
		plan.notes.push_back(pmu.name + ": no cpumask; skipped");
		return;
	}
	for (unsigned c : pmu.cpumask) {
		auto socket = cpu_socket(pmus.root(), c);
		if (!socket) {
			plan.notes.push_back(pmu.name + ": no physical_package_id for cpu" + std::to_string(c) +
					     "; skipped");
			continue;
		}
		plan.events.push_back(UncoreDramEvent{pmu.name, c, *socket, dir, spec});
	}
}

bool plan_intel(const PmuDevices &pmus, std::string_view prefix, const char *read_alias,
		const char *write_alias, UncoreDramPlan &plan)
{
	bool any = false;
	// "uncore_imc_free_running_0".. per controller; a part with a single box
	// (Snow Ridge) names it without the number.
	const std::string_view single = prefix.substr(0, prefix.size() - 1);
	for (const PmuDevice &d : pmus.devices()) {
		if (!numbered(d.name, prefix) && d.name != single)
			continue;
		auto r = d.events.find(read_alias);
		auto w = d.events.find(write_alias);
		if (r == d.events.end() || w == d.events.end())
			continue;
		try {
			add_per_socket(pmus, d, pmus.encode(d, r->second, d.name + "/" + read_alias + "/"),
				       DramDirection::Read, plan);
			add_per_socket(pmus, d, pmus.encode(d, w->second, d.name + "/" + write_alias + "/"),
				       DramDirection::Write, plan);
			any = true;
		} catch (const Error &e) {
			plan.notes.push_back(e.what());
		}
	}
	return any;
}

bool is_zen4(unsigned model)
{
	return (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0xaf);
}

// Zen 2/3 (families 17h/19h): the data fabric's DRAM channel controller
// events, one per channel; each counts 64-byte beats, reads and writes together.
bool plan_amd_df(const PmuDevices &pmus, const PmuDevice &df, UncoreDramPlan &plan)
{
	static constexpr unsigned kChannelEvents[] = {0x07, 0x47, 0x87, 0xc7, 0x107, 0x147, 0x187, 0x1c7};
	try {
		for (unsigned ch = 0; ch < std::size(kChannelEvents); ch++) {
			const std::string terms = "event=" + std::to_string(kChannelEvents[ch]) + ",umask=0x38";
			add_per_socket(pmus, df, pmus.encode(df, terms, "amd_df/dram_channel_" + std::to_string(ch) + "/"),
				       DramDirection::ReadWrite, plan);
		}
		return true;
	} catch (const Error &e) {
		plan.notes.push_back(e.what());
		return false;
	}
}

} // namespace

UncoreDramPlan plan_uncore_dram(const PmuDevices &pmus, const CpuIdentity &cpu)
{
	UncoreDramPlan plan;
	// Free-running counters cost no programmable counter; only Ice Lake-SP
	// style boxes count DDR reads/writes there (Sapphire Rapids' have only
	// dclk and queue cycles), so they are used only when both events exist.
	// Either family covers every channel: never both, or traffic counts twice.
	if (plan_intel(pmus, "uncore_imc_free_running_", "read", "write", plan)) {
		plan.kind = "uncore_imc_free_running";
		return plan;
	}
	plan.events.clear();
	if (plan_intel(pmus, "uncore_imc_", "cas_count_read", "cas_count_write", plan)) {
		plan.kind = "uncore_imc";
		return plan;
	}
	plan.events.clear();

	bool umc = false;
	for (const PmuDevice &d : pmus.devices()) {
		if (!numbered(d.name, "amd_umc_"))
			continue;
		try {
			// UMC_CAS_CMD (event 0x0a) with rdwrmask 1 = reads, 2 = writes.
			add_per_socket(pmus, d, pmus.encode(d, "event=0x0a,rdwrmask=1", d.name + "/cas_rd/"),
				       DramDirection::Read, plan);
			add_per_socket(pmus, d, pmus.encode(d, "event=0x0a,rdwrmask=2", d.name + "/cas_wr/"),
				       DramDirection::Write, plan);
			umc = true;
		} catch (const Error &e) {
			plan.notes.push_back(e.what());
		}
	}
	if (umc) {
		plan.kind = "amd_umc";
		return plan;
	}
	plan.events.clear();

	const PmuDevice *df = pmus.find("amd_df");
	if (df && cpu.vendor == CpuVendor::Amd && cpu.family == 0x19 && is_zen4(cpu.model)) {
		plan.unavailable_reason = "AMD Zen 4: DRAM traffic needs the amd_umc PMU (Linux 6.8 or later)";
		return plan;
	}
	if (df && cpu.vendor == CpuVendor::Amd && (cpu.family == 0x17 || cpu.family == 0x19)) {
		if (plan_amd_df(pmus, *df, plan)) {
			plan.kind = "amd_df";
			plan.notes.push_back("amd_df counts DRAM reads and writes together: no read/write split");
			return plan;
		}
		plan.events.clear();
	}
	plan.unavailable_reason = "no uncore memory-controller PMU (uncore_imc/amd_umc/amd_df) on this host";
	return plan;
}

} // namespace hwsig
