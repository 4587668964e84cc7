// The vhost collector's userspace side on the host (no vhost here): the
// LinearLog2 depth slots and their percentiles, queue naming, per-VM and
// system aggregation through derive(), and the reasons given when vhost is
// not there. Documentation/vhost.rst is the specification.
#include <catch2/catch.hpp>

#include <linux/types.h>

#include <random>

#include "derive_check.h"
#include "hwsig/derive.h"
#include "hwsig/error.h"
#include "hwsig/series.h"
#include "hwsig/vhost.h"
#include "test_procfs_tree.h"

// The slot function the BPF program uses, compiled here too.
#include "../../bpf/hwsig_vhost.h"

#ifdef HWSIG_HAVE_BPF
#include "hwsig/source_bpf.h"
#include "vhost_collector.h"
#endif

using namespace hwsig;
using procfs_test::TempTree;

namespace {

Histogram depths(const std::vector<std::pair<unsigned, std::uint64_t>> &values)
{
	Histogram h;
	h.layout = Histogram::Layout::LinearLog2;
	h.counts.assign(HWSIG_VHOST_SLOTS, 0);
	for (auto [v, n] : values)
		h.counts[hwsig_vhost_slot(v)] += n;
	return h;
}

// Nearest rank of sorted samples: the r-th smallest, r = ceil(q * n).
unsigned true_percentile(std::vector<unsigned> v, double q)
{
	std::sort(v.begin(), v.end());
	auto r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()) - 1e-9));
	return v[r < 1 ? 0 : r - 1];
}

VhostQueueCounts counts(const std::vector<std::pair<unsigned, std::uint64_t>> &values,
			std::uint64_t stalls = 0)
{
	VhostQueueCounts c;
	c.depth = depths(values);
	c.samples = c.depth.total();
	c.handled = c.samples;
	c.stalls = stalls;
	return c;
}

VhostQueueKey key(std::uint32_t owner, std::uint32_t worker, bool tx)
{
	VhostQueueKey k;
	k.owner_tgid = owner;
	k.worker_tid = worker;
	k.queue = tx ? 1 : 0;
	k.tx = tx;
	return k;
}

Vm vm(int pid, const std::string &name, std::vector<int> vhost_tids = {})
{
	Vm v;
	v.pid = pid;
	v.name = name;
	v.vhost_tids = std::move(vhost_tids);
	return v;
}

const Metric *find(const Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == scope)
			return &m;
	return nullptr;
}

const UnavailableNote *find_note(const Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &u : iv.unavailable)
		if (u.id == id && u.scope == scope)
			return &u;
	return nullptr;
}

Snapshot snapshot_at(double seconds, const std::map<VhostQueueKey, VhostQueueCounts> &queues,
		     const std::vector<Vm> &vms, const VhostRetired &retired = {}, const std::string &sums_unavailable = {})
{
	Snapshot s;
	s.mono_ns = static_cast<std::uint64_t>(seconds * 1e9);
	auto views = name_vhost_queues(queues, &vms, nullptr);
	add_vhost_series(s, views, &vms, retired, sums_unavailable);
	return s;
}

} // namespace

TEST_CASE("vhost depth slots: exact below 64, log2 above, every u16 depth", "[vhost][histogram]")
{
	for (unsigned d = 0; d <= 0xffff; ++d) {
		unsigned slot = hwsig_vhost_slot(d);
		REQUIRE(slot < HWSIG_VHOST_SLOTS);
		REQUIRE(slot == Histogram::linear_log2_slot(d));
		Histogram h;
		h.layout = Histogram::Layout::LinearLog2;
		auto [lo, hi] = h.slot_range(slot);
		REQUIRE(lo <= d);
		REQUIRE(d < hi);
	}
	Histogram h;
	h.layout = Histogram::Layout::LinearLog2;
	CHECK(h.slot_range(0) == std::make_pair(0.0, 1.0));
	CHECK(h.slot_range(63) == std::make_pair(63.0, 64.0));
	CHECK(h.slot_range(64) == std::make_pair(64.0, 128.0));
	CHECK(h.slot_range(65) == std::make_pair(128.0, 256.0));
	CHECK(h.slot_range(73) == std::make_pair(32768.0, 65536.0));
	CHECK(hwsig_vhost_slot(65535) == 73);
}

TEST_CASE("vhost depth percentiles are exact integers below 64", "[vhost][histogram]")
{
	// 200 samples of 8: 8, not 8.5 (a slot's range is [8, 9)).
	Histogram eight = depths({{8, 200}});
	CHECK(*percentile(eight, 0.50) == 8.0);
	CHECK(*percentile(eight, 0.99) == 8.0);
	CHECK(*percentile(eight, 0.0) == 8.0);
	CHECK(*percentile(eight, 1.0) == 8.0);
	// tx:90:4 tx:10:32: p50 4, p99 32 (rank 99 of 100 is a 32).
	Histogram mixed = depths({{4, 90}, {32, 10}});
	CHECK(*percentile(mixed, 0.50) == 4.0);
	CHECK(*percentile(mixed, 0.90) == 4.0);
	CHECK(*percentile(mixed, 0.91) == 32.0);
	CHECK(*percentile(mixed, 0.99) == 32.0);
	// One 0 and five 1s (an rxstall:Q:5 run): p50 1, p0 0.
	Histogram rx = depths({{0, 1}, {1, 5}});
	CHECK(*percentile(rx, 0.50) == 1.0);
	CHECK(*percentile(rx, 0.0) == 0.0);
	// 0.07 * 100 is 7.000000000000001 in doubles: still rank 7.
	Histogram hundred = depths({{1, 7}, {2, 93}});
	CHECK(*percentile(hundred, 0.07) == 1.0);
	CHECK_FALSE(percentile(depths({}), 0.5));
}

TEST_CASE("vhost depth percentiles above 64 stay within the slot (factor 2)", "[vhost][histogram]")
{
	// All samples of one value in a log2 slot: the estimate lies in the slot.
	for (unsigned v : {64u, 100u, 127u, 200u, 1000u, 40000u, 65535u}) {
		Histogram h = depths({{v, 50}});
		double p = *percentile(h, 0.5);
		auto [lo, hi] = h.slot_range(hwsig_vhost_slot(v));
		CHECK(p >= lo);
		CHECK(p <= hi - 1);
		CHECK(p == std::floor(p)); // an integer depth
		CHECK(std::fabs(p - v) <= lo - 1);
	}
	// Evenly spread samples are estimated closely: 64..127 once each.
	std::vector<std::pair<unsigned, std::uint64_t>> spread;
	for (unsigned v = 64; v < 128; ++v)
		spread.push_back({v, 1});
	CHECK(*percentile(depths(spread), 0.5) == 95.0);
	// Random mixtures: the estimate is in the true value's slot, exact below 64.
	std::mt19937 rng(42);
	for (int round = 0; round < 200; ++round) {
		std::vector<unsigned> samples;
		std::map<unsigned, std::uint64_t> by_value;
		int n = 1 + static_cast<int>(rng() % 300);
		unsigned spread_max = round % 2 ? 64 : 4096;
		for (int i = 0; i < n; ++i) {
			unsigned v = rng() % spread_max;
			samples.push_back(v);
			by_value[v]++;
		}
		Histogram h = depths({by_value.begin(), by_value.end()});
		for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 1.0}) {
			unsigned want = true_percentile(samples, q);
			double got = *percentile(h, q);
			if (want < 64) {
				REQUIRE(got == want);
			} else {
				REQUIRE(hwsig_vhost_slot(static_cast<unsigned>(got)) == hwsig_vhost_slot(want));
				REQUIRE(std::fabs(got - want) < want);
			}
		}
	}
}

TEST_CASE("vhost queue scopes: owner, index, direction", "[vhost]")
{
	CHECK(vhost_queue_scope(1234, 0, false) == "vq:1234:0:rx");
	CHECK(vhost_queue_scope(1234, 3, true) == "vq:1234:3:tx");

	std::map<VhostQueueKey, VhostQueueCounts> q;
	// VM 100 with two vhost-net devices (workers 150 and 120), VM 200 with one.
	q[key(100, 150, false)] = counts({{1, 1}});
	q[key(100, 150, true)] = counts({{2, 1}});
	q[key(100, 120, false)] = counts({{3, 1}});
	q[key(100, 120, true)] = counts({{4, 1}});
	q[key(200, 210, true)] = counts({{5, 1}});
	std::vector<Vm> vms = {vm(100, "web"), vm(200, "db")};
	auto views = name_vhost_queues(q, &vms, nullptr);
	REQUIRE(views.size() == 5);
	std::map<std::string, const VhostQueueView *> by_scope;
	for (const auto &v : views)
		by_scope[v.scope] = &v;
	// Pairs in worker-tid order: worker 120 is pair 0, 150 pair 1.
	REQUIRE(by_scope.count("vq:100:0:rx"));
	CHECK(by_scope["vq:100:0:rx"]->key.worker_tid == 120);
	CHECK(by_scope["vq:100:1:tx"]->key.worker_tid == 120);
	CHECK(by_scope["vq:100:2:rx"]->key.worker_tid == 150);
	CHECK(by_scope["vq:100:3:tx"]->key.worker_tid == 150);
	CHECK(by_scope["vq:100:3:tx"]->pair == 1);
	CHECK(by_scope["vq:100:3:tx"]->vm_scope == "vm:web");
	CHECK(by_scope["vq:200:1:tx"]->vm_scope == "vm:db");
	CHECK(by_scope["vq:200:1:tx"]->counts.depth.counts[5] == 1);
}

TEST_CASE("vhost queues without a kernel owner: VM's vhost_tids, then /proc, then the worker", "[vhost]")
{
	std::map<VhostQueueKey, VhostQueueCounts> q;
	q[key(0, 300, false)] = counts({{1, 1}}); // listed by discovery under VM 30
	q[key(0, 400, false)] = counts({{1, 1}}); // resolved by the callback
	q[key(0, 500, false)] = counts({{1, 1}}); // nobody knows: its own tid
	std::vector<Vm> vms = {vm(30, "a", {300})};
	auto views = name_vhost_queues(q, &vms, [](std::uint32_t tid) -> std::optional<int> {
		if (tid == 400)
			return 40;
		return std::nullopt;
	});
	REQUIRE(views.size() == 3);
	CHECK(views[0].scope == "vq:30:0:rx");
	CHECK(views[0].vm_scope == "vm:a");
	CHECK(views[1].scope == "vq:40:0:rx");
	CHECK(views[1].vm_scope.empty());
	CHECK(views[2].scope == "vq:500:0:rx");
}

TEST_CASE("vhost worker owner from /proc: comm vhost-N, then N's Tgid", "[vhost]")
{
	TempTree t;
	t.put("proc/77/comm", "vhost-61\n");
	t.put("proc/61/status", "Name:\tqemu-system-x86\nTgid:\t60\nPid:\t61\n");
	t.put("proc/78/comm", "kworker/0:1\n");
	t.put("proc/79/comm", "vhost-99\n"); // its owner thread is gone
	t.put("proc/81/comm", "vhost-99\n"); // 6.4+: a thread of its owner
	t.put("proc/81/status", "Name:\tvhost-99\nTgid:\t70\nPid:\t81\n");
	CHECK(vhost_worker_owner(t.root(), 77) == 60);
	CHECK_FALSE(vhost_worker_owner(t.root(), 78));
	CHECK_FALSE(vhost_worker_owner(t.root(), 79));
	CHECK_FALSE(vhost_worker_owner(t.root(), 80));
	CHECK(vhost_worker_owner(t.root(), 81) == 70);
}

TEST_CASE("vhost series derive per queue, per VM and system", "[vhost][derive]")
{
	std::vector<Vm> vms = {vm(100, "web"), vm(200, "db"), vm(300, "novhost")};
	std::map<VhostQueueKey, VhostQueueCounts> q0, q1;
	// Before: some history.
	q0[key(100, 110, false)] = counts({{0, 5}}, 2);
	q0[key(100, 110, true)] = counts({{4, 10}});
	q0[key(200, 210, false)] = counts({{1, 1}}, 1);
	q0[key(200, 210, true)] = counts({{1, 1}});
	// After 2 s: web TX did tx:90:4 + tx:10:32, web RX rxstall:16:5 (1 x 0,
	// 5 x 1, 6 stalls); db TX 20 x 8, RX idle.
	q1 = q0;
	q1[key(100, 110, true)] += counts({{4, 90}, {32, 10}});
	q1[key(100, 110, false)] += counts({{0, 1}, {1, 5}}, 6);
	q1[key(200, 210, true)] += counts({{8, 20}});
	Snapshot a = snapshot_at(10, q0, vms), b = snapshot_at(12, q1, vms);
	Interval iv = checked_derive(a, b, vhost_metric_ids());

	auto value = [&](const char *id, const std::string &scope) -> std::optional<double> {
		const Metric *m = find(iv, id, scope);
		return m ? std::optional<double>(m->value) : std::nullopt;
	};
	CHECK(value("vhost.queue_depth_p50", "vq:100:1:tx") == 4.0);
	CHECK(value("vhost.queue_depth_p99", "vq:100:1:tx") == 32.0);
	// RX: the free buffers (1 x 0, 5 x 1), under their own ids.
	CHECK(value("vhost.rx_buffers_p50", "vq:100:0:rx") == 1.0);
	CHECK(value("vhost.rx_buffers_p1", "vq:100:0:rx") == 0.0);
	CHECK(value("vhost.rx_empty_ratio", "vq:100:0:rx") == Approx(1.0 / 6));
	CHECK_FALSE(value("vhost.queue_depth_p50", "vq:100:0:rx"));
	REQUIRE(find_note(iv, "vhost.queue_depth_p99", "vq:100:0:rx"));
	CHECK(find_note(iv, "vhost.queue_depth_p99", "vq:100:0:rx")->reason.rfind("RX queue", 0) == 0);
	CHECK(value("vhost.ring_stalls_ps", "vq:100:0:rx") == Approx(3.0)); // 6 in 2 s
	CHECK(value("vhost.queue_depth_p50", "vq:200:1:tx") == 8.0);
	CHECK(value("vhost.ring_stalls_ps", "vq:200:0:rx") == Approx(0.0));
	// db RX was idle: no buffer percentile, and derive says why.
	CHECK_FALSE(value("vhost.rx_buffers_p50", "vq:200:0:rx"));
	REQUIRE(find_note(iv, "vhost.rx_buffers_p50", "vq:200:0:rx"));
	REQUIRE(find_note(iv, "vhost.rx_empty_ratio", "vq:200:0:rx"));
	// TX has no stalls by definition: a note, not a zero.
	CHECK_FALSE(value("vhost.ring_stalls_ps", "vq:100:1:tx"));
	const UnavailableNote *tx = find_note(iv, "vhost.ring_stalls_ps", "vq:100:1:tx");
	REQUIRE(tx);
	CHECK(tx->reason.find("TX") != std::string::npos);
	// Per VM: web's TX queues merged (90 x 4, 10 x 32 -> p50 4, p99 32),
	// its RX queues apart, stalls summed.
	CHECK(value("vhost.rx_buffers_p50", "vm:web") == 1.0);
	CHECK(value("vhost.rx_empty_ratio", "system") == Approx(1.0 / 6));
	CHECK(value("vhost.queue_depth_p50", "vm:web") == 4.0);
	CHECK(value("vhost.queue_depth_p99", "vm:web") == 32.0);
	CHECK(value("vhost.ring_stalls_ps", "vm:web") == Approx(3.0));
	CHECK(value("vhost.queue_depth_p50", "vm:db") == 8.0);
	CHECK(value("vhost.ring_stalls_ps", "vm:db") == Approx(0.0));
	// System: every TX queue (web's 100 and db's 20 x 8).
	CHECK(value("vhost.queue_depth_p50", "system") == 4.0);
	CHECK(value("vhost.queue_depth_p99", "system") == 32.0);
	CHECK(value("vhost.ring_stalls_ps", "system") == Approx(3.0));
	// A VM without vhost-net queues is named, not silently missing.
	const UnavailableNote *none = find_note(iv, "vhost.queue_depth_p50", "vm:novhost");
	REQUIRE(none);
	CHECK(none->reason.find("no vhost-net virtqueue") != std::string::npos);
}

TEST_CASE("vhost RX: the low end of the free buffers, never their high end as a queue depth", "[vhost][derive]")
{
	// A healthy guest keeps 200 receive buffers posted; in 5 handle_rx
	// runs of 100 it had none. TX runs with 3 packets queued. The RX
	// depth's p99 (~200) is the healthy end: it must not be reported as
	// the queue depth of the queue, the VM or the host, where it would
	// cross the saturation threshold (vhost.depth_p99, 192).
	std::vector<Vm> vms = {vm(100, "web")};
	std::map<VhostQueueKey, VhostQueueCounts> q0, q1;
	q0[key(100, 110, false)] = counts({});
	q0[key(100, 110, true)] = counts({});
	q1[key(100, 110, false)] = counts({{200, 95}, {0, 5}}, 5);
	q1[key(100, 110, true)] = counts({{3, 100}});
	Interval iv = checked_derive(snapshot_at(10, q0, vms), snapshot_at(11, q1, vms), vhost_metric_ids());
	for (const char *scope : {"vq:100:0:rx", "vm:web", "system"}) {
		INFO(scope);
		const Metric *p1 = find(iv, "vhost.rx_buffers_p1", scope);
		REQUIRE(p1);
		CHECK(p1->value == 0.0); // 5 % of the runs found the ring empty
		const Metric *empty = find(iv, "vhost.rx_empty_ratio", scope);
		REQUIRE(empty);
		CHECK(empty->value == Approx(0.05));
		const Metric *p50 = find(iv, "vhost.rx_buffers_p50", scope);
		REQUIRE(p50);
		CHECK(p50->value >= 128);
		CHECK(p50->value <= 255);
	}
	CHECK_FALSE(find(iv, "vhost.queue_depth_p99", "vq:100:0:rx"));
	for (const char *scope : {"vq:100:1:tx", "vm:web", "system"}) {
		INFO(scope);
		const Metric *p99 = find(iv, "vhost.queue_depth_p99", scope);
		REQUIRE(p99);
		CHECK(p99->value == 3.0);
	}
	// A TX queue has no receive buffers: said, not zero.
	REQUIRE(find_note(iv, "vhost.rx_buffers_p1", "vq:100:1:tx"));
	CHECK_FALSE(find(iv, "vhost.rx_buffers_p1", "vq:100:1:tx"));
}

TEST_CASE("vhost behind a vIOMMU: depth not sampled, said so, stalls still counted", "[vhost][derive]")
{
	std::vector<Vm> vms = {vm(100, "web")};
	std::map<VhostQueueKey, VhostQueueCounts> q0, q1;
	auto iommu = [](std::uint64_t runs, std::uint64_t stalls) {
		VhostQueueCounts c;
		c.handled = runs;
		c.viommu = runs;
		c.stalls = stalls;
		return c;
	};
	q0[key(100, 110, false)] = iommu(0, 0);
	q0[key(100, 110, true)] = iommu(0, 0);
	q1[key(100, 110, false)] = iommu(10, 4);
	q1[key(100, 110, true)] = iommu(30, 0);
	Interval iv = checked_derive(snapshot_at(10, q0, vms), snapshot_at(12, q1, vms), vhost_metric_ids());
	for (auto [id, scope] : std::vector<std::pair<const char *, const char *>>{
		     {"vhost.queue_depth_p50", "vq:100:1:tx"},
		     {"vhost.queue_depth_p99", "vm:web"},
		     {"vhost.rx_buffers_p1", "vq:100:0:rx"},
		     {"vhost.rx_empty_ratio", "vm:web"},
		     {"vhost.rx_buffers_p50", "system"}}) {
		INFO(id << " " << scope);
		CHECK_FALSE(find(iv, id, scope));
		const UnavailableNote *n = find_note(iv, id, scope);
		REQUIRE(n);
		CHECK(n->reason.find("vIOMMU") != std::string::npos);
	}
	const Metric *stalls = find(iv, "vhost.ring_stalls_ps", "vq:100:0:rx");
	REQUIRE(stalls);
	CHECK(stalls->value == Approx(2.0));
}

TEST_CASE("vhost per-VM sums keep retired queues: no reset when a device goes", "[vhost][derive]")
{
	std::vector<Vm> vms = {vm(100, "web")};
	std::map<VhostQueueKey, VhostQueueCounts> q0, q1;
	q0[key(100, 110, true)] = counts({{4, 10}});
	q0[key(100, 120, true)] = counts({{8, 10}});
	// The device of worker 120 is gone; its counts were retired.
	q1[key(100, 110, true)] = counts({{4, 30}});
	VhostRetired retired;
	retired.add(100, q0[key(100, 120, true)], true);
	Interval iv = checked_derive(snapshot_at(10, q0, vms), snapshot_at(12, q1, vms, retired), vhost_metric_ids());
	const Metric *m = find(iv, "vhost.queue_depth_p50", "vm:web");
	REQUIRE(m);
	CHECK(m->value == 4.0);
	CHECK_FALSE(find_note(iv, "vhost.queue_depth_p50", "vm:web"));
	CHECK(find(iv, "vhost.queue_depth_p50", "system"));
}

TEST_CASE("vhost table full: the queues keep their values, no VM or system sum", "[vhost][derive]")
{
	std::vector<Vm> vms = {vm(100, "web")};
	std::map<VhostQueueKey, VhostQueueCounts> q0, q1;
	q0[key(100, 110, true)] = counts({{4, 10}});
	q1[key(100, 110, true)] = counts({{4, 30}});
	const std::string why = "7 vhost handler runs not counted: the BPF table of virtqueues was full (4096)";
	Interval iv = checked_derive(snapshot_at(10, q0, vms), snapshot_at(12, q1, vms, {}, why), vhost_metric_ids());
	REQUIRE(find(iv, "vhost.queue_depth_p50", "vq:100:1:tx"));
	CHECK(find(iv, "vhost.queue_depth_p50", "vq:100:1:tx")->value == 4.0);
	for (const char *scope : {"vm:web", "system"}) {
		for (const auto &id : vhost_metric_ids()) {
			INFO(id << " at " << scope);
			CHECK_FALSE(find(iv, id, scope));
			REQUIRE(find_note(iv, id, scope));
			CHECK(find_note(iv, id, scope)->reason == why);
		}
	}
}

TEST_CASE("vhost not loaded: the reason, from the root's /sys", "[vhost]")
{
	TempTree t;
	t.mkdir("sys/module/tun");
	auto why = vhost_not_loaded_reason(t.root());
	REQUIRE(why);
	CHECK(why->find("vhost not loaded") == 0);
	t.mkdir("sys/module/vhost_net");
	CHECK_FALSE(vhost_not_loaded_reason(t.root()));
}

#ifdef HWSIG_HAVE_BPF
TEST_CASE("vhost source: 'vhost not loaded' for every id, nothing else, nothing thrown", "[vhost][bpf]")
{
	TempTree t;
	t.mkdir("proc");
	t.mkdir("sys/module");
	auto source = make_bpf_vhost_source();
	CHECK(source->name() == "bpf.vhost");
	CHECK(source->provides() == vhost_metric_ids());
	auto a = procfs_test::collect(*source, t.root(), nullptr, 10'000'000'000ull);
	for (const auto &id : vhost_metric_ids()) {
		auto why = procfs_test::note(a, id, "system");
		REQUIRE(why);
		CHECK(*why == "vhost not loaded (no vhost_net module)");
	}
	CHECK(a.histograms().empty());
	CHECK(a.counters().empty());
	auto b = procfs_test::collect(*source, t.root(), nullptr, 12'000'000'000ull);
	Interval iv = checked_derive(a, b, source->provides());
	CHECK(iv.metrics.empty());
	for (const auto &id : vhost_metric_ids()) {
		const UnavailableNote *u = find_note(iv, id, "system");
		REQUIRE(u);
		CHECK(u->reason == "vhost not loaded (no vhost_net module)");
	}
}

TEST_CASE("vhost source: loaded later, without module BTF: that reason, then retried on reload", "[vhost][bpf]")
{
	TempTree t;
	t.mkdir("proc");
	t.mkdir("sys/module");
	auto source = make_bpf_vhost_source();
	auto a = procfs_test::collect(*source, t.root());
	CHECK(procfs_test::note(a, "vhost.queue_depth_p50", "system") == "vhost not loaded (no vhost_net module)");
	// vhost_net appears (no BTF in this tree): the attach fails with the reason.
	t.mkdir("sys/module/vhost_net");
	auto b = procfs_test::collect(*source, t.root());
	auto why = procfs_test::note(b, "vhost.queue_depth_p99", "system");
	REQUIRE(why);
	CHECK(why->find("no BTF for module vhost") != std::string::npos);
	// Unloaded again: back to "not loaded".
	std::filesystem::remove(std::filesystem::path(t.root()) / "sys/module/vhost_net");
	auto c = procfs_test::collect(*source, t.root());
	CHECK(procfs_test::note(c, "vhost.ring_stalls_ps", "system") == "vhost not loaded (no vhost_net module)");
}

TEST_CASE("VhostCollector: not loaded is an Error with ENOENT and the reason", "[vhost][bpf]")
{
	TempTree t;
	t.mkdir("sys/module");
	try {
		VhostCollector probe(VhostAttach::Auto, t.root());
		FAIL("attached without vhost_net");
	} catch (const Error &e) {
		CHECK(e.err() == ENOENT);
		CHECK(std::string(e.what()).find("vhost not loaded") != std::string::npos);
	}
}

TEST_CASE("VhostCollector: the hooked functions must be vhost's own in kallsyms", "[vhost][bpf]")
{
	TempTree t;
	t.mkdir("sys/module/vhost_net");
	t.put("sys/kernel/btf/vhost", "");
	t.put("sys/kernel/btf/vhost_net", "");
	const std::string handlers = "ffffffffc0a01000 t handle_tx\t[vhost_net]\n"
				     "ffffffffc0a02000 t handle_rx\t[vhost_net]\n";
	auto error_of = [&] {
		try {
			VhostCollector probe(VhostAttach::Auto, t.root());
		} catch (const Error &e) {
			return std::pair<int, std::string>{e.err(), e.what()};
		}
		return std::pair<int, std::string>{0, "attached"};
	};
	// The stall hook is vhost_enable_notify (not vhost_get_vq_desc).
	t.put("proc/kallsyms", handlers + "ffffffffc0b01000 T vhost_get_vq_desc\t[vhost]\n");
	auto [err, what] = error_of();
	CHECK(err == ENOTUNIQ);
	CHECK(what.find("vhost_enable_notify is not a function of vhost") != std::string::npos);
	// Defined elsewhere too: attaching by name would be ambiguous.
	t.put("proc/kallsyms", handlers + "ffffffffc0b02000 T vhost_enable_notify\t[vhost]\n"
					  "ffffffffc0c02000 t vhost_enable_notify\t[other]\n");
	std::tie(err, what) = error_of();
	CHECK(err == ENOTUNIQ);
	CHECK(what.find("vhost_enable_notify is also defined in other") != std::string::npos);
}
#endif
