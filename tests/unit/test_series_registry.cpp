// The series registry (series.h) is the one description of every raw
// series: the catalog's rules may read only series it has, of the kind the
// rule needs; its rows must be exportable as Prometheus wants; and what the
// sources put in a snapshot of the fixture hosts is in it, at the scopes it
// names.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "hwsig/catalog.h"
#include "hwsig/sampler.h"
#include "hwsig/series.h"

namespace s = hwsig::series;
using K = hwsig::Rule::Kind;

namespace {

s::Kind kind_read_by(K rule)
{
	switch (rule) {
	case K::Ratio:
	case K::Rate: return s::Kind::Counter;
	case K::Gauge: return s::Kind::Gauge;
	case K::Percentile:
	case K::Entropy: return s::Kind::Histogram;
	}
	return s::Kind::Gauge;
}

template <typename Map> void check_scopes(const Map &series, s::Kind kind)
{
	for (const auto &[name, one] : series) {
		INFO(name);
		const s::Def *def = s::find(name);
		REQUIRE(def != nullptr);
		CHECK(def->kind == kind);
		for (const auto &[scope, point] : one.by_scope) {
			INFO(scope);
			CHECK((def->at & s::at(hwsig::Scope::kind_of(scope))) != 0);
		}
	}
}

bool ends_with(const std::string &t, const std::string &suffix)
{
	return t.size() >= suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

TEST_CASE("every catalog rule reads registry series of the kind it needs", "[catalog]")
{
	for (const auto &m : hwsig::catalog()) {
		for (const auto *names : {&m.rule.num, &m.rule.den}) {
			for (const std::string &name : *names) {
				INFO(m.id << " reads " << name);
				const s::Def *def = s::find(name);
				REQUIRE(def != nullptr);
				CHECK(def->kind == kind_read_by(m.rule.kind));
			}
		}
	}
}

TEST_CASE("registry rows have one name, one family each and Prometheus' suffixes", "[catalog][render]")
{
	std::set<std::string> names, families;
	for (const s::Def &d : s::kRegistry) {
		INFO(d.name);
		CHECK(names.insert(d.name).second);
		CHECK(s::find(d.name) == &d);
		CHECK(d.at != 0);
		CHECK(*d.unit != '\0');
		if (!d.family)
			continue;
		CHECK(families.insert(d.family).second);
		CHECK(d.help != nullptr);
		CHECK(ends_with(d.family, "_total") == (d.kind == s::Kind::Counter));
		// A multiplexed count carries its times only as a counter.
		CHECK((!d.pmu || d.kind == s::Kind::Counter));
		// vm scopes split out of a VM's own point need those scopes.
		if (d.vm == s::VmExport::PartsOnly)
			CHECK((d.at & (s::kAtVmVcpu | s::kAtVmCulprit)) != 0);
	}
	CHECK(s::find("no.such_series") == nullptr);
}

TEST_CASE("the fixtures' series are registry rows, at the scopes their rows name", "[catalog][fixture]")
{
	for (const char *host : {"xeon-2s-256cpu-8node", "amd-1s-64cpu-4node", "debian12-host", "kvm-host"}) {
		INFO(host);
		hwsig::SourceOptions opt;
		opt.root = std::string(HWSIG_FIXTURES) + "/" + host;
		opt.pmu = false;
		opt.bpf = false;
		hwsig::Sampler sampler(hwsig::default_sources(opt), opt.root, 0);
		const hwsig::Snapshot snap = sampler.take();
		CHECK(snap.gauges().size() + snap.counters().size() >= 4); // kvm-host has 4
		check_scopes(snap.counters(), s::Kind::Counter);
		check_scopes(snap.gauges(), s::Kind::Gauge);
		check_scopes(snap.histograms(), s::Kind::Histogram);
		check_scopes(snap.cpu_counts(), s::Kind::CpuCounts);
	}
}
