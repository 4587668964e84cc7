// Live block-layer tests on a loop device: known I/O against BPF counts.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "block_collector.h"
#include "hwsig/fd.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/source_bpf.h"
#include "hwsig/histogram.h"
#include "hwsig/series.h"
#include "require_root.h"
#include "workloads.h"

using namespace hwsig;
using hwsig_test::require_root;
using hwsig_test::LoopDevice;

namespace {

BlockCounts counts_of(const BlockCollector &collector, std::uint32_t dev)
{
	auto all = collector.devices();
	auto it = all.find(dev);
	return it == all.end() ? BlockCounts{} : it->second;
}

std::uint64_t slot(const Histogram &h, std::size_t i)
{
	return i < h.counts.size() ? h.counts[i] : 0;
}

// Let udev finish with a new loop device before counting.
void settle()
{
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// A bpf.block source after its first collect (which attaches it: every
// disk counts from there).
SourcePtr attached_block_source(const SourceContext &ctx)
{
	SourcePtr source = make_bpf_block_source();
	Snapshot first;
	source->collect(ctx, first);
	REQUIRE(first.unavailable().empty());
	return source;
}

bool within(std::uint64_t got, std::uint64_t want, double fraction)
{
	double diff = std::abs(static_cast<double>(got) - static_cast<double>(want));
	return diff <= fraction * static_cast<double>(want);
}

// The kernel's diskstats of a loop device (Documentation/admin-guide/iostats):
// field 0 reads, 4 writes, 11 discards, 15 flushes completed.
std::vector<std::uint64_t> diskstats(const LoopDevice &loop)
{
	FileRead stat = read_file("/sys/block/" + loop.name() + "/stat");
	REQUIRE(stat.data);
	std::vector<std::uint64_t> out;
	for (auto f : split_ws(*stat.data)) {
		auto n = parse_u64(f);
		REQUIRE(n);
		out.push_back(*n);
	}
	REQUIRE(out.size() >= 17);
	return out;
}

Histogram hist_delta(const Histogram &before, const Histogram &after)
{
	auto d = Histogram::delta(before.counts.empty() ? Histogram{} : before, after);
	REQUIRE(d);
	return *d;
}

} // namespace

TEST_CASE("O_DIRECT reads and writes on a loop device: counts within 1%, sizes in their slot", "[block]")
{
	require_root();
	for (BpfAttach how : {BpfAttach::TpBtf, BpfAttach::RawTp}) {
		BlockCollector collector(how);
		LoopDevice loop(64ull << 20);
		settle();
		BlockCounts before = counts_of(collector, loop.kdev());
		constexpr std::size_t kReads = 2000, kWrites = 1000;
		hwsig_test::direct_reads(loop.path(), hwsig_test::random_offsets(kReads, 4096, loop.bytes(), 1), 4096);
		hwsig_test::direct_writes(loop.path(), hwsig_test::random_offsets(kWrites, 16384, loop.bytes(), 2),
					  16384);
		BlockCounts after = counts_of(collector, loop.kdev());
		INFO(attach_name(how) << ": reads " << after.reads - before.reads << " writes "
				      << after.writes - before.writes);
		CHECK(within(after.reads - before.reads, kReads, 0.01));
		CHECK(within(after.writes - before.writes, kWrites, 0.01));
		CHECK(within(after.read_bytes - before.read_bytes, kReads * 4096, 0.01));
		CHECK(within(after.write_bytes - before.write_bytes, kWrites * 16384, 0.01));
		// 4 KiB is log2 slot 2 of KiB, 16 KiB slot 4.
		CHECK(within(slot(after.size_kib, 2) - slot(before.size_kib, 2), kReads, 0.01));
		CHECK(within(slot(after.size_kib, 4) - slot(before.size_kib, 4), kWrites, 0.01));
		// Every completion had a latency sample.
		auto lat = Histogram::delta(before.latency_us.counts.empty() ? Histogram{} : before.latency_us,
					    after.latency_us);
		REQUIRE(lat);
		CHECK(within(lat->total(), kReads + kWrites, 0.01));
	}
}

TEST_CASE("devices(): the mapped table, one batch or one device per batch call: the same devices and counts", "[block]")
{
	require_root();
	BlockCollector collector;
	// Three devices with different, known numbers of reads: more devices
	// than one batch call of 1 holds, so the batch token is followed.
	LoopDevice a(8ull << 20), b(8ull << 20), c(8ull << 20);
	settle();
	const std::size_t reads[] = {100, 200, 300};
	const LoopDevice *loops[] = {&a, &b, &c};
	std::uint64_t before[3];
	for (int i = 0; i < 3; i++)
		before[i] = counts_of(collector, loops[i]->kdev()).reads;
	for (int i = 0; i < 3; i++)
		hwsig_test::direct_reads(loops[i]->path(),
					 hwsig_test::random_offsets(reads[i], 4096, loops[i]->bytes(), 7u + i), 4096);
	auto whole = collector.devices(); // through the mapping
	auto single = collector.devices(1);
	auto batch = collector.devices(1u << 20); // one batch call for the table
	auto again = collector.devices();
	for (int i = 0; i < 3; i++) {
		const std::uint32_t dev = loops[i]->kdev();
		INFO("loop " << i);
		REQUIRE(whole.count(dev) == 1);
		REQUIRE(single.count(dev) == 1);
		REQUIRE(again.count(dev) == 1);
		REQUIRE(batch.count(dev) == 1);
		CHECK(whole.at(dev).reads - before[i] == reads[i]);
		CHECK(batch.at(dev).reads == whole.at(dev).reads);
		CHECK(single.at(dev).reads == whole.at(dev).reads);
		CHECK(single.at(dev).read_bytes == whole.at(dev).read_bytes);
		CHECK(single.at(dev).latency_us.counts == whole.at(dev).latency_us.counts);
		CHECK(single.at(dev).size_kib.counts == whole.at(dev).size_kib.counts);
		CHECK(again.at(dev).reads == whole.at(dev).reads);
	}
	// Every device of one read is in the other (other disks may have
	// gained counts in between, never lost an entry).
	for (const auto &[dev, counts] : whole)
		CHECK(single.count(dev) == 1);
}

TEST_CASE("block source: dev:loopN series, sequential vs random pattern entropy", "[block][source]")
{
	require_root();
	LoopDevice loop(256ull << 20);
	SourcePtr source = make_bpf_block_source();
	SourceContext ctx;
	Snapshot s0, s1, s2, s3;
	source->collect(ctx, s0);
	INFO((s0.unavailable().empty() ? std::string() : s0.unavailable()[0].reason));
	REQUIRE(s0.unavailable().empty());
	settle();
	std::string scope = "dev:" + loop.name();
	source->collect(ctx, s0 = Snapshot{});
	constexpr std::size_t kN = 4000;
	hwsig_test::direct_reads(loop.path(), hwsig_test::sequential_offsets(kN, 4096), 4096);
	source->collect(ctx, s1);
	hwsig_test::direct_reads(loop.path(), hwsig_test::random_offsets(kN, 4096, loop.bytes(), 3), 4096);
	source->collect(ctx, s2);
	// Random inside a small region (a VM image on a big disk) is random too.
	hwsig_test::direct_reads(loop.path(), hwsig_test::random_offsets(kN, 4096, loop.bytes() / 16, 4), 4096);
	source->collect(ctx, s3);

	auto hist_delta = [&](const Snapshot &a, const Snapshot &b, const char *name) {
		const Histogram *ha = a.histogram(name, scope);
		const Histogram *hb = b.histogram(name, scope);
		REQUIRE(hb);
		auto d = ha ? Histogram::delta(*ha, *hb) : std::optional<Histogram>(*hb);
		REQUIRE(d);
		return *d;
	};
	Histogram seq = hist_delta(s0, s1, series::kIoSeekSlots);
	Histogram rnd = hist_delta(s1, s2, series::kIoSeekSlots);
	CHECK(seq.layout == Histogram::Layout::Log2);
	auto seq_entropy = seek_pattern_entropy(seq), rnd_entropy = seek_pattern_entropy(rnd);
	REQUIRE(seq_entropy);
	REQUIRE(rnd_entropy);
	INFO("sequential entropy " << *seq_entropy << ", random " << *rnd_entropy);
	CHECK(*seq_entropy < 0.2);
	CHECK(*rnd_entropy > 0.8);
	auto region_entropy = seek_pattern_entropy(hist_delta(s2, s3, series::kIoSeekSlots));
	REQUIRE(region_entropy);
	INFO("random within 1/16 of the device: " << *region_entropy);
	CHECK(*region_entropy > 0.8);
	// The reads are counted as such, per device.
	const CounterPoint *r1 = s1.counter(series::kIoReads, scope);
	const CounterPoint *r2 = s2.counter(series::kIoReads, scope);
	REQUIRE(r1);
	REQUIRE(r2);
	CHECK(within(static_cast<std::uint64_t>(r2->value - r1->value), kN, 0.01));
	Histogram lat = hist_delta(s1, s2, series::kIoLatencyUs);
	CHECK(within(lat.total(), kN, 0.01));
	auto p50 = percentile(lat, 0.5);
	REQUIRE(p50);
	CHECK(*p50 > 0.0);
	CHECK(*p50 < 1e6); // a loop read over the page cache: well under a second
	// Sequential 4 KiB reads: every gap but the first is 0 (slot 0).
	CHECK(seq.counts.at(0) >= kN - 1);
	// Bytes and sizes per device.
	const CounterPoint *b1 = s1.counter(series::kIoReadBytes, scope);
	const CounterPoint *b2 = s2.counter(series::kIoReadBytes, scope);
	REQUIRE(b1);
	REQUIRE(b2);
	CHECK(within(static_cast<std::uint64_t>(b2->value - b1->value), kN * 4096, 0.01));
	Histogram sizes = hist_delta(s1, s2, series::kIoSizeKib);
	CHECK(within(sizes.counts.at(2), kN, 0.01)); // 4 KiB: log2 KiB slot 2
}

// io.pattern_entropy weighted by requests, with the seek distance measured
// from the nearest stream head: p% random reads in a 16 MiB region beside a
// sequential reader 192 MiB away read about p/100 of random alone. The
// old definition (distance from the previous request, entropy of all gaps,
// anchored where 5% of the gaps were farther) read 0.22 at both 7% and
// 93%: the jumps to and from the distant reader moved its anchor above the
// random reads' octaves.
TEST_CASE("block source: a mix of random and sequential reads reads as the mix", "[block][source]")
{
	require_root();
	LoopDevice loop(256ull << 20);
	SourcePtr source = make_bpf_block_source();
	SourceContext ctx;
	Snapshot warm;
	source->collect(ctx, warm);
	REQUIRE(warm.unavailable().empty());
	settle();
	const std::string scope = "dev:" + loop.name();
	constexpr std::size_t kN = 4000, kBlock = 4096;
	std::uint64_t stream = 192ull << 20;
	std::mt19937_64 rng(34);
	std::map<unsigned, double> entropy;
	std::map<unsigned, std::uint64_t> continued;
	for (unsigned percent : {0u, 7u, 50u, 93u, 100u}) {
		// Exactly percent% random, at places a seeded shuffle picks.
		std::vector<bool> is_random(kN, false);
		std::fill_n(is_random.begin(), kN * percent / 100, true);
		std::shuffle(is_random.begin(), is_random.end(), rng);
		std::uniform_int_distribution<std::uint64_t> pick(0, (16ull << 20) / kBlock - 1);
		std::vector<std::uint64_t> offsets;
		for (bool r : is_random) {
			offsets.push_back(r ? pick(rng) * kBlock : stream);
			if (!r)
				stream += kBlock;
		}
		Snapshot before, after;
		source->collect(ctx, before);
		hwsig_test::direct_reads(loop.path(), offsets, kBlock);
		source->collect(ctx, after);
		const Histogram *a = before.histogram(series::kIoSeekSlots, scope);
		const Histogram *b = after.histogram(series::kIoSeekSlots, scope);
		REQUIRE(b);
		auto d = a ? Histogram::delta(*a, *b) : std::optional<Histogram>(*b);
		REQUIRE(d);
		INFO(percent << "% random");
		CHECK(within(d->total(), kN, 0.01));
		auto e = seek_pattern_entropy(*d);
		REQUIRE(e);
		entropy[percent] = *e;
		continued[percent] = d->counts.at(0);
	}
	for (auto [percent, e] : entropy)
		UNSCOPED_INFO(percent << "% random: " << e << ", " << continued[percent] << " continued a stream");
	// Every sequential read continues its stream (the random ones rarely
	// land within a sector of a head: 1 in 4096 per head at most).
	for (auto [percent, n] : continued) {
		const double sequential = static_cast<double>(kN * (100 - percent) / 100);
		CHECK(static_cast<double>(n) >= sequential - 2);
		CHECK(static_cast<double>(n) <= sequential + 0.01 * kN);
	}
	CHECK(entropy[0] < 0.01);
	CHECK(entropy[100] > 0.85);
	for (unsigned percent : {7u, 50u, 93u})
		CHECK(std::abs(entropy[percent] - entropy[100] * percent / 100) < 0.05);
}

TEST_CASE("flushes and discards are in no statistic: every histogram holds the reads and writes counted",
	  "[block]")
{
	require_root();
	for (BpfAttach how : {BpfAttach::TpBtf, BpfAttach::RawTp}) {
		BlockCollector collector(how);
		LoopDevice loop(64ull << 20);
		settle();
		BlockCounts before = counts_of(collector, loop.kdev());
		auto kernel_before = diskstats(loop);
		constexpr std::size_t kWrites = 200, kFsyncs = 20, kDiscards = 16;
		{
			Fd fd(open(loop.path().c_str(), O_RDWR | O_DIRECT | O_CLOEXEC));
			REQUIRE(fd);
			void *buf = nullptr;
			REQUIRE(posix_memalign(&buf, 4096, 4096) == 0);
			std::memset(buf, 0x5a, 4096);
			bool ok = true;
			auto offsets = hwsig_test::random_offsets(kWrites, 4096, loop.bytes() / 2, 11);
			for (std::size_t i = 0; i < kWrites; ++i) {
				ok = ok && pwrite(fd.get(), buf, 4096, static_cast<off_t>(offsets[i])) == 4096;
				if (i % (kWrites / kFsyncs) == 0)
					ok = ok && fsync(fd.get()) == 0; // a flush request
			}
			// Discards of the upper half, 1 MiB each.
			for (std::size_t i = 0; i < kDiscards; ++i) {
				std::uint64_t range[2] = {loop.bytes() / 2 + i * (1u << 20), 1u << 20};
				ok = ok && ioctl(fd.get(), BLKDISCARD, range) == 0;
			}
			free(buf);
			REQUIRE(ok);
		}
		BlockCounts after = counts_of(collector, loop.kdev());
		auto kernel = diskstats(loop);
		const std::uint64_t flushes = kernel[15] - kernel_before[15], discards = kernel[11] - kernel_before[11];
		const std::uint64_t writes = after.writes - before.writes, reads = after.reads - before.reads;
		Histogram lat = hist_delta(before.latency_us, after.latency_us);
		Histogram queue = hist_delta(before.queue_us, after.queue_us);
		Histogram size = hist_delta(before.size_kib, after.size_kib);
		INFO(attach_name(how) << ": kernel flushes " << flushes << ", discards " << discards << ", writes "
				      << kernel[4] - kernel_before[4] << "; ours: writes " << writes << ", reads " << reads
				      << ", latency samples " << lat.total() << ", queue " << queue.total() << ", sizes "
				      << size.total());
		// The workload did make flush and discard requests.
		REQUIRE(flushes >= 1);
		REQUIRE(discards >= kDiscards);
		CHECK(writes == kWrites);
		// The kernel's diskstats count each fsync's empty REQ_PREFLUSH write
		// as a write too (of no sectors; its flush request as a flush):
		// hwsig counts data requests only.
		CHECK(kernel[4] - kernel_before[4] == kWrites + flushes);
		CHECK(kernel[6] - kernel_before[6] == kWrites * 8); // write sectors
		// Every histogram counts exactly the requests IOPS counts.
		CHECK(lat.total() + (after.untimed - before.untimed) == reads + writes);
		CHECK(after.untimed == before.untimed);
		CHECK(queue.total() + (after.unqueued - before.unqueued) == reads + writes);
		CHECK(size.total() == reads + writes);
		CHECK(after.write_bytes - before.write_bytes == kWrites * 4096);
	}
}

TEST_CASE("a loop device attached to another file is a new disk: it does not inherit the old counts", "[block]")
{
	require_root();
	BlockCollector collector;
	std::uint32_t dev;
	std::uint64_t generation;
	{
		LoopDevice first(8ull << 20);
		settle();
		hwsig_test::direct_reads(first.path(), hwsig_test::random_offsets(300, 4096, first.bytes(), 21), 4096);
		auto all = collector.devices();
		dev = first.kdev();
		REQUIRE(all.count(dev));
		CHECK(all.at(dev).reads >= 300);
		generation = all.at(dev).generation;
		// The kernel's own number of this disk (5.15+), low 32 bits.
		FileRead seq = read_file("/sys/block/" + first.name() + "/diskseq");
		if (!seq.data)
			FAIL("no diskseq on this kernel (before 5.15): the test needs it");
		auto n = parse_u64(trim(*seq.data));
		REQUIRE(n);
		CHECK(generation == (*n & 0xffffffffu));
	}
	// The same device number again, attached to another file.
	LoopDevice second(8ull << 20, static_cast<int>(dev & 0xfffffu));
	REQUIRE(second.kdev() == dev);
	settle();
	BlockCounts before = counts_of(collector, dev); // maybe still the first's
	hwsig_test::direct_reads(second.path(), hwsig_test::random_offsets(50, 4096, second.bytes(), 22), 4096);
	auto all = collector.devices();
	REQUIRE(all.count(dev));
	const BlockCounts &now = all.at(dev);
	INFO("first generation " << generation << ", now " << now.generation << ": reads " << now.reads
				 << " (before " << before.reads << ")");
	CHECK(now.generation > generation);
	// Only the new disk's reads (and udev's probe of it): not the 300 of
	// the first.
	CHECK(now.reads >= 50);
	CHECK(now.reads < 300);
	// The first disk's entry is gone from the map: one read later, still
	// one entry for the dev_t, and it is the new one.
	CHECK(collector.devices().at(dev).generation == now.generation);
}

TEST_CASE("a full table of disks: requests counted as untracked per disk, tracked again once room is made",
	  "[block]")
{
	require_root();
	// Room for two disk generations. Every other disk with I/O on the host
	// may take a place first; three loop devices make sure one is left out.
	BlockCollector collector(BpfAttach::Auto, false, BlockTiming::KernelStamps, 2);
	LoopDevice a(8ull << 20), b(8ull << 20), c(8ull << 20);
	settle();
	const LoopDevice *loops[] = {&a, &b, &c};
	for (int round = 0; round < 2; ++round)
		for (int i = 0; i < 3; ++i)
			hwsig_test::direct_reads(loops[i]->path(),
						 hwsig_test::random_offsets(100, 4096, loops[i]->bytes(), 30u + i), 4096);
	auto tracked = collector.devices();
	auto untracked = collector.untracked();
	CHECK(tracked.size() <= 2);
	std::uint64_t left_out = 0;
	const LoopDevice *out = nullptr;
	for (const LoopDevice *l : loops)
		if (!tracked.count(l->kdev())) {
			INFO(l->name() << " untracked: " << (untracked.count(l->kdev()) ? untracked.at(l->kdev()) : 0));
			CHECK(untracked.count(l->kdev()) == 1);
			if (untracked.count(l->kdev()))
				left_out += untracked.at(l->kdev());
			out = l;
		}
	REQUIRE(out);
	CHECK(left_out >= 200); // its 200 reads at least, none lost silently
	// Forgetting the tracked disks makes room: the untracked one is counted
	// from its next request on.
	for (const auto &[dev, counts] : tracked)
		collector.forget(dev, counts.generation);
	hwsig_test::direct_reads(out->path(), hwsig_test::random_offsets(40, 4096, out->bytes(), 40), 4096);
	auto now = collector.devices();
	REQUIRE(now.count(out->kdev()));
	CHECK(now.at(out->kdev()).reads >= 40);
}

TEST_CASE("block source: a new disk behind a reused dev_t is left out of one snapshot, then counted from zero",
	  "[block][source]")
{
	require_root();
	SourceContext ctx;
	SourcePtr source = attached_block_source(ctx);
	Snapshot s1, s2, s3;
	std::uint32_t dev;
	std::string scope;
	{
		LoopDevice first(8ull << 20);
		settle();
		dev = first.kdev();
		scope = "dev:" + first.name();
		hwsig_test::direct_reads(first.path(), hwsig_test::random_offsets(300, 4096, first.bytes(), 51), 4096);
		source->collect(ctx, s1);
		const CounterPoint *r = s1.counter(series::kIoReads, scope);
		REQUIRE(r);
		CHECK(r->value >= 300);
	}
	// The same device number again, attached to another file.
	LoopDevice second(8ull << 20, static_cast<int>(dev & 0xfffffu));
	REQUIRE(second.kdev() == dev);
	if (!read_file("/sys/block/" + second.name() + "/diskseq").data)
		FAIL("no diskseq on this kernel (before 5.15): the test needs it");
	settle();
	hwsig_test::direct_reads(second.path(), hwsig_test::random_offsets(50, 4096, second.bytes(), 52), 4096);
	source->collect(ctx, s2);
	// Left out: derive then says "incomplete data" for this one interval
	// instead of a delta between two different disks.
	CHECK(s2.counter(series::kIoReads, scope) == nullptr);
	CHECK(s2.histogram(series::kIoLatencyUs, scope) == nullptr);
	hwsig_test::direct_reads(second.path(), hwsig_test::random_offsets(20, 4096, second.bytes(), 53), 4096);
	source->collect(ctx, s3);
	const CounterPoint *r = s3.counter(series::kIoReads, scope);
	REQUIRE(r);
	INFO("reads of the new disk: " << r->value);
	CHECK(r->value >= 70);  // its own reads (and udev's probe of it)
	CHECK(r->value < 300); // not the first disk's
	CHECK(s3.counts_from_zero(series::kIoReads));
}

// Issue 34, item 4: a detached loop device was shown at 0 req/s until the
// names' refresh (5 s) noticed it. An idle disk whose generation ended
// (its media gone: size 0, or its diskseq moved on) now leaves at the next
// snapshot; an idle disk still attached stays.
TEST_CASE("block source: a detached loop device leaves at the next snapshot, an idle attached one stays",
	  "[block][source]")
{
	require_root();
	SourceContext ctx;
	SourcePtr source = attached_block_source(ctx);
	Snapshot s1, s2, s3;
	std::string scope;
	{
		LoopDevice loop(8ull << 20);
		settle();
		scope = "dev:" + loop.name();
		hwsig_test::direct_reads(loop.path(), hwsig_test::random_offsets(100, 4096, loop.bytes(), 61), 4096);
		source->collect(ctx, s1);
		const CounterPoint *r = s1.counter(series::kIoReads, scope);
		REQUIRE(r);
		CHECK(r->value >= 100);
		source->collect(ctx, s2); // idle, attached
		const CounterPoint *idle = s2.counter(series::kIoReads, scope);
		REQUIRE(idle);
		CHECK(idle->value == r->value);
	} // detached (LOOP_CLR_FD), its file removed
	source->collect(ctx, s3);
	CHECK(s3.counter(series::kIoReads, scope) == nullptr);
	CHECK(s3.histogram(series::kIoLatencyUs, scope) == nullptr);
}

// Issue 34, item 7: with 16 probes from a disk's hash slot, a new disk found
// no slot among its 16 from 164 to 252 disks in 256 slots while the note
// said "table full (256)". The search now covers the table: a table of 64
// slots takes 56 new disks (and whatever else on the host has I/O) with
// no request untracked. (With 16 probes, 56 of 64 slots leave some disk's
// 16 full in nearly every run.)
TEST_CASE("the table of disks holds as many disks as it has slots", "[block]")
{
	require_root();
	constexpr std::size_t kSlots = 64, kLoops = 56;
	BlockCollector collector(BpfAttach::Auto, false, BlockTiming::KernelStamps, kSlots);
	std::vector<std::unique_ptr<LoopDevice>> loops;
	for (std::size_t i = 0; i < kLoops; ++i)
		loops.push_back(std::make_unique<LoopDevice>(1ull << 20));
	settle();
	for (std::size_t i = 0; i < kLoops; ++i)
		hwsig_test::direct_reads(loops[i]->path(),
					 hwsig_test::random_offsets(5, 4096, loops[i]->bytes(), 70u + static_cast<unsigned>(i)),
					 4096);
	auto tracked = collector.devices();
	auto untracked = collector.untracked();
	INFO(tracked.size() << " disks tracked, " << untracked.size() << " with untracked requests");
	REQUIRE(tracked.size() <= kSlots);
	if (tracked.size() + untracked.size() > kSlots)
		FAIL("more disks with I/O on this host than the test's table holds: cannot tell");
	for (const auto &l : loops) {
		INFO(l->name());
		CHECK(untracked.count(l->kdev()) == 0);
		REQUIRE(tracked.count(l->kdev()) == 1);
		// One request short at most, as the truth tests allow (a read
		// now and then not counted, cause not found yet).
		CHECK(tracked.at(l->kdev()).reads + 1 >= 5);
	}
	// 56 detaches at once: let udev finish with them before the next test
	// creates its own loop device.
	loops.clear();
	settle();
}
