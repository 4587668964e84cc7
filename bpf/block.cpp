// Reader of bpf/block.bpf.c: loads the skeleton (picking the tracepoint
// prototype of this kernel), sums the per-CPU per-device statistics.
#include "block_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

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
};

BlockCollector::BlockCollector(BpfAttach how, bool milliseconds)
{
	int ncpu = bpf_detail::possible_cpus("block");
	auto [skel, as] = bpf_detail::load_tp_btf_or_raw_tp(
		how, [] { return bpf_detail::has_tp_btf("block_rq_issue"); },
		[milliseconds](BpfAttach set) { return load(set, milliseconds); });
	impl_ = std::make_unique<Impl>(Impl{std::move(skel), as, ncpu});
}

BlockCollector::~BlockCollector() = default;
BlockCollector::BlockCollector(BlockCollector &&) noexcept = default;
BlockCollector &BlockCollector::operator=(BlockCollector &&) noexcept = default;

BpfAttach BlockCollector::attached_as() const
{
	return impl_->how;
}

std::map<std::uint32_t, BlockCounts> BlockCollector::devices() const
{
	std::map<std::uint32_t, BlockCounts> out;
	const struct bpf_map *map = impl_->skel->maps.dev_stats;
	std::vector<hwsig_block_stats> percpu(static_cast<std::size_t>(impl_->ncpu));
	__u32 key = 0, next = 0;
	const void *prev = nullptr;
	while (bpf_map__get_next_key(map, prev, &next, sizeof next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof key, percpu.data(),
					 percpu.size() * sizeof percpu[0], 0)) {
			if (errno == ENOENT) // removed meanwhile (never happens today)
				continue;
			throw_errno("BPF block: reading dev_stats");
		}
		BlockCounts c; // Log2 histograms, empty
		for (const auto &s : percpu) {
			c.reads += s.reads;
			c.writes += s.writes;
			c.read_bytes += s.read_bytes;
			c.write_bytes += s.write_bytes;
			c.latency_us += Histogram::from_slots(kLog2, s.latency, HWSIG_BLOCK_TIME_SLOTS);
			c.queue_us += Histogram::from_slots(kLog2, s.queue, HWSIG_BLOCK_TIME_SLOTS);
			c.size_kib += Histogram::from_slots(kLog2, s.size, HWSIG_BLOCK_SIZE_SLOTS);
			c.seek_sectors += Histogram::from_slots(kLog2, s.seek, HWSIG_BLOCK_SEEK_SLOTS);
		}
		out.emplace(key, std::move(c));
	}
	return out;
}

} // namespace hwsig
