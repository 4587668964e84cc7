// Reader of bpf/vcpu.bpf.c: hands the threads asked for to the program
// (the look-up's list in .bss, or the walk's `wanted` map, changes only:
// the set is the same interval after interval) and reads one pass of the
// iterator.
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
#include "trace_helpers.h"
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

// Loads the program of one pass (Auto is resolved by the caller).
Skeleton<hwsig_vcpu_bpf> load(VcpuPass pass)
{
	const bool look_up = pass == VcpuPass::LookUp;
	return Skeleton<hwsig_vcpu_bpf>(kVcpuOps, [look_up](hwsig_vcpu_bpf &s) {
		bpf_program__set_autoload(s.progs.look_up_wanted, look_up);
		bpf_program__set_autoload(s.progs.dump_vcpus, !look_up);
		// Bound to one task by bind(), which the skeleton cannot do.
		bpf_program__set_autoattach(s.progs.look_up_wanted, false);
		s.rodata->bound_tid = static_cast<__u32>(::getpid());
	});
}

} // namespace

struct VcpuCollector::Impl {
	Skeleton<hwsig_vcpu_bpf> skel;
	VcpuPass pass = VcpuPass::Walk;
	std::unordered_map<int, int> wanted;        // walk: the map's tid -> tgid
	std::unordered_map<int, std::size_t> place; // walk: scratch, this read's tid -> its index in tasks
	std::vector<std::size_t> asked_at; // look-up: scratch, list slot -> its index in tasks
	std::vector<char> buf = std::vector<char>(64 * 1024);

	// Look-up: binds the iterator to this process's main thread, which
	// lives as long as the process (the thread that reads may not).
	void bind();
	void sync(const std::vector<std::pair<int, int>> &tasks);
	void read_walk(const std::vector<std::pair<int, int>> &tasks, std::vector<std::optional<VcpuSched>> &out);
	void read_look_up(const std::vector<std::pair<int, int>> &tasks, std::vector<std::optional<VcpuSched>> &out);
	// One pass of the iterator, every record it wrote handed to on_record.
	template <typename OnRecord> void run_pass(bpf_link *link, OnRecord &&on_record);
};

VcpuCollector::VcpuCollector(VcpuPass pass)
{
	impl_ = std::make_unique<Impl>();
	if (pass == VcpuPass::Auto) {
		pass = VcpuPass::Walk;
		if (bpf_detail::has_kfunc("bpf_task_from_pid") && bpf_detail::has_kfunc("bpf_task_release")) {
			try {
				impl_->skel = load(VcpuPass::LookUp);
				impl_->bind();
				pass = VcpuPass::LookUp;
			} catch (const Error &e) {
				// No permission will not get better with the walk.
				if (bpf_detail::lacks_privilege(e.err()))
					throw;
				impl_->skel.reset();
			}
		}
		if (pass == VcpuPass::Walk)
			impl_->skel = load(VcpuPass::Walk);
	} else {
		impl_->skel = load(pass);
		if (pass == VcpuPass::LookUp)
			impl_->bind();
	}
	impl_->pass = pass;
}

VcpuCollector::~VcpuCollector() = default;
VcpuCollector::VcpuCollector(VcpuCollector &&) noexcept = default;
VcpuCollector &VcpuCollector::operator=(VcpuCollector &&) noexcept = default;

VcpuPass VcpuCollector::pass() const
{
	return impl_->pass;
}

void VcpuCollector::Impl::bind()
{
	union bpf_iter_link_info info = {};
	info.task.tid = static_cast<__u32>(::getpid());
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof info);
	errno = 0;
	bpf_link *link = bpf_program__attach_iter(skel->progs.look_up_wanted, &opts);
	if (!link)
		bpf_detail::throw_step("vcpu", "attach", errno ? errno : EINVAL);
	skel->links.look_up_wanted = link; // destroyed with the skeleton
}

void VcpuCollector::Impl::sync(const std::vector<std::pair<int, int>> &tasks)
{
	bpf_map *map = skel->maps.wanted;
	place.clear();
	for (std::size_t i = 0; i < tasks.size(); ++i) {
		const auto [pid, tid] = tasks[i];
		if (pid > 0 && tid > 0 && place.size() < HWSIG_VCPU_MAX_TASKS)
			place.emplace(tid, i);
	}
	for (auto it = wanted.begin(); it != wanted.end();) {
		if (place.count(it->first)) {
			++it;
			continue;
		}
		const __u32 key = static_cast<__u32>(it->first);
		if (bpf_map__delete_elem(map, &key, sizeof key, 0) && errno != ENOENT)
			throw_errno("BPF vcpu: forgetting a thread");
		it = wanted.erase(it);
	}
	for (const auto &[tid, at] : place) {
		const int pid = tasks[at].first;
		auto it = wanted.find(tid);
		if (it != wanted.end() && it->second == pid)
			continue;
		const __u32 key = static_cast<__u32>(tid), tgid = static_cast<__u32>(pid);
		if (bpf_map__update_elem(map, &key, sizeof key, &tgid, sizeof tgid, BPF_ANY))
			throw_errno("BPF vcpu: listing a thread");
		wanted[tid] = pid;
	}
}


template <typename OnRecord> void VcpuCollector::Impl::run_pass(bpf_link *link, OnRecord &&on_record)
{
	Fd iter(bpf_iter_create(bpf_link__fd(link)));
	if (!iter)
		throw_errno("BPF vcpu: starting a pass of the task iterator");
	// The kernel hands out whole records (a bpf_seq_write that does not fit
	// is redone in the next read); a partial one is kept for the next read
	// all the same.
	std::size_t have = 0;
	for (;;) {
		const ssize_t n = ::read(iter.get(), buf.data() + have, buf.size() - have);
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
			std::memcpy(&r, buf.data() + at, sizeof r);
			on_record(r);
		}
		std::memmove(buf.data(), buf.data() + at, have - at);
		have -= at;
	}
}

void VcpuCollector::Impl::read_walk(const std::vector<std::pair<int, int>> &tasks,
				    std::vector<std::optional<VcpuSched>> &out)
{
	if (wanted.empty())
		return;
	// place: sync()'s, this read's.
	run_pass(skel->links.dump_vcpus, [&](const hwsig_vcpu_record &r) {
		auto it = place.find(static_cast<int>(r.tid));
		if (it != place.end() && static_cast<__u32>(tasks[it->second].first) == r.tgid)
			out[it->second] = VcpuSched{r.on_cpu_ns, r.run_delay_ns, r.timeslices};
	});
}

void VcpuCollector::Impl::read_look_up(const std::vector<std::pair<int, int>> &tasks,
				       std::vector<std::optional<VcpuSched>> &out)
{
	auto *bss = skel->bss;
	__u32 n = 0;
	asked_at.clear();
	for (std::size_t i = 0; i < tasks.size(); ++i) {
		const auto [pid, tid] = tasks[i];
		if (pid <= 0 || tid <= 0)
			continue;
		if (n == HWSIG_VCPU_MAX_TASKS)
			break;
		bss->wanted_tids[n] = static_cast<__u32>(tid);
		bss->wanted_tgids[n] = static_cast<__u32>(pid);
		asked_at.push_back(i);
		++n;
	}
	bss->nr_wanted = n;
	if (n == 0)
		return;
	const __u64 passes = bss->passes;
	run_pass(skel->links.look_up_wanted, [](const hwsig_vcpu_record &) {});
	// Bound to a task that is gone, the iterator visits nothing: say so
	// rather than report every thread gone.
	if (bss->passes == passes)
		throw Error("BPF vcpu: the look-up pass did not run", ESRCH);
	for (__u32 i = 0; i < n; ++i) {
		const hwsig_vcpu_record &r = bss->results[i];
		if (r.tid)
			out[asked_at[i]] = VcpuSched{r.on_cpu_ns, r.run_delay_ns, r.timeslices};
	}
}

void VcpuCollector::read(const std::vector<std::pair<int, int>> &tasks, std::vector<std::optional<VcpuSched>> &out)
{
	out.assign(tasks.size(), std::nullopt);
	if (impl_->pass == VcpuPass::LookUp) {
		impl_->read_look_up(tasks, out);
		return;
	}
	impl_->sync(tasks);
	impl_->read_walk(tasks, out);
}

} // namespace hwsig
