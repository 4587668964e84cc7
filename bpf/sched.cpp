// Reader of bpf/sched.bpf.c: loads the skeleton, manages the selected
// processes, turns the per-CPU maps into SchedCounts.
#include "sched_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <algorithm>
#include <map>
#include <vector>

#include "hwsig/error.h"
#include "hwsig_sched.h"
#include "sched.skel.h"
#include "skeleton.h"
#include "trace_helpers.h"

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
	Skeleton<hwsig_sched_bpf> skel;
	BpfAttach how;
	int ncpu;
	std::map<int, __u32> index_of; // tgid -> proc_stats index
	std::vector<bool> used = std::vector<bool>(HWSIG_SCHED_MAX_PROCS, false);

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
	impl_ = std::make_unique<Impl>(Impl{std::move(skel), as, ncpu, {}});
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
	SchedCounts sum = to_counts(hwsig_sched_stats{});
	for (const auto &s : impl_->read_percpu(impl_->skel->maps.proc_stats, it->second))
		sum += to_counts(s);
	return sum;
}

} // namespace hwsig
