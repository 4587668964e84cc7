// Live tests of block requests per VM: two processes (standing in for two
// VMs' QEMU) read a loop device with O_DIRECT, a known number of requests
// each, at the same time; a third, not watched, reads too.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/series.h"
#include "hwsig/snapshot.h"
#include "hwsig/source_bpf.h"
#include "hwsig/vm.h"
#include "require_root.h"
#include "vmio_collector.h"
#include "workloads.h"

using namespace hwsig;
using hwsig_test::require_root;

namespace {

// A child that waits for a byte on `go`, then reads `n` random 4 KiB blocks
// of dev with O_DIRECT and exits 0 (non-zero: a failed read).
pid_t reader(int go, const std::string &dev, std::size_t n, unsigned seed, std::uint64_t span)
{
	pid_t pid = ::fork();
	if (pid != 0)
		return pid;
	char c;
	if (::read(go, &c, 1) != 1)
		::_exit(3);
	try {
		auto offsets = hwsig_test::random_offsets(n, 4096, span, seed);
		::_exit(hwsig_test::direct_reads(dev, offsets, 4096) == n ? 0 : 4);
	} catch (...) {
		::_exit(5);
	}
}

} // namespace

TEST_CASE("vmio: each VM's requests counted exactly, and its share of the disk", "[vmio][block]")
{
	require_root();
	hwsig_test::LoopDevice loop(64ull << 20);
	VmIoCollector collector;
	int go[2];
	REQUIRE(::pipe(go) == 0);
	constexpr std::size_t kAggressor = 3000, kVictim = 1000, kOther = 500;
	pid_t aggressor = reader(go[0], loop.path(), kAggressor, 1, loop.bytes());
	pid_t victim = reader(go[0], loop.path(), kVictim, 2, loop.bytes());
	pid_t other = reader(go[0], loop.path(), kOther, 3, loop.bytes());
	REQUIRE(collector.watch_vm(aggressor));
	REQUIRE(collector.watch_vm(victim));
	CHECK(collector.watched_vms().size() == 2);
	REQUIRE(::write(go[1], "xxx", 3) == 3);
	for (pid_t p : {aggressor, victim, other}) {
		int status = 0;
		REQUIRE(::waitpid(p, &status, 0) == p);
		CHECK(WIFEXITED(status));
		CHECK(WEXITSTATUS(status) == 0);
	}
	::close(go[0]);
	::close(go[1]);
	auto a = collector.counts(aggressor), v = collector.counts(victim);
	REQUIRE(a);
	REQUIRE(v);
	INFO("aggressor " << a->reads << " reads, victim " << v->reads);
	// Every request of each, none of the other's or the unwatched one's.
	CHECK(a->reads == kAggressor);
	CHECK(v->reads == kVictim);
	CHECK(a->writes == 0);
	CHECK(a->read_bytes == kAggressor * 4096);
	CHECK(v->read_bytes == kVictim * 4096);
	CHECK(a->latency_us.total() + a->untimed == kAggressor);
	// By disk: all on the loop device.
	REQUIRE(a->by_dev.count(loop.kdev()));
	CHECK(a->by_dev.at(loop.kdev()).first == kAggressor);
	CHECK(v->by_dev.at(loop.kdev()).first == kVictim);
	// Its share of the disk's requests (all three readers'): 3000 / 4500,
	// exactly as the counts are exact.
	const double share = static_cast<double>(a->by_dev.at(loop.kdev()).first) / (kAggressor + kVictim + kOther);
	CHECK(std::abs(share - 2.0 / 3.0) <= 0.02);
	// All at once (one batch read, one pass over the pairs): the same.
	const auto all = collector.all_counts();
	REQUIRE(all.size() == 2);
	for (const auto &[pid, one] : {std::pair{aggressor, *a}, std::pair{victim, *v}}) {
		INFO("pid " << pid);
		REQUIRE(all.count(pid));
		const VmIoCounts &b = all.at(pid);
		CHECK(b.reads == one.reads);
		CHECK(b.writes == one.writes);
		CHECK(b.read_bytes == one.read_bytes);
		CHECK(b.write_bytes == one.write_bytes);
		CHECK(b.untimed == one.untimed);
		CHECK(b.latency_us.counts == one.latency_us.counts);
		CHECK(b.by_dev == one.by_dev);
	}
	CHECK(all.at(aggressor).reads == kAggressor);
	CHECK(all.at(victim).reads == kVictim);
	// Unwatched: no counts; its index reused from zero.
	collector.unwatch_vm(victim);
	CHECK_FALSE(collector.counts(victim));
	REQUIRE(collector.watch_vm(other));
	auto o = collector.counts(other);
	REQUIRE(o);
	CHECK(o->reads == 0);
	CHECK(o->by_dev.empty());
	const auto after = collector.all_counts();
	CHECK(after.count(victim) == 0);
	REQUIRE(after.count(other) == 1);
	CHECK(after.at(other).reads == 0);
	CHECK(after.at(other).by_dev.empty());
	CHECK(after.at(aggressor).reads == kAggressor);
}

TEST_CASE("bpf.vmio source: io.* at vm:NAME and vm:NAME/dev:DISK, nothing without VMs", "[vmio][block][source]")
{
	require_root();
	hwsig_test::LoopDevice loop(64ull << 20);
	SourcePtr source = make_bpf_vmio_source();
	SourceContext ctx;
	std::vector<Vm> none;
	ctx.vms = &none;
	Snapshot empty;
	source->collect(ctx, empty);
	CHECK(empty.unavailable().empty());
	CHECK(empty.counters().empty());

	int go[2];
	REQUIRE(::pipe(go) == 0);
	pid_t db2 = reader(go[0], loop.path(), 800, 4, loop.bytes());
	pid_t store = reader(go[0], loop.path(), 200, 5, loop.bytes());
	std::vector<Vm> vms(2);
	vms[0].pid = db2;
	vms[0].name = "db2";
	vms[1].pid = store;
	vms[1].name = "store";
	ctx.vms = &vms;
	Snapshot first;
	first.mono_ns = monotonic_ns();
	source->collect(ctx, first);
	for (const auto &n : first.unavailable())
		FAIL_CHECK(n.id << " at " << n.scope << ": " << n.reason);
	REQUIRE(::write(go[1], "xx", 2) == 2);
	for (pid_t p : {db2, store}) {
		int status = 0;
		REQUIRE(::waitpid(p, &status, 0) == p);
		CHECK(WEXITSTATUS(status) == 0);
	}
	::close(go[0]);
	::close(go[1]);
	Snapshot second;
	second.mono_ns = monotonic_ns();
	source->collect(ctx, second);
	const std::string disk = "/dev:" + loop.name();
	const CounterPoint *a = second.counter(series::kIoReads, "vm:db2");
	const CounterPoint *ad = second.counter(series::kIoReads, "vm:db2" + disk);
	const CounterPoint *b = second.counter(series::kIoReads, "vm:store");
	REQUIRE(a);
	REQUIRE(ad);
	REQUIRE(b);
	CHECK(a->value == 800);
	CHECK(ad->value == 800);
	CHECK(b->value == 200);
	CHECK(second.histogram(series::kIoLatencyUs, "vm:db2"));
	Interval iv = derive(first, second, source->provides());
	bool iops = false, p99 = false;
	for (const Metric &m : iv.metrics) {
		iops |= m.id == "io.iops_read" && m.scope == "vm:db2" && m.value > 0;
		p99 |= m.id == "io.latency_p99_us" && m.scope == "vm:db2" && m.value > 0;
	}
	CHECK(iops);
	CHECK(p99);
}
