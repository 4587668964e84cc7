// Reader of bpf/block.bpf.c: loads the skeleton (picking the tracepoint
// prototype of this kernel), sums the per-CPU per-device statistics.
#include "hwsig/bpf_sources.h"
#include "hwsig/skeleton.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <vector>

#include "hwsig_block.h"
#include "block.skel.h"
#include "kernel_btf.h"

namespace hwsig {

namespace {

const SkeletonOps<hwsig_block_bpf> kBlockOps = {
	"block",
	hwsig_block_bpf__open_opts,
	hwsig_block_bpf__load,
	hwsig_block_bpf__attach,
	hwsig_block_bpf__destroy,
};

Histogram log2_hist(const __u64 *slots, std::size_t n)
{
	return Histogram::from_slots(Histogram::Layout::Log2, slots, n);
}

void add_into(std::vector<std::uint64_t> &into, const __u64 *slots, std::size_t n)
{
	into.resize(n, 0);
	for (std::size_t i = 0; i < n; ++i)
		into[i] += slots[i];
}

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
	how = attach_from_environment(how);
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		throw Error("BPF block: counting possible CPUs", -ncpu);
	if (how == BpfAttach::Auto) {
		if (bpf_detail::has_tp_btf("block_rq_issue")) {
			try {
				impl_ = std::make_unique<Impl>(Impl{load(BpfAttach::TpBtf, milliseconds), BpfAttach::TpBtf, ncpu});
				return;
			} catch (const Error &e) {
				if (bpf_detail::lacks_privilege(e.err()))
					throw;
			}
		}
		how = BpfAttach::RawTp;
	}
	impl_ = std::make_unique<Impl>(Impl{load(how, milliseconds), how, ncpu});
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
		BlockCounts c;
		c.latency_us = log2_hist(nullptr, 0);
		c.queue_us = c.latency_us;
		c.size_kib = c.latency_us;
		c.seek_sectors = c.latency_us;
		for (const auto &s : percpu) {
			c.reads += s.reads;
			c.writes += s.writes;
			c.read_bytes += s.read_bytes;
			c.write_bytes += s.write_bytes;
			add_into(c.latency_us.counts, s.latency, HWSIG_BLOCK_TIME_SLOTS);
			add_into(c.queue_us.counts, s.queue, HWSIG_BLOCK_TIME_SLOTS);
			add_into(c.size_kib.counts, s.size, HWSIG_BLOCK_SIZE_SLOTS);
			add_into(c.seek_sectors.counts, s.seek, HWSIG_BLOCK_SEEK_SLOTS);
		}
		out.emplace(key, std::move(c));
	}
	return out;
}

} // namespace hwsig
