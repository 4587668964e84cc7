// Live tests of block requests per VM: two processes (standing in for two
// VMs' QEMU) read a loop device with O_DIRECT, a known number of requests
// each, at the same time; a third, not watched, reads too.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
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

// Writes through the page cache reach the disk from the flusher, not from
// the VM's threads. Where the VM's cgroup does not tell them apart (this
// host kind keeps memory and blkio on cgroup v1; on a cgroup v2 host the
// two children share the test's cgroup), a VM holding a file open
// read-write without O_DIRECT gets its write figures said unavailable,
// with the reason, instead of showing only its direct writes (or, with no
// direct I/O, nothing at all); a VM writing with O_DIRECT keeps them
// exact. The vmio-writeback case of scripts/vm-test checks the attributed
// side, under cgroup v2 with the memory and io controllers.
TEST_CASE("bpf.vmio source: a VM writing through the page cache says its writes are not told apart",
	  "[vmio][block][source]")
{
	require_root();
	hwsig_test::LoopDevice loop(64ull << 20);
	char image[] = "/tmp/hwsig-vmio-image-XXXXXX";
	const int made = ::mkstemp(image);
	REQUIRE(made >= 0);
	::close(made);
	int go[2], ready[2], stay[2];
	REQUIRE(::pipe(go) == 0);
	REQUIRE(::pipe(ready) == 0);
	REQUIRE(::pipe(stay) == 0);
	// cache=writeback: 256 KiB through the page cache, the image kept open.
	pid_t buffered = ::fork();
	if (buffered == 0) {
		const int fd = ::open(image, O_RDWR);
		std::vector<char> block(4096, 'v');
		for (int i = 0; fd >= 0 && i < 64; ++i)
			if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(i) * 4096) != 4096)
				::_exit(4);
		char c = 'r';
		if (fd < 0 || ::write(ready[1], &c, 1) != 1)
			::_exit(3);
		(void)::read(stay[0], &c, 1);
		::_exit(0);
	}
	// cache=none: 300 O_DIRECT writes of the loop device.
	constexpr std::size_t kDirect = 300;
	pid_t direct = ::fork();
	if (direct == 0) {
		char c;
		if (::read(go[0], &c, 1) != 1)
			::_exit(3);
		try {
			auto offsets = hwsig_test::random_offsets(kDirect, 4096, loop.bytes(), 6);
			::_exit(hwsig_test::direct_writes(loop.path(), offsets, 4096) == kDirect ? 0 : 4);
		} catch (...) {
			::_exit(5);
		}
	}
	char c;
	REQUIRE(::read(ready[0], &c, 1) == 1);
	SourcePtr source = make_bpf_vmio_source();
	SourceContext ctx;
	std::vector<Vm> vms(2);
	vms[0].pid = buffered;
	vms[0].name = "cached";
	vms[1].pid = direct;
	vms[1].name = "uncached";
	ctx.vms = &vms;
	Snapshot first;
	first.mono_ns = monotonic_ns();
	source->collect(ctx, first);
	REQUIRE(::write(go[1], "x", 1) == 1);
	int status = 0;
	REQUIRE(::waitpid(direct, &status, 0) == direct);
	CHECK(WEXITSTATUS(status) == 0);
	Snapshot second;
	second.mono_ns = monotonic_ns();
	source->collect(ctx, second);
	REQUIRE(::write(stay[1], "x", 1) == 1);
	REQUIRE(::waitpid(buffered, &status, 0) == buffered);
	CHECK(WEXITSTATUS(status) == 0);
	for (int fd : {go[0], go[1], ready[0], ready[1], stay[0], stay[1]})
		::close(fd);
	::unlink(image);

	std::map<std::string, const UnavailableNote *> notes;
	for (const auto &n : second.unavailable()) {
		INFO(n.id << " at " << n.scope << ": " << n.reason);
		CHECK(n.scope == "vm:cached");
		notes[n.id] = &n;
	}
	for (const char *id : {"io.iops_write", "io.write_bps"}) {
		INFO(id);
		REQUIRE(notes.count(id));
		CHECK(notes[id]->code == UnavailableCode::unsupported);
		CHECK(notes[id]->reason.find("its writes through the page cache (" + std::string(image) +
					     ") are not told apart: ") == 0);
	}
	CHECK_FALSE(second.counter(series::kIoWrites, "vm:cached"));
	CHECK_FALSE(second.counter(series::kIoWriteBytes, "vm:cached"));
	const CounterPoint *writes = second.counter(series::kIoWrites, "vm:uncached");
	const CounterPoint *bytes = second.counter(series::kIoWriteBytes, "vm:uncached");
	REQUIRE(writes);
	REQUIRE(bytes);
	CHECK(writes->value == kDirect);
	CHECK(bytes->value == kDirect * 4096);
	// Derived: the reason reaches the interval, the direct VM's rate is there.
	Interval iv = derive(first, second, source->provides());
	bool said = false, rate = false;
	for (const auto &n : iv.unavailable)
		said |= n.id == "io.write_bps" && n.scope == "vm:cached" && n.reason.find("not told apart") != std::string::npos;
	for (const Metric &m : iv.metrics) {
		CHECK_FALSE((m.scope == "vm:cached" && (m.id == "io.write_bps" || m.id == "io.iops_write")));
		rate |= m.id == "io.iops_write" && m.scope == "vm:uncached" && m.value > 0;
	}
	CHECK(said);
	CHECK(rate);
}
