// The bpf.block source: reads the BlockCollector, emits request counts,
// bytes and latency, queue, size and seek histograms per disk.
#include <linux/types.h>

#include <ctime>
#include <map>
#include <string>

#include "block_collector.h"
#include "hwsig_block.h" // HWSIG_BLOCK_MAX_DEVS
#include "hwsig/block_device.h"
#include "hwsig/catalog.h"
#include "hwsig/fs.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/source_bpf.h"
#include "source_bpf_lazy.h"

// The registry's bucket specs describe this program's histograms.
static_assert(hwsig::series::kBlockSeconds.slots == HWSIG_BLOCK_TIME_SLOTS);
static_assert(hwsig::series::kQueueSeconds.slots == HWSIG_BLOCK_TIME_SLOTS);
static_assert(hwsig::series::kSizeBytes.slots == HWSIG_BLOCK_SIZE_SLOTS);
static_assert(hwsig::series::kSeekBytes.slots == HWSIG_BLOCK_SEEK_SLOTS);

namespace hwsig {

namespace {

using bpf_source::kSource;

const char *const kBlockSeries[] = {series::kIoReads,     series::kIoWrites,    series::kIoReadBytes,
				    series::kIoWriteBytes, series::kIoLatencyUs, series::kIoQueueUs,
				    series::kIoSizeKib,   series::kIoSeekSlots};

const std::vector<std::string> &block_ids()
{
	static const std::vector<std::string> ids =
		metrics_reading(std::vector<std::string_view>(std::begin(kBlockSeries), std::end(kBlockSeries)));
	return ids;
}

class BpfBlockSource : public Source {
public:
	explicit BpfBlockSource(bool milliseconds)
		: collector_([milliseconds](std::optional<BlockCollector> &c) { c.emplace(BpfAttach::Auto, milliseconds); })
	{
	}
	std::string_view name() const override { return "bpf.block"; }
	std::vector<std::string> provides() const override { return block_ids(); }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		names_.begin(ctx.root, static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
					       static_cast<std::uint64_t>(ts.tv_nsec));
		collector_.collect(snap, block_ids(), [&](BlockCollector &collector) {
			// Attached: every device's counts start at zero (its map
			// entry appears on its first request).
			for (const char *name : kBlockSeries)
				snap.set_counts_from_zero(name);
			// Disks whose requests found the table full in this
			// interval: unavailable, with how many went uncounted.
			std::map<std::uint32_t, std::uint64_t> dropped;
			for (const auto &[dev, n] : collector.untracked()) {
				std::uint64_t &seen = untracked_seen_[dev];
				if (n != seen)
					dropped[dev] = n - seen;
				seen = n;
			}
			for (const auto &[dev, n] : dropped) {
				const std::string scope =
					(dev ? Scope::dev(names_.label(dev)) : Scope::all(Scope::Kind::Dev)).str();
				std::string why = std::to_string(n) + " requests " + (dev ? "" : "of other disks ") +
						  "not counted: the BPF table of disks was full (" +
						  std::to_string(HWSIG_BLOCK_MAX_DEVS) + " with I/O)";
				for (const auto &id : block_ids())
					snap.add_unavailable(id, scope, UnavailableCode::capacity, why);
			}
			for (const auto &[dev, c] : collector.devices()) {
				// A new generation behind a dev_t (a loop device attached
				// to another file, a disk removed and the number given to
				// another): its name is looked up again, and its counts
				// are left out of this snapshot, so that the next derives
				// them from zero instead of from the old disk's.
				auto gen = generations_.find(dev);
				bool renewed = gen != generations_.end() && gen->second != c.generation;
				if (renewed)
					names_.refresh(dev);
				generations_[dev] = c.generation;
				// A device that went away (hot-unplug, a removed loop
				// device): its entries leave the map, and its counts are
				// not reported (under MAJ:MIN it would come back as a
				// stranger). Seen at the names' refresh (every 5 s).
				// An idle disk whose generation ended (a loop device
				// detached, a disk removed) goes at once, not at the
				// refresh: it would show 0 req/s meanwhile.
				const std::uint64_t requests = c.reads + c.writes;
				auto last = requests_.find(dev);
				const bool idle = last != requests_.end() && last->second == requests && !renewed;
				requests_[dev] = requests;
				if (names_.gone(dev) || (idle && names_.ended(dev, c.generation))) {
					collector.forget(dev, c.generation);
					generations_.erase(dev);
					requests_.erase(dev);
					continue;
				}
				if (renewed || dropped.count(dev))
					continue;
				const std::string scope = Scope::dev(names_.label(dev)).str();
				snap.add_counter(series::kIoReads, scope, static_cast<double>(c.reads), kSource);
				snap.add_counter(series::kIoWrites, scope, static_cast<double>(c.writes), kSource);
				snap.add_counter(series::kIoReadBytes, scope, static_cast<double>(c.read_bytes),
						 kSource);
				snap.add_counter(series::kIoWriteBytes, scope, static_cast<double>(c.write_bytes),
						 kSource);
				snap.add_histogram(series::kIoLatencyUs, scope, c.latency_us, kSource);
				snap.add_histogram(series::kIoQueueUs, scope, c.queue_us, kSource);
				snap.add_histogram(series::kIoSizeKib, scope, c.size_kib, kSource);
				// The full log2 map; derive folds it (seek_pattern_entropy).
				snap.add_histogram(series::kIoSeekSlots, scope, c.seek_sectors, kSource);
			}
		});
	}

private:
	bpf_source::LazyCollector<BlockCollector> collector_;
	BlockDevNames names_; // sysfs uevent read once per disk, again every 5 s
	std::map<std::uint32_t, std::uint64_t> generations_;   // dev -> diskseq last reported
	std::map<std::uint32_t, std::uint64_t> requests_;      // dev -> reads + writes last read
	std::map<std::uint32_t, std::uint64_t> untracked_seen_; // dev -> untracked requests last read
};

} // namespace

SourcePtr make_bpf_block_source()
{
	return make_bpf_block_source(false);
}

SourcePtr make_bpf_block_source(bool milliseconds)
{
	return std::make_unique<BpfBlockSource>(milliseconds);
}

} // namespace hwsig
