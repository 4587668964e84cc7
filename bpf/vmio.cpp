// Reader of bpf/vmio.bpf.c: loads the skeleton, keeps the watched VMs'
// indexes, sums the per-CPU counts.
#include "vmio_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string>
#include <utility>

#include "hwsig/error.h"
#include "hwsig_vmio.h"
#include "percpu_batch.h"
#include "skeleton.h"
#include "trace_helpers.h"
#include "vm_index.h"
#include "vmio.skel.h"

namespace hwsig {

namespace {

const SkeletonOps<hwsig_vmio_bpf> kVmIoOps = {
	"vmio",
	hwsig_vmio_bpf__open_opts,
	hwsig_vmio_bpf__load,
	hwsig_vmio_bpf__attach,
	hwsig_vmio_bpf__destroy,
};

} // namespace

struct VmIoCollector::Impl {
	Skeleton<hwsig_vmio_bpf> skel;
	int ncpu = 0;
	bpf_detail::VmIndexMap vms{"BPF vmio", HWSIG_VMIO_MAX_VMS};
	std::map<int, __u64> cgroup_of; // tgid -> its cgroup in vm_of_cgroup
	mutable bpf_detail::PercpuBatchReader<hwsig_vmio_stats> batch{0}; // vm_io in one call

	void vms_changed() { skel->bss->nr_vms = static_cast<__u32>(vms.size()); }
	void clear_vm_index(__u32 index);
	void forget_cgroup(int tgid);
};

VmIoCollector::VmIoCollector()
{
	if (!bpf_detail::has_tp_btf("block_bio_queue") || bpf_detail::tp_btf_arg_count("block_bio_queue") != 1)
		throw Error("BPF vmio: the kernel has no tp_btf block_bio_queue(struct bio *) (5.11+ with BTF)",
			    EOPNOTSUPP);
	int ncpu = bpf_detail::possible_cpus("vmio");
	Skeleton<hwsig_vmio_bpf> skel(kVmIoOps, [](hwsig_vmio_bpf &) {});
	impl_ = std::make_unique<Impl>();
	impl_->skel = std::move(skel);
	impl_->ncpu = ncpu;
	impl_->batch = bpf_detail::PercpuBatchReader<hwsig_vmio_stats>(ncpu);
}

VmIoCollector::~VmIoCollector() = default;
VmIoCollector::VmIoCollector(VmIoCollector &&) noexcept = default;
VmIoCollector &VmIoCollector::operator=(VmIoCollector &&) noexcept = default;

// The index may hold a previous VM's counts: start from zero, its
// per-disk pairs included.
void VmIoCollector::Impl::clear_vm_index(__u32 index)
{
	hwsig_vmio_bpf *s = skel.get();
	std::vector<hwsig_vmio_stats> zero(static_cast<std::size_t>(ncpu));
	if (bpf_map__update_elem(s->maps.vm_io, &index, sizeof index, zero.data(), zero.size() * sizeof zero[0],
				 BPF_ANY))
		throw_errno("BPF vmio: clearing a VM's counts");
	hwsig_vmio_pair key{}, next{};
	std::vector<hwsig_vmio_pair> stale;
	for (void *prev = nullptr; !bpf_map__get_next_key(s->maps.vm_dev_io, prev, &next, sizeof next); prev = &key) {
		if (next.vm == index)
			stale.push_back(next);
		key = next;
	}
	for (auto &k : stale)
		bpf_map__delete_elem(s->maps.vm_dev_io, &k, sizeof k, 0);
}

bool VmIoCollector::watch_vm(int tgid)
{
	const bool known = impl_->vms.find(tgid).has_value();
	auto index = impl_->vms.watch(impl_->skel->maps.vm_of, tgid, [&](__u32 i) { impl_->clear_vm_index(i); });
	if (index && !known)
		impl_->vms_changed();
	return index.has_value();
}

void VmIoCollector::Impl::forget_cgroup(int tgid)
{
	auto it = cgroup_of.find(tgid);
	if (it == cgroup_of.end())
		return;
	bpf_map__delete_elem(skel->maps.vm_of_cgroup, &it->second, sizeof it->second, 0);
	cgroup_of.erase(it);
	skel->bss->nr_cgroups = static_cast<__u32>(cgroup_of.size());
}

bool VmIoCollector::attribute_cgroup(int tgid, std::uint64_t cgroup_id)
{
	auto index = impl_->vms.find(tgid);
	if (!index)
		return false;
	auto it = impl_->cgroup_of.find(tgid);
	if (it != impl_->cgroup_of.end() && it->second == cgroup_id)
		return true;
	for (const auto &[other, id] : impl_->cgroup_of)
		if (cgroup_id && id == cgroup_id && other != tgid)
			return false;
	impl_->forget_cgroup(tgid);
	if (!cgroup_id)
		return true;
	__u64 key = cgroup_id;
	if (bpf_map__update_elem(impl_->skel->maps.vm_of_cgroup, &key, sizeof key, &*index, sizeof *index, BPF_ANY))
		throw_errno("BPF vmio: attributing cgroup " + std::to_string(cgroup_id) + " to VM process " +
			    std::to_string(tgid));
	impl_->cgroup_of[tgid] = key;
	impl_->skel->bss->nr_cgroups = static_cast<__u32>(impl_->cgroup_of.size());
	return true;
}

void VmIoCollector::unwatch_vm(int tgid)
{
	impl_->forget_cgroup(tgid);
	if (impl_->vms.unwatch(impl_->skel->maps.vm_of, tgid))
		impl_->vms_changed();
}

std::vector<int> VmIoCollector::watched_vms() const
{
	return impl_->vms.tgids();
}

namespace {

// One VM's totals from its per-CPU copies.
VmIoCounts sum_cpus(const hwsig_vmio_stats *per_cpu, int ncpu)
{
	VmIoCounts c;
	std::vector<std::uint64_t> slots(HWSIG_VMIO_TIME_SLOTS, 0);
	for (int cpu = 0; cpu < ncpu; ++cpu) {
		const hwsig_vmio_stats &p = per_cpu[cpu];
		c.reads += p.reads;
		c.writes += p.writes;
		c.read_bytes += p.read_bytes;
		c.write_bytes += p.write_bytes;
		c.untimed += p.untimed;
		for (std::size_t i = 0; i < slots.size(); ++i)
			slots[i] += p.latency[i];
	}
	c.latency_us = Histogram::from_slots(Histogram::Layout::Log2, slots.data(), slots.size());
	return c;
}

std::vector<hwsig_vmio_stats> read_vm(hwsig_vmio_bpf *s, __u32 index, int ncpu)
{
	std::vector<hwsig_vmio_stats> per_cpu(static_cast<std::size_t>(ncpu));
	if (bpf_map__lookup_elem(s->maps.vm_io, &index, sizeof index, per_cpu.data(),
				 per_cpu.size() * sizeof per_cpu[0], 0))
		throw_errno("BPF vmio: reading a VM's counts");
	return per_cpu;
}

// The (VM, disk) pairs of the VMs `of` names (index -> its counts), in one
// pass over the pairs.
template <typename Of> void add_pairs(hwsig_vmio_bpf *s, int ncpu, Of &&of)
{
	hwsig_vmio_pair key{}, next{};
	std::vector<hwsig_vmio_pair_stats> pair(static_cast<std::size_t>(ncpu));
	for (void *prev = nullptr; !bpf_map__get_next_key(s->maps.vm_dev_io, prev, &next, sizeof next); prev = &key) {
		key = next;
		VmIoCounts *c = of(next.vm);
		if (!c)
			continue;
		if (bpf_map__lookup_elem(s->maps.vm_dev_io, &next, sizeof next, pair.data(),
					 pair.size() * sizeof pair[0], 0))
			continue; // removed meanwhile
		auto &d = c->by_dev[next.dev];
		for (const auto &p : pair) {
			d.first += p.reads;
			d.second += p.writes;
		}
	}
}

} // namespace

std::optional<VmIoCounts> VmIoCollector::counts(int tgid) const
{
	auto found = impl_->vms.find(tgid);
	if (!found)
		return std::nullopt;
	hwsig_vmio_bpf *s = impl_->skel.get();
	const __u32 index = *found;
	VmIoCounts c = sum_cpus(read_vm(s, index, impl_->ncpu).data(), impl_->ncpu);
	add_pairs(s, impl_->ncpu, [&](__u32 vm) { return vm == index ? &c : nullptr; });
	return c;
}

std::map<int, VmIoCounts> VmIoCollector::all_counts() const
{
	Impl &im = *impl_;
	hwsig_vmio_bpf *s = im.skel.get();
	std::map<int, VmIoCounts> out;
	const auto tgids = im.vms.tgids();
	if (tgids.empty())
		return out;
	// watch() hands out the lowest free index: those in use lie in
	// [0, highest], and the array's slots above are not copied out.
	__u32 highest = 0;
	for (int tgid : tgids)
		highest = std::max(highest, *im.vms.find(tgid));
	const bool batched = im.batch.read(bpf_map__fd(s->maps.vm_io), highest + 1);
	std::vector<VmIoCounts *> at(highest + 1, nullptr); // index -> its VM's counts
	for (int tgid : tgids) {
		const __u32 index = *im.vms.find(tgid);
		const hwsig_vmio_stats *per_cpu = batched ? im.batch.slot(index) : nullptr;
		VmIoCounts &c = out[tgid];
		c = per_cpu ? sum_cpus(per_cpu, im.ncpu) : sum_cpus(read_vm(s, index, im.ncpu).data(), im.ncpu);
		at[index] = &c;
	}
	add_pairs(s, im.ncpu, [&](__u32 vm) { return vm < at.size() ? at[vm] : nullptr; });
	return out;
}

} // namespace hwsig
