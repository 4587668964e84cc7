// Reader of bpf/vmio.bpf.c: loads the skeleton, keeps the watched VMs'
// indexes, sums the per-CPU counts.
#include "vmio_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "hwsig/error.h"
#include "hwsig_vmio.h"
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

	void vms_changed() { skel->bss->nr_vms = static_cast<__u32>(vms.size()); }
	void clear_vm_index(__u32 index);
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

void VmIoCollector::unwatch_vm(int tgid)
{
	if (impl_->vms.unwatch(impl_->skel->maps.vm_of, tgid))
		impl_->vms_changed();
}

std::vector<int> VmIoCollector::watched_vms() const
{
	return impl_->vms.tgids();
}

std::optional<VmIoCounts> VmIoCollector::counts(int tgid) const
{
	auto found = impl_->vms.find(tgid);
	if (!found)
		return std::nullopt;
	hwsig_vmio_bpf *s = impl_->skel.get();
	const __u32 index = *found;
	std::vector<hwsig_vmio_stats> per_cpu(static_cast<std::size_t>(impl_->ncpu));
	if (bpf_map__lookup_elem(s->maps.vm_io, &index, sizeof index, per_cpu.data(),
				 per_cpu.size() * sizeof per_cpu[0], 0))
		throw_errno("BPF vmio: reading a VM's counts");
	VmIoCounts c;
	std::vector<std::uint64_t> slots(HWSIG_VMIO_TIME_SLOTS, 0);
	for (const auto &p : per_cpu) {
		c.reads += p.reads;
		c.writes += p.writes;
		c.read_bytes += p.read_bytes;
		c.write_bytes += p.write_bytes;
		c.untimed += p.untimed;
		for (std::size_t i = 0; i < slots.size(); ++i)
			slots[i] += p.latency[i];
	}
	c.latency_us = Histogram::from_slots(Histogram::Layout::Log2, slots.data(), slots.size());
	hwsig_vmio_pair key{}, next{};
	std::vector<hwsig_vmio_pair_stats> pair(static_cast<std::size_t>(impl_->ncpu));
	for (void *prev = nullptr; !bpf_map__get_next_key(s->maps.vm_dev_io, prev, &next, sizeof next); prev = &key) {
		key = next;
		if (next.vm != index)
			continue;
		if (bpf_map__lookup_elem(s->maps.vm_dev_io, &next, sizeof next, pair.data(),
					 pair.size() * sizeof pair[0], 0))
			continue; // removed meanwhile
		auto &d = c.by_dev[next.dev];
		for (const auto &p : pair) {
			d.first += p.reads;
			d.second += p.writes;
		}
	}
	return c;
}

} // namespace hwsig
