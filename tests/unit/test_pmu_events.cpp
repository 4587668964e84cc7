// Event resolution against fixture sysfs trees modelled on what the kernel's
// core and uncore drivers expose (tests/unit/fixtures/pmu/<host>/).
#include <catch2/catch.hpp>

#include <algorithm>
#include <linux/perf_event.h>
#include <map>
#include <set>

#include "hwsig/catalog.h"
#include "hwsig/error.h"
#include "hwsig/pmu_events.h"
#include "hwsig/series.h"

using namespace hwsig;

namespace {

std::string fixture(const char *host)
{
	return std::string(HWSIG_FIXTURES) + "/pmu/" + host;
}

const CoreSeriesPlan *find_series(const CorePlan &p, const char *s)
{
	for (const auto &c : p.series)
		if (c.series == s)
			return &c;
	return nullptr;
}

// A metric the plan leaves unmeasured: one whose catalog rule reads a
// series the plan cannot count.
bool has_unavailable(const CorePlan &p, const char *id)
{
	for (const auto &[series, why] : p.missing)
		for (const auto &m : metrics_reading({series}))
			if (m == id && !why.empty())
				return true;
	return false;
}

struct DramSummary {
	std::map<unsigned, int> reads_per_socket, writes_per_socket, rw_per_socket;
	std::set<std::uint64_t> read_configs, write_configs, rw_configs;
	std::set<std::string> pmus;
};

DramSummary summarize(const UncoreDramPlan &p)
{
	DramSummary s;
	for (const auto &e : p.events) {
		s.pmus.insert(e.pmu);
		switch (e.direction) {
		case DramDirection::Read:
			s.reads_per_socket[e.socket]++;
			s.read_configs.insert(e.spec.config);
			break;
		case DramDirection::Write:
			s.writes_per_socket[e.socket]++;
			s.write_configs.insert(e.spec.config);
			break;
		case DramDirection::ReadWrite:
			s.rw_per_socket[e.socket]++;
			s.rw_configs.insert(e.spec.config);
			break;
		}
	}
	return s;
}

} // namespace

TEST_CASE("format specs parse into words and bit ranges", "[pmu]")
{
	auto f = parse_format_spec("config:0-7,32-35\n");
	REQUIRE(f);
	CHECK(f->word == 0);
	CHECK(f->ranges == std::vector<std::pair<unsigned, unsigned>>{{0, 7}, {32, 35}});
	CHECK(f->width() == 12);

	f = parse_format_spec("config1:0-63");
	REQUIRE(f);
	CHECK(f->word == 1);
	CHECK(f->width() == 64);
	f = parse_format_spec("config2:5");
	REQUIRE(f);
	CHECK(f->word == 2);
	CHECK(f->ranges == std::vector<std::pair<unsigned, unsigned>>{{5, 5}});

	std::string why;
	for (const char *bad : {"", "config", "config:", "config:7-0", "config:0-64", "config3:0-7", "config:0-7,",
				"config:a-b", "config:0-7,4-9", "period:0-7", "config:-1", "config:0--7", "config:123"}) {
		INFO(bad);
		CHECK_FALSE(parse_format_spec(bad, &why));
		CHECK_FALSE(why.empty());
	}
}

TEST_CASE("event strings parse into terms", "[pmu]")
{
	auto t = parse_event_terms("event=0x3c,umask=0x01,edge,cmask=4\n");
	REQUIRE(t);
	REQUIRE(t->size() == 4);
	CHECK((*t)[0].name == "event");
	CHECK((*t)[0].value == 0x3c);
	CHECK((*t)[1].value == 1);
	CHECK((*t)[2].name == "edge");
	CHECK((*t)[2].value == 1);
	CHECK((*t)[3].value == 4);
	for (const char *bad : {"", "event=", "event=0x", "=3", "event=0xzz", "event=-1", "ev ent=1", "event=1,,umask=2",
				"event=99999999999999999999999", "event=?"})
		CHECK_FALSE(parse_event_terms(bad));
}

TEST_CASE("values are spread over split bit ranges, low bits first", "[pmu]")
{
	auto f = parse_format_spec("config:0-7,32-35,59-60");
	REQUIRE(f);
	PerfEventSpec s;
	REQUIRE(apply_format(*f, 0x107, s)); // Zen 2 DF channel 4: bit 8 of the event lands in bit 32
	CHECK(s.config == 0x100000007ull);
	PerfEventSpec s2;
	REQUIRE(apply_format(*f, 0x3fff, s2));
	CHECK(s2.config == (0xffull | (0xfull << 32) | (0x3ull << 59)));
	PerfEventSpec s3;
	CHECK_FALSE(apply_format(*f, 0x4000, s3)); // 15 bits into a 14-bit field
	auto full = parse_format_spec("config1:0-63");
	PerfEventSpec s4;
	REQUIRE(apply_format(*full, ~0ull, s4));
	CHECK(s4.config1 == ~0ull);
	CHECK(s4.config == 0);
}

TEST_CASE("generic, cache, software, raw and sysfs events resolve like perf", "[pmu]")
{
	PmuDevices pmus(fixture("skylake-sp"));
	CHECK(pmus.problems().empty());

	// perf's names and syntaxes; type 0 where only the config is checked.
	struct Resolved {
		const char *name;
		std::uint32_t type;
		std::uint64_t config, config1 = 0;
	};
	const Resolved resolved[] = {
		{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
		{"branch-misses", 0, PERF_COUNT_HW_BRANCH_MISSES},
		{"L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
		 PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
		{"dTLB-load-misses", 0, 0x10003},
		{"iTLB-load-misses", 0, 0x10004},
		{"LLC-loads", 0, 0x2},
		{"LLC-store-misses", 0, 0x10102},
		{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
		{"context-switches", 0, PERF_COUNT_SW_CONTEXT_SWITCHES},
		{"r01c2", 4, 0x1c2},
		{"cpu/event=0xa3,umask=0x04,cmask=4/", 4, 0x040004a3},
		{"cpu/mem-loads/", 0, 0x1cd, 3}, // alias using a config1 term
		{"uncore_imc_3/cas_count_write/", 17, 0x0c04},
		{"msr/config=0x2/", 0, 2},
	};
	for (const Resolved &want : resolved) {
		INFO(want.name);
		const auto e = pmus.resolve(want.name);
		if (want.type)
			CHECK(e.type == want.type);
		CHECK(e.config == want.config);
		CHECK(e.config1 == want.config1);
	}

	struct Refused {
		const char *name;
		int err;
		const char *says;
	};
	for (const Refused r : {Refused{"no-such-event", ENOENT, "unknown event"},
				Refused{"nosuchpmu/event=1/", ENOENT, "no PMU named"},
				Refused{"uncore_imc_0/no_alias/", ENOENT, "no event"},
				Refused{"uncore_imc_0/event=0x100/", EINVAL, "does not fit"},
				Refused{"uncore_imc_0/frobnicate=1/", EINVAL, "no format term"},
				Refused{"uncore_imc_0/event=0x04", EINVAL, "pmu/event/"}, Refused{"rxyz", EINVAL, "raw"},
				Refused{"L1-dcache-loads-misses", ENOENT, "unknown"}}) {
		INFO(r.name);
		try {
			pmus.resolve(r.name);
			FAIL("resolved");
		} catch (const Error &x) {
			CHECK(x.err() == r.err);
			CHECK_THAT(x.what(), Catch::Contains(r.says));
		}
	}
}

TEST_CASE("host identity and sockets come from cpuinfo and topology", "[pmu]")
{
	auto id = read_cpu_identity(fixture("zen4"));
	CHECK(id.vendor == CpuVendor::Amd);
	CHECK(id.family == 25);
	CHECK(id.model == 17);
	CHECK_FALSE(id.hypervisor);
	id = read_cpu_identity(fixture("kvm-guest"));
	CHECK(id.vendor == CpuVendor::Intel);
	CHECK(id.hypervisor);
	CHECK(cpu_socket(fixture("skylake-sp"), 3) == 1u);
	CHECK(cpu_socket(fixture("skylake-sp"), 1) == 0u);
	CHECK_FALSE(cpu_socket(fixture("skylake-sp"), 9));
	CHECK(read_cpu_identity(fixture("does-not-exist")).vendor == CpuVendor::Unknown);
}

// Each host's memory-controller plan: which PMU kind, how many boxes, one
// read and one write event per box on one CPU of each socket, and the
// events' configs.
TEST_CASE("uncore DRAM plans: the PMU kind, boxes per socket and events of each host", "[pmu][uncore]")
{
	using PerSocket = std::map<unsigned, int>;
	using Configs = std::set<std::uint64_t>;
	struct Host {
		const char *fixture, *kind;
		std::size_t pmus;
		PerSocket per_socket;
		Configs reads, writes;
	};
	const Host hosts[] = {
		// Skylake-SP: six uncore_imc channels, CAS counts; .scale ignored.
		{"skylake-sp", "uncore_imc", 6, {{0, 6}, {1, 6}}, {0x0304}, {0x0c04}},
		// Ice Lake-SP: free-running read/write counters win over uncore_imc.
		{"icelake-sp", "uncore_imc_free_running", 4, {{0, 4}, {1, 4}}, {0x20ff}, {0x21ff}},
		// Sapphire Rapids: free-running boxes without read/write fall back to CAS.
		{"sapphire-rapids", "uncore_imc", 8, {{0, 8}, {1, 8}}, {0xcf05}, {0xf005}},
		// Zen 4: amd_umc CAS commands with rdwrmask.
		{"zen4", "amd_umc", 4, {{0, 2}, {1, 2}}, {0x10a}, {0x20a}},
	};
	for (const Host &h : hosts) {
		INFO(h.fixture);
		PmuDevices pmus(fixture(h.fixture));
		auto plan = plan_uncore_dram(pmus, read_cpu_identity(fixture(h.fixture)));
		CHECK(plan.kind == h.kind);
		auto s = summarize(plan);
		CHECK(s.pmus.size() == h.pmus);
		CHECK(s.reads_per_socket == h.per_socket);
		CHECK(s.writes_per_socket == h.per_socket);
		CHECK(s.rw_per_socket.empty());
		CHECK(s.read_configs == h.reads);
		CHECK(s.write_configs == h.writes);
	}
}

TEST_CASE("Skylake-SP: each socket's channels counted on one CPU of that socket", "[pmu][uncore]")
{
	PmuDevices pmus(fixture("skylake-sp"));
	auto plan = plan_uncore_dram(pmus, read_cpu_identity(fixture("skylake-sp")));
	REQUIRE_FALSE(plan.events.empty());
	for (const auto &e : plan.events) {
		CHECK((e.cpu == 0 || e.cpu == 2));
		CHECK(e.socket == (e.cpu == 0 ? 0u : 1u));
		CHECK(e.spec.type >= 14);
		CHECK(e.spec.type <= 19);
	}
}

TEST_CASE("Ice Lake-SP and Zen 4: the boxes by name, never uncore_imc and free-running both", "[pmu][uncore]")
{
	PmuDevices ice(fixture("icelake-sp"));
	for (const auto &p : summarize(plan_uncore_dram(ice, read_cpu_identity(fixture("icelake-sp")))).pmus)
		CHECK_THAT(p, Catch::StartsWith("uncore_imc_free_running_"));
	PmuDevices zen4(fixture("zen4"));
	CHECK(summarize(plan_uncore_dram(zen4, read_cpu_identity(fixture("zen4")))).pmus ==
	      std::set<std::string>{"amd_umc_0", "amd_umc_1", "amd_umc_2", "amd_umc_3"});
}

TEST_CASE("Zen 2: amd_df DRAM channel events, reads and writes together", "[pmu][uncore]")
{
	PmuDevices pmus(fixture("zen2"));
	auto plan = plan_uncore_dram(pmus, read_cpu_identity(fixture("zen2")));
	CHECK(plan.kind == "amd_df");
	auto s = summarize(plan);
	CHECK(s.rw_per_socket == std::map<unsigned, int>{{0, 8}, {1, 8}});
	CHECK(s.reads_per_socket.empty());
	CHECK(s.rw_configs.count(0x3807)); // channel 0
	CHECK(s.rw_configs.count(0x100003807ull)); // channel 4: event 0x107
	CHECK(s.rw_configs.count(0x1000038c7ull)); // channel 7: event 0x1c7
	CHECK(s.rw_configs.size() == 8);
	REQUIRE_FALSE(plan.notes.empty());
}

TEST_CASE("no uncore memory controller: a one-line reason", "[pmu][uncore]")
{
	PmuDevices pmus(fixture("kvm-guest"));
	auto plan = plan_uncore_dram(pmus, read_cpu_identity(fixture("kvm-guest")));
	CHECK(plan.events.empty());
	CHECK(plan.unavailable_reason ==
	      "no uncore memory-controller PMU (uncore_imc/amd_umc/amd_df) on this host");
	CHECK(pmus.core_pmu() == nullptr);
}

TEST_CASE("core plans: Intel raw events through the cpu PMU's format", "[pmu][core]")
{
	PmuDevices pmus(fixture("skylake-sp"));
	auto plan = plan_core_events(pmus, read_cpu_identity(fixture("skylake-sp")));
	CHECK(plan.missing.empty());
	const auto *stall = find_series(plan, series::kPmuStallCycles);
	REQUIRE(stall);
	CHECK(stall->event.type == 4);
	CHECK(stall->event.config == 0x018002c2); // UOPS_RETIRED.STALLS
	const auto *l2 = find_series(plan, series::kPmuL2Misses);
	REQUIRE(l2);
	CHECK(l2->event.config == 0x3f24); // L2_RQSTS.MISS
	REQUIRE(find_series(plan, series::kPmuLlcMisses));
	CHECK(find_series(plan, series::kPmuLlcMisses)->event.config == PERF_COUNT_HW_CACHE_MISSES);
	CHECK(plan.series.size() == 11);
}

TEST_CASE("core plans: AMD L2 raw event, LLC reported unavailable", "[pmu][core]")
{
	PmuDevices pmus(fixture("zen4"));
	auto plan = plan_core_events(pmus, read_cpu_identity(fixture("zen4")));
	const auto *l2 = find_series(plan, series::kPmuL2Misses);
	REQUIRE(l2);
	CHECK(l2->event.config == 0x0964);
	CHECK_FALSE(find_series(plan, series::kPmuLlcMisses));
	CHECK(has_unavailable(plan, "cpu.llc_mpki"));
	CHECK(has_unavailable(plan, "cpu.llc_miss_ratio"));
	const auto *stall = find_series(plan, series::kPmuStallCycles);
	REQUIRE(stall);
	CHECK(stall->event.type == 4);
	CHECK(stall->event.config == 0x018000c1); // retired ops, inv, cmask=1
}

TEST_CASE("core plans without a core PMU keep the generic events and drop raw ones", "[pmu][core]")
{
	PmuDevices pmus(fixture("kvm-guest"));
	auto plan = plan_core_events(pmus, read_cpu_identity(fixture("kvm-guest")));
	CHECK(has_unavailable(plan, "cpu.l2_mpki"));
	REQUIRE(find_series(plan, series::kPmuCycles));
	CHECK_FALSE(find_series(plan, series::kPmuStallCycles));
	CHECK(has_unavailable(plan, "cpu.stall_ratio"));
}

// Issue 13, item 9: cpu.stall_ratio counts one thing on every vendor, and
// hwsig.ko is configured with the very event the perf_event_open backend
// opens (which takes each series' plan event, or notes it unavailable):
// never a generic stalled-cycles event, which Intel does not map and the
// kernel maps on Zen 2 and later to an event they lack (before 6.9) or to
// a front-end event alone.
TEST_CASE("stall cycles: cycles with no op retired on Intel and AMD, the same event on both backends",
	  "[pmu][core]")
{
	struct Host {
		const char *fixture;
		std::uint64_t config; // in the cpu PMU (type 4 in every fixture)
	};
	// Intel: event 0xc2 umask 0x02 (retirement slots), AMD: event 0xc1
	// (retired ops); both with inv (bit 23) and cmask 1 (bits 24-31).
	for (const Host h : {Host{"skylake-sp", 0x018002c2}, Host{"icelake-sp", 0x018002c2},
			     Host{"sapphire-rapids", 0x018002c2}, Host{"zen2", 0x018000c1}, Host{"zen4", 0x018000c1}}) {
		INFO(h.fixture);
		PmuDevices pmus(fixture(h.fixture));
		const CpuIdentity cpu = read_cpu_identity(fixture(h.fixture));
		const std::uint32_t cpu_type = pmus.core_pmu()->type;

		bool software = true;
		const auto defaults = default_kmod_events(pmus, cpu, &software);
		CHECK_FALSE(software);
		const auto stall = std::find_if(defaults.begin(), defaults.end(),
						[](const KmodEvent &e) { return e.name == "stall-cycles"; });
		REQUIRE(stall != defaults.end());
		CHECK(stall->pmu_type == cpu_type);
		CHECK(stall->config == h.config);
		// `hwsigctl kmod start --events stall-cycles` means the same.
		const auto named = kmod_events_for(pmus, cpu, {"stall-cycles"});
		REQUIRE(named.size() == 1);
		CHECK(named[0].pmu_type == cpu_type);
		CHECK(named[0].config == h.config);

		// The perf_event_open backend opens the plan's event; hwsig.ko is
		// given the same, series by series, in the same order.
		const auto plan = plan_core_events(pmus, cpu);
		REQUIRE(defaults.size() == plan.series.size());
		for (std::size_t i = 0; i < plan.series.size(); i++) {
			INFO(plan.series[i].series);
			CHECK(defaults[i].name == plan.series[i].event.name);
			CHECK(defaults[i].pmu_type == plan.series[i].event.type);
			CHECK(defaults[i].config == plan.series[i].event.config);
			CHECK(defaults[i].config1 == plan.series[i].event.config1);
		}
	}
}

// Issue 34, item 9: on Intel CPUs made of E-cores only (Sierra Forest and
// the other Atom-line models) event 0xC2 umask 0x02 is not retirement
// slots; their retired-uops event is umask 0x00. The skylake-sp capture
// stands for their cpu PMU (same format terms); the model is theirs.
TEST_CASE("stall cycles on E-core-only Intel CPUs: their retired-uops event", "[pmu][core]")
{
	PmuDevices pmus(fixture("skylake-sp"));
	struct Model {
		unsigned model;
		std::optional<std::uint64_t> config;
	};
	for (const Model m : {Model{0xAF, 0x018000c2}, Model{0xB6, 0x018000c2}, Model{0x86, 0x018000c2},
			      Model{0xBE, 0x018000c2}, Model{0x5F, 0x018000c2}, Model{0x4D, std::nullopt},
			      Model{0x55, 0x018002c2}, Model{0x8F, 0x018002c2}}) {
		INFO("model 0x" << std::hex << m.model);
		CpuIdentity cpu = read_cpu_identity(fixture("skylake-sp"));
		cpu.model = m.model;
		const auto plan = plan_core_events(pmus, cpu);
		const auto *stall = find_series(plan, series::kPmuStallCycles);
		if (!m.config) {
			CHECK_FALSE(stall);
			continue;
		}
		REQUIRE(stall);
		CHECK(stall->event.config == *m.config);
		// hwsig.ko's default set follows the plan.
		const auto defaults = default_kmod_events(pmus, cpu, nullptr);
		const auto k = std::find_if(defaults.begin(), defaults.end(),
					    [](const KmodEvent &e) { return e.name == "stall-cycles"; });
		REQUIRE(k != defaults.end());
		CHECK(k->config == *m.config);
	}
}

TEST_CASE("stall cycles on a CPU of another vendor: unavailable with a reason, no guessed event", "[pmu][core]")
{
	PmuDevices pmus(fixture("zen4"));
	CpuIdentity other = read_cpu_identity(fixture("zen4"));
	other.vendor = CpuVendor::Unknown;
	const auto plan = plan_core_events(pmus, other);
	CHECK_FALSE(find_series(plan, series::kPmuStallCycles));
	bool said = false;
	for (const auto &[series, why] : plan.missing)
		said |= series == series::kPmuStallCycles && why == "no known stall-cycles event for this CPU model";
	CHECK(said);
}

TEST_CASE("a malformed PMU directory is reported, not fatal", "[pmu]")
{
	// The skylake fixture is well formed; garbage in a scratch tree.
	char tmpl[] = "/tmp/hwsig-pmu-XXXXXX";
	REQUIRE(mkdtemp(tmpl));
	const std::string root = tmpl;
	const std::string d = root + "/sys/bus/event_source/devices";
	REQUIRE(system(("mkdir -p " + d + "/bad/format " + d + "/good/format " + d + "/notype").c_str()) == 0);
	REQUIRE(system(("echo 12x > " + d + "/bad/type; echo 'config:9-3' > " + d + "/good/format/event; echo 21 > " +
			d + "/good/type; echo 'config:0-7' > " + d + "/good/format/umask")
			       .c_str()) == 0);
	PmuDevices pmus(root);
	CHECK(pmus.find("bad") == nullptr);
	CHECK(pmus.find("notype") == nullptr);
	REQUIRE(pmus.find("good"));
	CHECK(pmus.find("good")->format.count("umask") == 1);
	CHECK(pmus.find("good")->format.count("event") == 0);
	CHECK(pmus.problems().size() == 3);
	REQUIRE(system(("rm -rf " + root).c_str()) == 0);
}

namespace {

// A scratch copy of a fixture that a test may change.
struct ScratchTree {
	std::string root;
	explicit ScratchTree(const char *host)
	{
		char tmpl[] = "/tmp/hwsig-pmu-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		root = tmpl;
		REQUIRE(system(("cp -r " + fixture(host) + "/. " + root).c_str()) == 0);
	}
	~ScratchTree() { (void)system(("rm -rf " + root).c_str()); }
	void run(const std::string &cmd) { REQUIRE(system(("cd " + root + " && " + cmd).c_str()) == 0); }
};

} // namespace

TEST_CASE("Zen 4 without amd_umc (kernel older than 6.8) says what is missing", "[pmu][uncore]")
{
	ScratchTree t("zen4");
	t.run("rm -rf sys/bus/event_source/devices/amd_umc_*");
	PmuDevices pmus(t.root);
	auto plan = plan_uncore_dram(pmus, read_cpu_identity(t.root));
	CHECK(plan.events.empty());
	CHECK(plan.unavailable_reason == "AMD Zen 4: DRAM traffic needs the amd_umc PMU (Linux 6.8 or later)");
}

TEST_CASE("an uncore PMU whose CPU has no topology is skipped with a note, others still count", "[pmu][uncore]")
{
	ScratchTree t("skylake-sp");
	t.run("rm -rf sys/devices/system/cpu/cpu2");
	PmuDevices pmus(t.root);
	auto plan = plan_uncore_dram(pmus, read_cpu_identity(t.root));
	CHECK(plan.kind == "uncore_imc");
	auto s = summarize(plan);
	CHECK(s.reads_per_socket == std::map<unsigned, int>{{0, 6}});
	CHECK_FALSE(plan.notes.empty());
}

TEST_CASE("a single unnumbered free-running IMC box is used too", "[pmu][uncore]")
{
	ScratchTree t("icelake-sp");
	t.run("cd sys/bus/event_source/devices && rm -rf uncore_imc_free_running_1 uncore_imc_free_running_2 "
	      "uncore_imc_free_running_3 && mv uncore_imc_free_running_0 uncore_imc_free_running");
	PmuDevices pmus(t.root);
	auto plan = plan_uncore_dram(pmus, read_cpu_identity(t.root));
	CHECK(plan.kind == "uncore_imc_free_running");
	CHECK(summarize(plan).pmus == std::set<std::string>{"uncore_imc_free_running"});
}
