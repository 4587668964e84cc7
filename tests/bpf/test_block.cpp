// Live block-layer tests on a loop device: known I/O against BPF counts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <thread>

#include "block_collector.h"
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

bool within(std::uint64_t got, std::uint64_t want, double fraction)
{
	double diff = std::abs(static_cast<double>(got) - static_cast<double>(want));
	return diff <= fraction * static_cast<double>(want);
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

TEST_CASE("devices(): one batch or one device per batch call, the same devices and counts", "[block]")
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
	auto whole = collector.devices();
	auto single = collector.devices(1);
	auto again = collector.devices(); // back to the automatic batch
	for (int i = 0; i < 3; i++) {
		const std::uint32_t dev = loops[i]->kdev();
		INFO("loop " << i);
		REQUIRE(whole.count(dev) == 1);
		REQUIRE(single.count(dev) == 1);
		REQUIRE(again.count(dev) == 1);
		CHECK(whole.at(dev).reads - before[i] == reads[i]);
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
