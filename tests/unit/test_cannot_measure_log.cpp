// hwsigd's "cannot measure" log lines: one per reason, the metrics and
// scopes it keeps from, warning for a fault, info for a choice.
#include <catch2/catch.hpp>

#include "cannot_measure_log.h"

using hwsig::UnavailableCode;
using hwsig::UnavailableNote;
using hwsigd::CannotMeasureLog;

namespace {

UnavailableNote note(const char *id, const char *scope, UnavailableCode code, const char *reason)
{
	return {id, scope, code, reason};
}

} // namespace

TEST_CASE("cannot-measure log: one line per reason, transient notes left out", "[daemon]")
{
	const std::vector<UnavailableNote> notes = {
		note("cpu.ipc", "system", UnavailableCode::unsupported, "no hardware PMU"),
		note("cpu.llc_mpki", "system", UnavailableCode::unsupported, "no hardware PMU"),
		note("cpu.ipc", "vm:a", UnavailableCode::unsupported, "no hardware PMU"),
		note("io.latency_p99_us", "dev:vda", UnavailableCode::no_events, "no I/O in this interval"),
		note("mem.mbm_total_bps", "system", UnavailableCode::disabled, "resctrl monitoring is off"),
	};
	const auto groups = CannotMeasureLog::group(notes);
	REQUIRE(groups.size() == 2); // the idle disk is transient
	const auto pmu = groups.find({UnavailableCode::unsupported, "no hardware PMU"});
	REQUIRE(pmu != groups.end());
	const auto line = CannotMeasureLog::line(pmu->first, pmu->second);
	CHECK(line.warning);
	CHECK(line.text == "cannot measure cpu.ipc, cpu.llc_mpki at 2 scopes (system, vm:a): no hardware PMU [unsupported]");
	const auto off = groups.find({UnavailableCode::disabled, "resctrl monitoring is off"});
	REQUIRE(off != groups.end());
	const auto info = CannotMeasureLog::line(off->first, off->second);
	CHECK_FALSE(info.warning);
	CHECK(info.text == "cannot measure mem.mbm_total_bps at system: resctrl monitoring is off [disabled]");
}

TEST_CASE("cannot-measure log: long lists end in 'and N more'", "[daemon]")
{
	std::vector<UnavailableNote> notes;
	static const char *ids[] = {"a.1", "a.2", "a.3", "a.4", "a.5", "a.6", "a.7", "a.8", "a.9", "a.10"};
	for (const char *id : ids)
		for (const char *scope : {"vm:1", "vm:2", "vm:3", "vm:4", "vm:5"})
			notes.push_back(note(id, scope, UnavailableCode::no_target, "no vhost"));
	const auto groups = CannotMeasureLog::group(notes);
	REQUIRE(groups.size() == 1);
	const auto line = CannotMeasureLog::line(groups.begin()->first, groups.begin()->second);
	CHECK(line.text == "cannot measure a.1, a.10, a.2, a.3, a.4, a.5, a.6, a.7 and 2 more at 5 scopes "
			   "(vm:1, vm:2, vm:3 and 2 more): no vhost [no_target]");
	CHECK_FALSE(line.warning);
}
