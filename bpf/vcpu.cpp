// Reader of bpf/vcpu.bpf.c: keeps the iterator's `wanted` map equal to the
// threads asked for (changes only: the set is the same interval after
// interval) and reads one pass of the iterator.
#include "vcpu_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hwsig/error.h"
#include "hwsig/fd.h"
#include "hwsig_vcpu.h"
#include "skeleton.h"
#include "vcpu.skel.h"

namespace hwsig {

namespace {

const SkeletonOps<hwsig_vcpu_bpf> kVcpuOps = {
	"vcpu",
	hwsig_vcpu_bpf__open_opts,
	hwsig_vcpu_bpf__load,
	hwsig_vcpu_bpf__attach,
	hwsig_vcpu_bpf__destroy,
};

} // namespace

struct VcpuCollector::Impl {
	Skeleton<hwsig_vcpu_bpf> skel;
	std::unordered_map<int, int> wanted; // the map's tid -> tgid
	std::unordered_map<int, int> asked;  // scratch: this read's
	std::vector<char> buf = std::vector<char>(64 * 1024);

	void sync(const std::vector<std::pair<int, int>> &tasks);
};

VcpuCollector::VcpuCollector()
{
	Skeleton<hwsig_vcpu_bpf> skel(kVcpuOps, [](hwsig_vcpu_bpf &) {});
	impl_ = std::make_unique<Impl>();
	impl_->skel = std::move(skel);
}

VcpuCollector::~VcpuCollector() = default;
VcpuCollector::VcpuCollector(VcpuCollector &&) noexcept = default;
VcpuCollector &VcpuCollector::operator=(VcpuCollector &&) noexcept = default;

void VcpuCollector::Impl::sync(const std::vector<std::pair<int, int>> &tasks)
{
	bpf_map *map = skel->maps.wanted;
	asked.clear();
	for (const auto &[pid, tid] : tasks)
		if (pid > 0 && tid > 0 && asked.size() < HWSIG_VCPU_MAX_TASKS)
			asked.emplace(tid, pid);
	for (auto it = wanted.begin(); it != wanted.end();) {
		if (asked.count(it->first)) {
			++it;
			continue;
		}
		const __u32 key = static_cast<__u32>(it->first);
		if (bpf_map__delete_elem(map, &key, sizeof key, 0) && errno != ENOENT)
			throw_errno("BPF vcpu: forgetting a thread");
		it = wanted.erase(it);
	}
	for (const auto &[tid, pid] : asked) {
		auto it = wanted.find(tid);
		if (it != wanted.end() && it->second == pid)
			continue;
		const __u32 key = static_cast<__u32>(tid), tgid = static_cast<__u32>(pid);
		if (bpf_map__update_elem(map, &key, sizeof key, &tgid, sizeof tgid, BPF_ANY))
			throw_errno("BPF vcpu: listing a thread");
		wanted[tid] = pid;
	}
}

void VcpuCollector::read(const std::vector<std::pair<int, int>> &tasks, std::unordered_map<int, VcpuSched> &out)
{
	out.clear();
	impl_->sync(tasks);
	if (impl_->wanted.empty())
		return;
	Fd iter(bpf_iter_create(bpf_link__fd(impl_->skel->links.dump_vcpus)));
	if (!iter)
		throw_errno("BPF vcpu: starting a pass of the task iterator");
	// The kernel hands out whole records (a bpf_seq_write that does not fit
	// is redone in the next read); a partial one is kept for the next read
	// all the same.
	std::size_t have = 0;
	for (;;) {
		const ssize_t n = ::read(iter.get(), impl_->buf.data() + have, impl_->buf.size() - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			throw_errno("BPF vcpu: reading the task iterator");
		if (n == 0)
			break;
		have += static_cast<std::size_t>(n);
		std::size_t at = 0;
		for (; at + sizeof(hwsig_vcpu_record) <= have; at += sizeof(hwsig_vcpu_record)) {
			hwsig_vcpu_record r;
			std::memcpy(&r, impl_->buf.data() + at, sizeof r);
			out[static_cast<int>(r.tid)] = {r.on_cpu_ns, r.run_delay_ns, r.timeslices};
		}
		std::memmove(impl_->buf.data(), impl_->buf.data() + at, have - at);
		have -= at;
	}
}

} // namespace hwsig
