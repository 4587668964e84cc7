// Reader of bpf/block.bpf.c: loads the skeleton (picking the tracepoint
// prototype of this kernel), sums the per-CPU per-device statistics.
#include "block_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "hwsig/error.h"
#include "hwsig/mmap.h"
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

Skeleton<hwsig_block_bpf> load(BpfAttach how, bool ms, BlockTiming timing, std::uint32_t max_devices)
{
	// (q, rq) before 5.11, (rq) since: the BTF prototype says which.
	bool second = bpf_detail::tp_btf_arg_count("block_rq_issue") == 2;
	return Skeleton<hwsig_block_bpf>(kBlockOps, [how, second, ms, timing, max_devices](hwsig_block_bpf &s) {
		if (max_devices) {
			// A power of two: slots are found by masking a hash.
			std::uint32_t n = 1;
			while (n < max_devices)
				n <<= 1;
			bpf_map__set_max_entries(s.maps.slots, n);
			bpf_map__set_max_entries(s.maps.dev_stats, n);
			s.rodata->slot_mask = n - 1;
		}
		bool btf = how == BpfAttach::TpBtf;
		bool issue_program = timing == BlockTiming::IssueProgram;
		s.rodata->in_ms = ms;
		s.rodata->rq_is_second_arg = second;
		s.rodata->ignore_issue_stamps = issue_program;
		s.bss->fallback_on = issue_program;
		// Both issue programs are loaded with their set (the verifier's
		// answer comes now, not in the middle of a run); the one of this
		// set is attached now only when every request is to be stamped,
		// else by devices() when a request came without the kernel's.
		bpf_program__set_autoload(s.progs.btf_block_rq_issue, btf);
		bpf_program__set_autoload(s.progs.btf_block_rq_complete, btf);
		bpf_program__set_autoload(s.progs.raw_block_rq_issue, !btf);
		bpf_program__set_autoload(s.progs.raw_block_rq_complete, !btf);
		bpf_program__set_autoattach(s.progs.btf_block_rq_issue, issue_program);
		bpf_program__set_autoattach(s.progs.raw_block_rq_issue, issue_program);
	});
}

} // namespace

struct BlockCollector::Impl {
	Skeleton<hwsig_block_bpf> skel;
	BpfAttach how;
	int ncpu;
	// The table of disks, mapped (BPF_F_MMAPABLE): read each interval
	// without a syscall, where a batch lookup of its 256 slots cost about
	// a tenth of hwsigd's CPU per interval.
	Mapping slot_table;
	// devices()'s buffers, kept from one read to the next.
	std::vector<__u32> indexes;
	std::vector<hwsig_block_slot> slots;
	std::vector<hwsig_block_stats> values; // one slot's, x ncpu

	bpf_program *issue_program() const
	{
		return how == BpfAttach::TpBtf ? skel->progs.btf_block_rq_issue : skel->progs.raw_block_rq_issue;
	}
	bpf_link *&issue_link() const
	{
		return how == BpfAttach::TpBtf ? skel->links.btf_block_rq_issue : skel->links.raw_block_rq_issue;
	}
	// The fallback, once a request completed without an issue stamp: the
	// issue program from now on (its link is the skeleton's, freed with it).
	void attach_issue_program()
	{
		if (issue_link() || !skel->bss->needs_issue_stamps)
			return;
		bpf_link *link = bpf_program__attach(issue_program());
		if (!link)
			bpf_detail::throw_step("block", "attach of the block_rq_issue fallback", errno ? errno : EINVAL);
		issue_link() = link;
		// Seen by the completion program from its next run on (a plain
		// store: a run that misses it counts one more untimed request).
		__atomic_store_n(&skel->bss->fallback_on, true, __ATOMIC_RELEASE);
	}
	// The slots in use, in this->slots and this->indexes: from the
	// mapping (per_call 0), or through BPF_MAP_LOOKUP_BATCH calls of
	// per_call slots each (tests: the two views must agree).
	void read_slots(std::size_t per_call);
	void map_slot_table()
	{
		const std::size_t bytes = static_cast<std::size_t>(bpf_map__max_entries(skel->maps.slots)) *
					  sizeof(hwsig_block_slot);
		const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
		slot_table = Mapping::map_fd(bpf_map__fd(skel->maps.slots), (bytes + page - 1) / page * page,
					     PROT_READ, MAP_SHARED, 0, "the BPF block table of disks");
	}
	// Zeroes a slot's statistics, then frees it. A completion that found
	// the slot just before may still add a count after the zeroing (its
	// disk is gone or replaced: at most the requests in flight then).
	void release(__u32 index)
	{
		std::fill(values.begin(), values.end(), hwsig_block_stats{});
		bpf_map_update_elem(bpf_map__fd(skel->maps.dev_stats), &index, values.data(), BPF_ANY);
		hwsig_block_slot free{};
		bpf_map_update_elem(bpf_map__fd(skel->maps.slots), &index, &free, BPF_ANY);
	}
};

void BlockCollector::Impl::read_slots(std::size_t per_call)
{
	const __u32 n = bpf_map__max_entries(skel->maps.slots);
	if (!per_call) {
		// A slot's tag is one 8-byte word, written by compare-and-swap
		// (claim) or by this process (release): a load sees it whole.
		const auto *table = static_cast<const hwsig_block_slot *>(slot_table.data());
		indexes.clear();
		slots.clear();
		for (__u32 i = 0; i < n; i++) {
			hwsig_block_slot s{__atomic_load_n(&table[i].tag, __ATOMIC_RELAXED), 0};
			if (s.tag) {
				indexes.push_back(i);
				slots.push_back(s);
			}
		}
		return;
	}
	const int fd = bpf_map__fd(skel->maps.slots);
	indexes.resize(n);
	slots.resize(n);
	const __u32 step = static_cast<__u32>(per_call);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0, done = 0;
	for (bool first = true; done < n; first = false) {
		__u32 count = std::min(step, n - done);
		int err = bpf_map_lookup_batch(fd, first ? nullptr : &token, &token, indexes.data() + done,
					       slots.data() + done, &count, &opts) ? errno : 0;
		if (err && err != ENOENT) {
			errno = err;
			throw_errno("BPF block: reading the table of disks");
		}
		done += count;
		if (err == ENOENT || count == 0)
			break;
	}
	indexes.resize(done);
	slots.resize(done);
}

BlockCollector::BlockCollector(BpfAttach how, bool milliseconds, BlockTiming timing, std::uint32_t max_devices)
{
	int ncpu = bpf_detail::possible_cpus("block");
	auto [skel, as] = bpf_detail::load_tp_btf_or_raw_tp(
		how, [] { return bpf_detail::has_tp_btf("block_rq_issue"); },
		[milliseconds, timing, max_devices](BpfAttach set) {
			return load(set, milliseconds, timing, max_devices);
		});
	impl_ = std::make_unique<Impl>(Impl{std::move(skel), as, ncpu, {}, {}, {}, {}});
	impl_->map_slot_table();
	impl_->values.resize(static_cast<std::size_t>(ncpu));
}

BlockCollector::~BlockCollector() = default;
BlockCollector::BlockCollector(BlockCollector &&) noexcept = default;
BlockCollector &BlockCollector::operator=(BlockCollector &&) noexcept = default;

BpfAttach BlockCollector::attached_as() const
{
	return impl_->how;
}

namespace {

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
		t.untimed += s.untimed;
		t.unqueued += s.unqueued;
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
	c.untimed = t.untimed;
	c.unqueued = t.unqueued;
	c.latency_us = Histogram::from_slots(kLog2, t.latency, HWSIG_BLOCK_TIME_SLOTS);
	c.queue_us = Histogram::from_slots(kLog2, t.queue, HWSIG_BLOCK_TIME_SLOTS);
	c.size_kib = Histogram::from_slots(kLog2, t.size, HWSIG_BLOCK_SIZE_SLOTS);
	c.seek_sectors = Histogram::from_slots(kLog2, t.seek, HWSIG_BLOCK_SEEK_SLOTS);
	return c;
}

} // namespace

BlockCounts &operator+=(BlockCounts &a, const BlockCounts &b)
{
	a.reads += b.reads;
	a.writes += b.writes;
	a.read_bytes += b.read_bytes;
	a.write_bytes += b.write_bytes;
	a.untimed += b.untimed;
	a.unqueued += b.unqueued;
	a.latency_us += b.latency_us;
	a.queue_us += b.queue_us;
	a.size_kib += b.size_kib;
	a.seek_sectors += b.seek_sectors;
	return a;
}

std::map<std::uint32_t, BlockCounts> BlockCollector::devices(std::size_t per_call) const
{
	Impl &im = *impl_;
	im.attach_issue_program();
	im.read_slots(per_call);
	// The slots in use, then each one's per-CPU statistics (one lookup per
	// disk with I/O: a batch over the array would read every slot's).
	std::map<__u64, BlockCounts> by_tag;
	const int fd = bpf_map__fd(im.skel->maps.dev_stats);
	for (std::size_t i = 0; i < im.slots.size(); i++) {
		const __u64 tag = im.slots[i].tag;
		if (!tag)
			continue;
		__u32 index = im.indexes[i];
		if (bpf_map_lookup_elem(fd, &index, im.values.data()))
			throw_errno("BPF block: reading dev_stats");
		BlockCounts c = sum_cpus(im.values.data(), im.ncpu);
		auto [it, fresh] = by_tag.try_emplace(tag, std::move(c));
		if (!fresh) // two slots claimed for one disk at once
			it->second += c;
	}
	// The newest generation of each dev_t; older ones are released:
	// diskseq only grows, so they get no more I/O.
	std::map<std::uint32_t, BlockCounts> out;
	std::vector<std::pair<std::uint32_t, std::uint32_t>> older; // dev, seq
	for (auto &[tag, c] : by_tag) {
		const std::uint32_t dev = HWSIG_BLOCK_TAG_DEV(tag), seq = HWSIG_BLOCK_TAG_SEQ(tag);
		c.generation = seq;
		auto it = out.find(dev);
		if (it != out.end())
			older.emplace_back(dev, static_cast<std::uint32_t>(it->second.generation)); // by_tag is in seq order
		out.insert_or_assign(dev, std::move(c));
	}
	for (std::size_t i = 0; i < im.slots.size(); i++)
		for (const auto &[dev, seq] : older)
			if (im.slots[i].tag == HWSIG_BLOCK_TAG(dev, seq))
				im.release(im.indexes[i]);
	return out;
}

void BlockCollector::forget(std::uint32_t dev, std::uint64_t generation) const
{
	Impl &im = *impl_;
	im.read_slots(0);
	for (std::size_t i = 0; i < im.slots.size(); i++) {
		const __u64 tag = im.slots[i].tag;
		if (tag && HWSIG_BLOCK_TAG_DEV(tag) == dev && HWSIG_BLOCK_TAG_SEQ(tag) <= generation)
			im.release(im.indexes[i]);
	}
}

std::map<std::uint32_t, std::uint64_t> BlockCollector::untracked() const
{
	const Impl &im = *impl_;
	std::map<std::uint32_t, std::uint64_t> out;
	const int fd = bpf_map__fd(im.skel->maps.untracked);
	__u32 key = 0, next = 0;
	for (const void *prev = nullptr; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		__u64 n = 0;
		if (bpf_map_lookup_elem(fd, &next, &n) == 0)
			out[next] = n;
		key = next;
	}
	if (std::uint64_t other = __atomic_load_n(&im.skel->bss->untracked_other, __ATOMIC_RELAXED))
		out[0] = other;
	return out;
}

bool BlockCollector::issue_program_attached() const
{
	return impl_->issue_link() != nullptr;
}

} // namespace hwsig
