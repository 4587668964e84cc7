// Reader of bpf/block.bpf.c: loads the skeleton (picking the tracepoint
// prototype of this kernel), sums the per-CPU per-device statistics.
#include "block_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "hwsig/error.h"
#include "hwsig_block.h" // before its skeleton, which uses its types
#include "block.skel.h"
#include "skeleton.h"
#include "trace_helpers.h"

namespace hwsig {

namespace {

const SkeletonOps<hwsig_block_bpf> kBlockOps = {
	"block",
	hwsig_block_bpf__open_opts,
	hwsig_block_bpf__load,
	hwsig_block_bpf__attach,
	hwsig_block_bpf__destroy,
};

constexpr auto kLog2 = Histogram::Layout::Log2;

Skeleton<hwsig_block_bpf> load(BpfAttach how, bool ms)
{
	// (q, rq) before 5.11, (rq) since: the BTF prototype says which.
	bool second = bpf_detail::tp_btf_arg_count("block_rq_issue") == 2;
	return Skeleton<hwsig_block_bpf>(kBlockOps, [how, second, ms](hwsig_block_bpf &s) {
		bool btf = how == BpfAttach::TpBtf;
		s.rodata->in_ms = ms;
		s.rodata->rq_is_second_arg = second;
		bpf_program__set_autoload(s.progs.btf_block_rq_insert, btf);
		bpf_program__set_autoload(s.progs.btf_block_rq_issue, btf);
		bpf_program__set_autoload(s.progs.btf_block_rq_complete, btf);
		bpf_program__set_autoload(s.progs.raw_block_rq_insert, !btf);
		bpf_program__set_autoload(s.progs.raw_block_rq_issue, !btf);
		bpf_program__set_autoload(s.progs.raw_block_rq_complete, !btf);
	});
}

} // namespace

struct BlockCollector::Impl {
	Skeleton<hwsig_block_bpf> skel;
	BpfAttach how;
	int ncpu;
	// devices()'s batch buffers, kept from one read to the next.
	std::vector<__u32> keys;
	std::vector<hwsig_block_stats> values; // keys.size() x ncpu
};

BlockCollector::BlockCollector(BpfAttach how, bool milliseconds)
{
	int ncpu = bpf_detail::possible_cpus("block");
	auto [skel, as] = bpf_detail::load_tp_btf_or_raw_tp(
		how, [] { return bpf_detail::has_tp_btf("block_rq_issue"); },
		[milliseconds](BpfAttach set) { return load(set, milliseconds); });
	impl_ = std::make_unique<Impl>(Impl{std::move(skel), as, ncpu, {}, {}});
}

BlockCollector::~BlockCollector() = default;
BlockCollector::BlockCollector(BlockCollector &&) noexcept = default;
BlockCollector &BlockCollector::operator=(BlockCollector &&) noexcept = default;

BpfAttach BlockCollector::attached_as() const
{
	return impl_->how;
}

namespace {

// Devices per BPF_MAP_LOOKUP_BATCH call: all of a small host's in one
// call, and never more than about 1 MiB of per-CPU values in one buffer
// (a device's statistics take ~1 KiB per possible CPU).
std::size_t batch_devices(int ncpu)
{
	const std::size_t per_device = sizeof(hwsig_block_stats) * static_cast<std::size_t>(ncpu);
	return std::clamp<std::size_t>((1u << 20) / per_device, 1, 64);
}

BlockCounts sum_cpus(const hwsig_block_stats *percpu, int ncpu)
{
	// Slots are summed first and made histograms once: a histogram per
	// CPU would be 4 allocations per CPU per device per interval.
	hwsig_block_stats t{};
	for (int cpu = 0; cpu < ncpu; cpu++) {
		const hwsig_block_stats &s = percpu[cpu];
		t.reads += s.reads;
		t.writes += s.writes;
		t.read_bytes += s.read_bytes;
		t.write_bytes += s.write_bytes;
		for (int i = 0; i < HWSIG_BLOCK_TIME_SLOTS; i++) {
			t.latency[i] += s.latency[i];
			t.queue[i] += s.queue[i];
		}
		for (int i = 0; i < HWSIG_BLOCK_SIZE_SLOTS; i++)
			t.size[i] += s.size[i];
		for (int i = 0; i < HWSIG_BLOCK_SEEK_SLOTS; i++)
			t.seek[i] += s.seek[i];
	}
	BlockCounts c;
	c.reads = t.reads;
	c.writes = t.writes;
	c.read_bytes = t.read_bytes;
	c.write_bytes = t.write_bytes;
	c.latency_us = Histogram::from_slots(kLog2, t.latency, HWSIG_BLOCK_TIME_SLOTS);
	c.queue_us = Histogram::from_slots(kLog2, t.queue, HWSIG_BLOCK_TIME_SLOTS);
	c.size_kib = Histogram::from_slots(kLog2, t.size, HWSIG_BLOCK_SIZE_SLOTS);
	c.seek_sectors = Histogram::from_slots(kLog2, t.seek, HWSIG_BLOCK_SEEK_SLOTS);
	return c;
}

} // namespace

std::map<std::uint32_t, BlockCounts> BlockCollector::devices(std::size_t per_call) const
{
	// One BPF_MAP_LOOKUP_BATCH call reads every device (a few on a large
	// host), where get_next_key + lookup took two syscalls per device.
	std::map<std::uint32_t, BlockCounts> out;
	Impl &im = *impl_;
	const int fd = bpf_map__fd(im.skel->maps.dev_stats);
	const auto ncpu = static_cast<std::size_t>(im.ncpu);
	if (per_call) {
		im.keys.resize(per_call);
		im.values.resize(per_call * ncpu);
	} else if (im.keys.empty()) {
		im.keys.resize(batch_devices(im.ncpu));
		im.values.resize(im.keys.size() * ncpu);
	}
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0;
	bool first = true;
	for (;;) {
		auto count = static_cast<__u32>(im.keys.size());
		int err = bpf_map_lookup_batch(fd, first ? nullptr : &token, &token, im.keys.data(), im.values.data(),
					       &count, &opts) ? errno : 0;
		if (err == ENOSPC && count == 0) {
			// A hash bucket holds more devices than the buffer: grow it
			// and ask for the same batch again.
			im.keys.resize(im.keys.size() * 2);
			im.values.resize(im.keys.size() * ncpu);
			continue;
		}
		if (err && err != ENOENT) {
			errno = err;
			throw_errno("BPF block: reading dev_stats");
		}
		for (__u32 i = 0; i < count; i++)
			out.emplace(im.keys[i], sum_cpus(&im.values[i * ncpu], im.ncpu));
		if (err == ENOENT) // the last batch (count may be 0)
			return out;
		first = false;
	}
}

} // namespace hwsig
