// The series budget of issue 30 (Documentation/prometheus.rst, "Series
// budget"): a simulated big hypervisor host (the 256-CPU, 8-node fixture,
// its PMU and BPF series, 100 VMs of 8 vCPUs, 10 disks) exported with the
// default switches stays within 25 series per VM, 40 per device, 1,500 for
// the rest and 6,000 in all; each family's count is what the listing's
// formula (the documented table) says; the set of series holds still
// across 100 scrapes; each switch adds what it is documented to add.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "fixture_exposition.h"
#include "hwsig/family_listing.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/series.h"

using namespace hwsig;

namespace {

constexpr unsigned kVms = 100, kVcpus = 8, kDisks = 10;

struct Sample {
	std::string family; // a histogram's, for its _bucket, _sum and _count lines
	std::map<std::string, std::string> labels;
	std::string line;
};

std::vector<Sample> samples(const std::string &text)
{
	static const std::regex type(R"(^# TYPE (\S+) (\S+)$)");
	static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$)");
	static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\]|\\.)*)\")");
	std::vector<Sample> out;
	std::istringstream in(text);
	std::string line, family;
	while (std::getline(in, line)) {
		std::smatch m;
		if (std::regex_match(line, m, type)) {
			family = m[1].str();
			continue;
		}
		if (!std::regex_match(line, m, sample))
			continue;
		Sample s{family, {}, line.substr(0, line.rfind(' '))};
		const std::string labels = m[2].str();
		for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it)
			s.labels[(*it)[1].str()] = (*it)[2].str();
		out.push_back(std::move(s));
	}
	return out;
}

struct BigHost {
	hwsig_test::FixtureExport fx;
	Snapshot base; // the fixture's own series and the synthetic host-wide ones
	CulpritPicks picks;

	explicit BigHost(unsigned step = 1)
	    : fx(hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/xeon-2s-256cpu-8node", false))
	{
		hwsig_test::add_synthetic_series(fx.snapshot, {});
		base = fx.snapshot;
		refresh(step);
	}

	// The same host later: every count grown, no scope added or gone.
	void refresh(unsigned step)
	{
		fx.snapshot = base;
		fx.vms = hwsig_test::add_guests(fx.snapshot, kVms, kVcpus, kDisks, step);
	}

	std::string render(const ExportSwitches &sw = {})
	{
		ExportInput in = fx.input(sw.per_cpu);
		in.switches = sw;
		in.culprit_picks = &picks;
		return render_prometheus(in, ExpositionFormat::Prometheus004);
	}
};

// The fixture's own shape: what the formula needs besides VMs and disks.
HostShape shape_of(const Snapshot &snap)
{
	HostShape h;
	std::set<std::string> sockets, nodes, sizes, zones;
	for (const auto &[name, series] : snap.gauges())
		for (const auto &[scope, v] : series.by_scope) {
			const Scope s = Scope::parse(scope);
			if (s.kind() == Scope::Kind::Hugepages)
				sizes.insert(scope);
			if (s.kind() == Scope::Kind::Zone)
				zones.insert(scope);
		}
	for (const auto &[name, series] : snap.counters())
		for (const auto &[scope, v] : series.by_scope) {
			const Scope s = Scope::parse(scope);
			if (s.kind() == Scope::Kind::Socket)
				sockets.insert(scope);
			if (s.kind() == Scope::Kind::Node)
				nodes.insert(scope);
		}
	h.sockets = static_cast<unsigned>(sockets.size());
	h.nodes = static_cast<unsigned>(nodes.size());
	h.hugepage_sizes = static_cast<unsigned>(sizes.size());
	h.zones = static_cast<unsigned>(zones.size());
	std::set<std::string> devices;
	if (auto it = snap.counters().find(series::kIoReads); it != snap.counters().end())
		for (const auto &[scope, v] : it->second.by_scope)
			if (Scope::kind_of(scope) == Scope::Kind::Dev)
				devices.insert(scope);
	h.devices = static_cast<unsigned>(devices.size()); // kDisks and the synthetic host's 2
	h.vms = kVms;
	h.vcpus_per_vm = kVcpus;
	h.queues_per_vm = 2;
	return h;
}

// The families that are not the registry's: hwsigd's own and the notes.
bool unlisted(const std::string &family)
{
	return family == "hwsig_unavailable" || family.rfind("hwsig_kmod_", 0) == 0;
}

} // namespace

TEST_CASE("a big host stays within the series budget by default", "[render][budget][fixture]")
{
	BigHost host;
	const auto all = samples(host.render());
	std::map<std::string, std::size_t> per_vm, per_device, per_family;
	std::size_t rest = 0;
	for (const Sample &s : all) {
		++per_family[s.family];
		if (auto vm = s.labels.find("vm"); vm != s.labels.end())
			++per_vm[vm->second];
		else if (auto dev = s.labels.find("device"); dev != s.labels.end())
			++per_device[dev->second];
		else
			++rest;
	}
	INFO(all.size() << " series: " << rest << " host-wide");
	REQUIRE(per_vm.size() == kVms);
	const HostShape shape = shape_of(host.fx.snapshot);
	REQUIRE(per_device.size() == shape.devices);
	REQUIRE(shape.devices >= kDisks);
	for (const auto &[vm, n] : per_vm) {
		INFO(vm);
		CHECK(n <= 25);
	}
	for (const auto &[dev, n] : per_device) {
		INFO(dev);
		CHECK(n <= 40);
	}
	CHECK(rest <= 1500);
	CHECK(all.size() <= 6000);

	// Each family has what the documented formula says: exactly for the
	// families that grow with VMs and devices, at most for the host's
	// (a node without huge pages of a size, an Intel host's DRAM counted
	// as reads and writes rather than hwsig_dram_bytes_total).
	const auto rows = prometheus_families();
	std::size_t predicted = 0, vm_formula = 0, device_formula = 0;
	for (const FamilyRow &row : rows) {
		if (unlisted(row.family))
			continue;
		INFO(row.family << ": " << count_text(row));
		const std::size_t n = series_count(row, shape, rows);
		if (row.per == CountPer::Vm || row.per == CountPer::Device)
			CHECK(per_family[row.family] == n);
		else
			CHECK(per_family[row.family] <= n);
		predicted += n;
		if (row.per == CountPer::Vm)
			vm_formula += n / kVms;
		if (row.per == CountPer::Device)
			device_formula += n / shape.devices;
	}
	std::size_t exported = 0;
	for (const auto &[family, n] : per_family)
		if (!unlisted(family) && family.rfind("hwsig_", 0) == 0)
			exported += n;
	CHECK(exported <= predicted);
	// The budget holds by the formula too, whatever a host's hardware.
	CHECK(vm_formula <= 25);
	CHECK(device_formula <= 40);
	CHECK(predicted <= 6000);
}

TEST_CASE("the series of a steady host stay the same across 100 scrapes", "[render][budget][fixture]")
{
	BigHost host;
	auto set_of = [](const std::string &text) {
		std::set<std::string> out;
		for (const Sample &s : samples(text))
			out.insert(s.line);
		return out;
	};
	const auto first = set_of(host.render());
	REQUIRE(first.size() > 3000);
	for (unsigned step = 2; step <= 100; ++step) {
		host.refresh(step);
		INFO("scrape " << step);
		REQUIRE(set_of(host.render()) == first);
	}
}

TEST_CASE("each switch adds the series its row counts", "[render][budget][fixture]")
{
	BigHost host;
	const std::size_t base = samples(host.render()).size();
	const auto rows = prometheus_families();
	HostShape shape = shape_of(host.fx.snapshot);
	auto needing = [&](const std::string &sw) {
		std::size_t n = 0;
		for (FamilyRow row : rows)
			if (row.needs == sw) {
				row.needs.clear();
				n += series_count(row, shape, rows);
			}
		return n;
	};
	SECTION("per-vcpu: 2 per vCPU")
	{
		ExportSwitches sw;
		sw.per_vcpu = true;
		CHECK(needing("per-vcpu") == 2u * kVms * kVcpus);
		CHECK(samples(host.render(sw)).size() == base + needing("per-vcpu"));
	}
	SECTION("vm-detail: the rest of the per-VM families")
	{
		ExportSwitches sw;
		sw.vm_detail = true;
		CHECK(samples(host.render(sw)).size() == base + needing("vm-detail"));
	}
	SECTION("culprit-matrix: every pair, both counters")
	{
		ExportSwitches sw;
		sw.culprit_matrix = true;
		// The named waits of every pair instead of the top 2, the preemption
		// classes, and the named preemptions.
		const std::size_t pairs = std::size_t{kVms} * (kVms - 1);
		CHECK(samples(host.render(sw)).size() == base - 2 * kVms + pairs + 5 * kVms + pairs);
	}
	SECTION("culprit-top 0: no named culprit")
	{
		ExportSwitches sw;
		sw.culprit_top = 0;
		CHECK(samples(host.render(sw)).size() == base - 2 * kVms);
	}
	SECTION("per-queue: the queues instead of the VM sums")
	{
		ExportSwitches sw;
		sw.per_queue = true;
		const auto all = samples(host.render(sw));
		std::size_t queues = 0, vm_vhost = 0;
		for (const Sample &s : all) {
			if (s.labels.count("queue") && s.labels.at("vm").rfind("vm", 0) == 0)
				++queues; // not the synthetic host's queues of pid 4242
			if (s.family.rfind("hwsig_vm_vhost", 0) == 0)
				++vm_vhost;
		}
		CHECK(vm_vhost == 0);
		// rx: buffers (4 coarse + 3) and stalls; tx: depth (4 coarse + 3).
		CHECK(queues == kVms * (7 + 1 + 7));
	}
	SECTION("text-buckets full: every bucket of the per-VM and per-device histograms")
	{
		ExportSwitches sw;
		sw.full_text_buckets = true;
		// runq_wait per VM: 26 finite buckets instead of 2; per device:
		// latency and queue 26 instead of 6 and 3, size 19 instead of 3,
		// seek 47 instead of 3.
		const std::size_t more = kVms * (26 - 2) + shape.devices * ((26 - 6) + (26 - 3) + (19 - 3) + (47 - 3));
		CHECK(samples(host.render(sw)).size() == base + more);
	}
}

TEST_CASE("culprits export per victim by class, and a stable top few by name", "[render][budget]")
{
	Snapshot snap;
	std::vector<Vm> vms;
	for (const char *name : {"a", "b", "c", "d"}) {
		Vm vm;
		vm.pid = static_cast<int>(vms.size()) + 100;
		vm.name = name;
		vms.push_back(vm);
	}
	auto cell = [](const char *victim, const std::string &who) {
		return Scope::vm(victim).str() + "/culprit:" + who;
	};
	auto fill = [&](Snapshot &s, double b, double c, double d) {
		using namespace series;
		s.add_counter(kVmWaitBehindNs, cell("a", "vm:a"), 5e9, "bpf");
		s.add_counter(kVmWaitBehindNs, cell("a", "vm:b"), b, "bpf");
		s.add_counter(kVmWaitBehindNs, cell("a", "vm:c"), c, "bpf");
		s.add_counter(kVmWaitBehindNs, cell("a", "vm:d"), d, "bpf");
		s.add_counter(kVmWaitBehindNs, cell("a", "host:kernel"), 1e9, "bpf");
		s.add_counter(kVmWaitBehindNs, cell("a", "idle"), 2e9, "bpf");
	};
	fill(snap, 10e9, 20e9, 15e9);
	ExportInput in;
	in.snapshot = &snap;
	in.vms = &vms;
	CulpritPicks picks;
	in.culprit_picks = &picks;
	auto lines = [&] {
		std::map<std::string, std::string> out;
		for (const Sample &s : samples(render_prometheus(in, ExpositionFormat::Prometheus004)))
			if (s.family.find("wait_behind") != std::string::npos)
				out[s.line] = "";
		return out;
	};
	const std::string text = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(text.find("hwsig_vm_wait_behind_seconds_total{vm=\"a\",culprit=\"self\"} 5\n") != std::string::npos);
	CHECK(text.find("hwsig_vm_wait_behind_seconds_total{vm=\"a\",culprit=\"other_vm\"} 45\n") != std::string::npos);
	CHECK(text.find("hwsig_vm_wait_behind_seconds_total{vm=\"a\",culprit=\"host:kernel\"} 1\n") != std::string::npos);
	CHECK(text.find("hwsig_vm_wait_behind_seconds_total{vm=\"a\",culprit=\"host:vhost\"} 0\n") != std::string::npos);
	CHECK(text.find("hwsig_vm_wait_behind_seconds_total{vm=\"a\",culprit=\"idle\"} 2\n") != std::string::npos);
	// A VM without a cell has no classes (the BPF program may not track
	// it): its wait is unknown, not 0.
	CHECK(text.find("hwsig_vm_wait_behind_seconds_total{vm=\"d\"") == std::string::npos);
	// The top 2 other VMs: c (20 s) and d (15 s).
	CHECK(text.find("hwsig_vm_wait_behind_vm_seconds_total{vm=\"a\",culprit_vm=\"c\"} 20\n") != std::string::npos);
	CHECK(text.find("hwsig_vm_wait_behind_vm_seconds_total{vm=\"a\",culprit_vm=\"d\"} 15\n") != std::string::npos);
	CHECK(text.find("culprit_vm=\"b\"") == std::string::npos);
	CHECK(text.find("culprit_vm=\"a\"") == std::string::npos); // itself: the self class
	const auto before = lines();

	// b passes d, but not by twice: the picks hold.
	Snapshot later;
	fill(later, 25e9, 30e9, 16e9);
	in.snapshot = &later;
	std::string t = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(t.find("culprit_vm=\"d\"} 16\n") != std::string::npos);
	CHECK(t.find("culprit_vm=\"b\"") == std::string::npos);
	// Without picks kept, the ranking alone would have traded d for b.
	in.culprit_picks = nullptr;
	t = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(t.find("culprit_vm=\"b\"} 25\n") != std::string::npos);
	CHECK(t.find("culprit_vm=\"d\"") == std::string::npos);

	// b at more than twice d: it takes d's place.
	in.culprit_picks = &picks;
	Snapshot much_later;
	fill(much_later, 40e9, 45e9, 17e9);
	in.snapshot = &much_later;
	t = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(t.find("culprit_vm=\"b\"} 40\n") != std::string::npos);
	CHECK(t.find("culprit_vm=\"c\"} 45\n") != std::string::npos);
	CHECK(t.find("culprit_vm=\"d\"") == std::string::npos);
	CHECK(before.size() == lines().size());
}

TEST_CASE("coarse buckets are the cumulative counts at their bounds", "[render][budget]")
{
	Snapshot snap;
	std::vector<int> slots(27, 0);
	slots[3] = 7;   // [8, 16) us
	slots[9] = 5;   // [512, 1024) us: under le 0.001024
	slots[10] = 4;  // [1024, 2048) us
	slots[14] = 2;  // [16384, 32768) us: over le 0.016384
	slots[26] = 1;  // clamped
	snap.add_histogram(series::kRunqWaitUs, "vm:web",
			   Histogram::from_slots(Histogram::Layout::Log2, slots.data(), slots.size()), "bpf");
	std::vector<Vm> vms(1);
	vms[0].pid = 7;
	vms[0].name = "web";
	ExportInput in;
	in.snapshot = &snap;
	in.vms = &vms;
	const std::string t = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(t.find("hwsig_vm_runq_wait_seconds_bucket{vm=\"web\",le=\"0.001024\"} 12\n") != std::string::npos);
	CHECK(t.find("hwsig_vm_runq_wait_seconds_bucket{vm=\"web\",le=\"0.016384\"} 16\n") != std::string::npos);
	CHECK(t.find("hwsig_vm_runq_wait_seconds_bucket{vm=\"web\",le=\"+Inf\"} 19\n") != std::string::npos);
	CHECK(t.find("hwsig_vm_runq_wait_seconds_count{vm=\"web\"} 19\n") != std::string::npos);
	std::size_t buckets = 0;
	for (std::size_t at = t.find("hwsig_vm_runq_wait_seconds_bucket"); at != std::string::npos;
	     at = t.find("hwsig_vm_runq_wait_seconds_bucket", at + 1))
		++buckets;
	CHECK(buckets == 3);
	// The same snapshot with every bucket: the counts at those bounds agree.
	in.switches.full_text_buckets = true;
	const std::string full = render_prometheus(in, ExpositionFormat::Prometheus004);
	CHECK(full.find("hwsig_vm_runq_wait_seconds_bucket{vm=\"web\",le=\"0.001024\"} 12\n") != std::string::npos);
	CHECK(full.find("hwsig_vm_runq_wait_seconds_bucket{vm=\"web\",le=\"0.000512\"} 7\n") != std::string::npos);
	CHECK(full.find("hwsig_vm_runq_wait_seconds_sum{vm=\"web\"}") != std::string::npos);
}

TEST_CASE("prometheus.rst's budget table is the listing's", "[render][budget][doc]")
{
	std::ifstream f(std::string(HWSIG_SOURCE_DIR) + "/Documentation/prometheus.rst");
	REQUIRE(f);
	std::stringstream ss;
	ss << f.rdbuf();
	const std::string doc = ss.str();
	const std::string begin = ".. budget-table-begin", end = ".. budget-table-end";
	const auto b = doc.find(begin), e = doc.find(end);
	REQUIRE(b != std::string::npos);
	REQUIRE(e != std::string::npos);
	std::set<std::string> documented;
	std::istringstream in(doc.substr(b, e - b));
	for (std::string line; std::getline(in, line);)
		if (line.rfind("   \"hwsig_", 0) == 0)
			documented.insert(line.substr(3));
	std::set<std::string> listed;
	for (const FamilyRow &row : prometheus_families()) {
		std::string labels;
		for (const auto &l : row.labels)
			labels += (labels.empty() ? "" : ", ") + l;
		listed.insert("\"" + row.family + "\", \"" + labels + "\", \"" + count_text(row) + "\", \"" + row.needs +
			      "\"");
	}
	for (const auto &row : listed) {
		INFO("listed, not in prometheus.rst's table: " << row);
		CHECK(documented.count(row) == 1);
	}
	for (const auto &row : documented) {
		INFO("in prometheus.rst's table, not listed: " << row);
		CHECK(listed.count(row) == 1);
	}
}
