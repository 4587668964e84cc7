// Reader of bpf/sched.bpf.c: loads the skeleton, manages the selected
// processes, turns the per-CPU maps into SchedCounts.
#include "sched_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <utility>
#include <vector>

#include "hwsig/error.h"
#include "hwsig/mmap.h"
#include "hwsig_sched.h"
#include "percpu_batch.h"
#include "sched.skel.h"
#include "skeleton.h"
#include "trace_helpers.h"
#include "vm_index.h"

namespace hwsig {

namespace {

const SkeletonOps<hwsig_sched_bpf> kSchedOps = {
	"sched",
	hwsig_sched_bpf__open_opts,
	hwsig_sched_bpf__load,
	hwsig_sched_bpf__attach,
	hwsig_sched_bpf__destroy,
};

SchedCounts to_counts(const hwsig_sched_stats &s)
{
	SchedCounts c;
	c.wakeup_wait_us =
		Histogram::from_slots(Histogram::Layout::Log2, s.waits + HWSIG_SCHED_WAKEUP_AT, HWSIG_SCHED_SLOTS);
	c.preempt_wait_us =
		Histogram::from_slots(Histogram::Layout::Log2, s.waits + HWSIG_SCHED_PREEMPT_AT, HWSIG_SCHED_SLOTS);
	c.involuntary = s.involuntary;
	c.runs = s.runs;
	return c;
}

// A process's per-CPU copies, summed before they become histograms (two
// allocations per CPU per process otherwise).
SchedCounts sum_cpus(const hwsig_sched_stats *percpu, int ncpu)
{
	hwsig_sched_stats t{};
	for (int cpu = 0; cpu < ncpu; ++cpu) {
		const hwsig_sched_stats &s = percpu[cpu];
		for (int i = 0; i < HWSIG_SCHED_WAIT_SLOTS; ++i)
			t.waits[i] += s.waits[i];
		t.involuntary += s.involuntary;
		t.runs += s.runs;
	}
	return to_counts(t);
}

Skeleton<hwsig_sched_bpf> load(BpfAttach how, bool ms)
{
	// (preempt, prev, next, prev_state) since 5.18; raw_tp's arguments are
	// the same, but without vmlinux BTF there is no prototype to ask.
	const bool prev_state = bpf_detail::tp_btf_arg_count("sched_switch") >= 4;
	return Skeleton<hwsig_sched_bpf>(kSchedOps, [how, ms, prev_state](hwsig_sched_bpf &s) {
		bool btf = how == BpfAttach::TpBtf;
		s.rodata->in_ms = ms;
		s.rodata->has_prev_state = prev_state;
		bpf_program__set_autoload(s.progs.btf_sched_switch, btf);
		bpf_program__set_autoload(s.progs.raw_sched_wakeup, !btf);
		bpf_program__set_autoload(s.progs.raw_sched_wakeup_new, !btf);
		bpf_program__set_autoload(s.progs.raw_sched_switch, !btf);
		// Each set uses its own timestamp store; do not create the other
		// (task storage does not exist before 5.11).
		bpf_map__set_autocreate(s.maps.task_seen, btf);
		bpf_map__set_autocreate(s.maps.pid_wait, !btf);
	});
}

// After every change to the selected map: the tp_btf program caches each
// task's process index until selection_gen moves (odd values only: a new
// task's zeroed cache never matches).
void selection_changed(hwsig_sched_bpf *s, std::size_t nr_selected)
{
	s->bss->nr_selected = static_cast<__u32>(nr_selected);
	__atomic_store_n(&s->data->selection_gen, s->data->selection_gen + 2, __ATOMIC_RELEASE);
}

} // namespace

Histogram SchedCounts::wait_us() const
{
	Histogram h = wakeup_wait_us;
	h += preempt_wait_us;
	return h;
}

SchedCounts &SchedCounts::operator+=(const SchedCounts &o)
{
	wakeup_wait_us += o.wakeup_wait_us;
	preempt_wait_us += o.preempt_wait_us;
	involuntary += o.involuntary;
	runs += o.runs;
	return *this;
}

struct SchedCollector::Impl {
	Impl(Skeleton<hwsig_sched_bpf> s, BpfAttach as, int cpus) : skel(std::move(s)), how(as), ncpu(cpus)
	{
		map_blame_table();
	}

	Skeleton<hwsig_sched_bpf> skel;
	BpfAttach how;
	int ncpu;
	std::map<int, __u32> index_of; // tgid -> proc_stats index
	std::vector<bool> used = std::vector<bool>(HWSIG_SCHED_MAX_PROCS, false);
	// VM tgid -> its class: its row and column of blame.
	bpf_detail::VmIndexMap vms{"BPF sched", HWSIG_SCHED_MAX_VMS};
	Mapping blame_table;
	// Per cell: per CPU, the reads that took its bit (Blame::cpu_reads),
	// kept here since the program's bits are taken at every read.
	std::map<__u32, std::map<unsigned, std::uint64_t>> cpu_reads;
	// proc_stats in one call (buffers kept from one interval to the next).
	bpf_detail::PercpuBatchReader<hwsig_sched_stats> batch{ncpu};

	hwsig_sched_blame *cells() const { return static_cast<hwsig_sched_blame *>(blame_table.data()); }

	void map_blame_table()
	{
		const std::size_t bytes = static_cast<std::size_t>(HWSIG_SCHED_BLAME_CELLS) * sizeof(hwsig_sched_blame);
		const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
		blame_table = Mapping::map_fd(bpf_map__fd(skel->maps.blame), (bytes + page - 1) / page * page,
					      PROT_READ | PROT_WRITE, MAP_SHARED, 0, "the BPF victim x culprit matrix");
	}

	// A reused VM index starts from zero, as victim (its row) and as
	// culprit (its column in every row). The program may add to a cell
	// being cleared only through a task whose cached class predates the
	// last vm_gen bump: at most one event.
	void clear_vm_index(__u32 cls)
	{
		for (__u32 i = 0; i < HWSIG_SCHED_CLASSES; ++i)
			clear(cls * HWSIG_SCHED_CLASSES + i);
		for (__u32 v = 0; v < HWSIG_SCHED_MAX_VMS; ++v)
			clear(v * HWSIG_SCHED_CLASSES + cls);
	}

	void clear(__u32 cell)
	{
		hwsig_sched_blame &b = cells()[cell];
		__atomic_store_n(&b.wait_ns, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b.waits, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b.preemptions, 0, __ATOMIC_RELAXED);
		for (__u64 &word : b.cpus)
			__atomic_store_n(&word, 0, __ATOMIC_RELAXED);
		cpu_reads.erase(cell);
	}

	// Takes the cell's CPU bits (exchanged with 0: a bit the program sets
	// meanwhile is in the next read, not lost) into its cpu_reads, and
	// returns them. Words on possible CPUs only, and a plain load first:
	// most words are 0 at most reads.
	std::vector<std::pair<unsigned, std::uint64_t>> take_cpus(__u32 cell)
	{
		hwsig_sched_blame &b = cells()[cell];
		const unsigned words =
			std::min<unsigned>(HWSIG_SCHED_CPU_WORDS, (static_cast<unsigned>(ncpu) + 63) / 64);
		for (unsigned w = 0; w < words; ++w) {
			if (!__atomic_load_n(&b.cpus[w], __ATOMIC_RELAXED))
				continue;
			__u64 bits = __atomic_exchange_n(&b.cpus[w], 0, __ATOMIC_RELAXED);
			auto &reads = cpu_reads[cell];
			for (; bits; bits &= bits - 1)
				++reads[w * 64 + static_cast<unsigned>(__builtin_ctzll(bits))];
		}
		auto it = cpu_reads.find(cell);
		if (it == cpu_reads.end())
			return {};
		return {it->second.begin(), it->second.end()};
	}

	void vms_changed()
	{
		hwsig_sched_bpf *s = skel.get();
		s->bss->nr_vms = static_cast<__u32>(vms.size());
		__atomic_store_n(&s->data->vm_gen, s->data->vm_gen + 2, __ATOMIC_RELEASE);
	}

	std::vector<hwsig_sched_stats> read_percpu(const struct bpf_map *map, __u32 key) const
	{
		std::vector<hwsig_sched_stats> v(static_cast<std::size_t>(ncpu));
		if (bpf_map__lookup_elem(map, &key, sizeof key, v.data(), v.size() * sizeof v[0], 0))
			throw_errno("BPF sched: reading " + std::string(bpf_map__name(map)));
		return v;
	}
};

SchedCollector::SchedCollector(BpfAttach how, bool milliseconds)
{
	int ncpu = bpf_detail::possible_cpus("sched");
	auto [skel, as] = bpf_detail::load_tp_btf_or_raw_tp(
		how, [] { return bpf_detail::has_tp_btf("sched_switch") && bpf_detail::has_task_storage(); },
		[milliseconds](BpfAttach set) { return load(set, milliseconds); });
	impl_ = std::make_unique<Impl>(std::move(skel), as, ncpu);
}

SchedCollector::~SchedCollector() = default;
SchedCollector::SchedCollector(SchedCollector &&) noexcept = default;
SchedCollector &SchedCollector::operator=(SchedCollector &&) noexcept = default;

BpfAttach SchedCollector::attached_as() const
{
	return impl_->how;
}

bool SchedCollector::select(int tgid)
{
	if (impl_->index_of.count(tgid))
		return true;
	auto free_slot = std::find(impl_->used.begin(), impl_->used.end(), false);
	if (free_slot == impl_->used.end())
		return false;
	__u32 index = static_cast<__u32>(free_slot - impl_->used.begin());
	hwsig_sched_bpf *s = impl_->skel.get();
	// The slot may hold a previous process's counts: start from zero.
	std::vector<hwsig_sched_stats> zero(static_cast<std::size_t>(impl_->ncpu));
	if (bpf_map__update_elem(s->maps.proc_stats, &index, sizeof index, zero.data(),
				 zero.size() * sizeof zero[0], BPF_ANY))
		throw_errno("BPF sched: clearing per-process slot");
	__u32 key = static_cast<__u32>(tgid);
	if (bpf_map__update_elem(s->maps.selected, &key, sizeof key, &index, sizeof index, BPF_ANY))
		throw_errno("BPF sched: selecting process " + std::to_string(tgid));
	*free_slot = true;
	impl_->index_of[tgid] = index;
	selection_changed(s, impl_->index_of.size());
	return true;
}

void SchedCollector::deselect(int tgid)
{
	auto it = impl_->index_of.find(tgid);
	if (it == impl_->index_of.end())
		return;
	hwsig_sched_bpf *s = impl_->skel.get();
	__u32 key = static_cast<__u32>(tgid);
	bpf_map__delete_elem(s->maps.selected, &key, sizeof key, 0);
	impl_->used[it->second] = false;
	impl_->index_of.erase(it);
	selection_changed(s, impl_->index_of.size());
}

std::vector<int> SchedCollector::selected() const
{
	std::vector<int> out;
	for (const auto &[tgid, index] : impl_->index_of)
		out.push_back(tgid);
	return out;
}

std::vector<SchedCounts> SchedCollector::per_cpu() const
{
	std::vector<SchedCounts> out;
	for (const auto &s : impl_->read_percpu(impl_->skel->maps.cpu_stats, 0))
		out.push_back(to_counts(s));
	return out;
}

std::optional<SchedCounts> SchedCollector::process(int tgid) const
{
	auto it = impl_->index_of.find(tgid);
	if (it == impl_->index_of.end())
		return std::nullopt;
	const auto percpu = impl_->read_percpu(impl_->skel->maps.proc_stats, it->second);
	return sum_cpus(percpu.data(), impl_->ncpu);
}

std::map<int, SchedCounts> SchedCollector::processes(std::size_t per_call) const
{
	Impl &im = *impl_;
	std::map<int, SchedCounts> out;
	if (im.index_of.empty())
		return out;
	// select() hands out the lowest free slot: those in use lie in
	// [0, highest], and the array's slots above are not copied out.
	__u32 highest = 0;
	for (const auto &[tgid, index] : im.index_of)
		highest = std::max(highest, index);
	const __u32 n = highest + 1;
	const bool batched = im.batch.read(bpf_map__fd(im.skel->maps.proc_stats), n, per_call);
	for (const auto &[tgid, index] : im.index_of) {
		if (const hwsig_sched_stats *percpu = batched ? im.batch.slot(index) : nullptr) {
			out.emplace(tgid, sum_cpus(percpu, im.ncpu));
			continue;
		}
		const auto percpu = im.read_percpu(im.skel->maps.proc_stats, index);
		out.emplace(tgid, sum_cpus(percpu.data(), im.ncpu));
	}
	return out;
}

bool SchedCollector::batch_reads() const
{
	return impl_->batch.supported();
}

} // namespace hwsig

namespace hwsig {

bool SchedCollector::watch_vm(int tgid)
{
	const bool known = impl_->vms.find(tgid).has_value();
	auto index = impl_->vms.watch(impl_->skel->maps.vm_of, tgid, [&](__u32 cls) { impl_->clear_vm_index(cls); });
	if (index && !known)
		impl_->vms_changed();
	return index.has_value();
}

void SchedCollector::unwatch_vm(int tgid)
{
	if (impl_->vms.unwatch(impl_->skel->maps.vm_of, tgid))
		impl_->vms_changed();
}

std::vector<int> SchedCollector::watched_vms() const
{
	return impl_->vms.tgids();
}

std::vector<Blame> SchedCollector::blame(int victim_tgid)
{
	std::vector<Blame> out;
	auto victim = impl_->vms.find(victim_tgid);
	if (!victim)
		return out;
	const hwsig_sched_blame *row = impl_->cells() + *victim * HWSIG_SCHED_CLASSES;
	for (__u32 cls = 0; cls < HWSIG_SCHED_CLASSES; ++cls) {
		Blame b;
		b.wait_ns = __atomic_load_n(&row[cls].wait_ns, __ATOMIC_RELAXED);
		b.waits = __atomic_load_n(&row[cls].waits, __ATOMIC_RELAXED);
		b.preemptions = __atomic_load_n(&row[cls].preemptions, __ATOMIC_RELAXED);
		if (!b.wait_ns && !b.waits && !b.preemptions)
			continue;
		// Taken even for a cell of a VM gone since (below): its bits
		// would otherwise wait for the index's reuse.
		b.cpu_reads = impl_->take_cpus(*victim * HWSIG_SCHED_CLASSES + cls);
		switch (cls) {
		case HWSIG_CLASS_IDLE: b.culprit = Culprit::Idle; break;
		case HWSIG_CLASS_KERNEL: b.culprit = Culprit::Kernel; break;
		case HWSIG_CLASS_VHOST: b.culprit = Culprit::Vhost; break;
		case HWSIG_CLASS_OTHER: b.culprit = Culprit::Other; break;
		default:
			b.culprit = Culprit::Vm;
			b.culprit_tgid = impl_->vms.tgid_at(cls);
			if (!b.culprit_tgid)
				continue; // a VM gone since: its index is cleared at reuse
		}
		out.push_back(b);
	}
	return out;
}

} // namespace hwsig
