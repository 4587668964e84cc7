// The bpf.block source: reads the BlockCollector, emits request counts,
// bytes and latency, queue, size and seek histograms per disk.
#include <ctime>
#include <string>

#include "block_collector.h"
#include "hwsig/block_device.h"
#include "hwsig/catalog.h"
#include "hwsig/fs.h"
#include "hwsig/series.h"
#include "hwsig/source_bpf.h"
#include "source_bpf_lazy.h"

namespace hwsig {

namespace {

using bpf_source::kSource;

const std::vector<std::string> &block_ids()
{
	static const std::vector<std::string> ids = metrics_reading(
		{series::kIoReads, series::kIoWrites, series::kIoReadBytes, series::kIoWriteBytes,
		 series::kIoLatencyUs, series::kIoQueueUs, series::kIoSizeKib, series::kIoSeekSlots});
	return ids;
}

class BpfBlockSource : public Source {
public:
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
			for (const char *name : {series::kIoReads, series::kIoWrites, series::kIoReadBytes,
						 series::kIoWriteBytes, series::kIoLatencyUs, series::kIoQueueUs,
						 series::kIoSizeKib, series::kIoSeekSlots})
				snap.set_counts_from_zero(name);
			for (const auto &[dev, c] : collector.devices()) {
				// A device that went away (hot-unplug, a removed loop
				// device) keeps its counts in the map; reporting them
				// under MAJ:MIN would bring it back as a stranger. Seen
				// at the names' refresh (every 5 s), not per snapshot.
				if (names_.gone(dev))
					continue;
				std::string scope = "dev:" + names_.label(dev);
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
};

} // namespace

SourcePtr make_bpf_block_source()
{
	return std::make_unique<BpfBlockSource>();
}

} // namespace hwsig
