// The BPF sources: attach lazily, read the probes, emit raw series.
#include "hwsig/bpf_sources.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <set>

#include "hwsig/block_device.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/series.h"

namespace hwsig {

const char *attach_name(BpfAttach how)
{
	switch (how) {
	case BpfAttach::TpBtf:
		return "tp_btf";
	case BpfAttach::RawTp:
		return "raw_tp";
	default:
		return "auto";
	}
}

BpfAttach attach_from_environment(BpfAttach how)
{
	const char *env = std::getenv("HWSIG_BPF_ATTACH");
	if (how != BpfAttach::Auto || !env || !*env || std::string_view(env) == "auto")
		return how;
	if (std::string_view(env) == "tp_btf")
		return BpfAttach::TpBtf;
	if (std::string_view(env) == "raw_tp")
		return BpfAttach::RawTp;
	throw Error(std::string("HWSIG_BPF_ATTACH=") + env + ": want tp_btf, raw_tp or auto", EINVAL);
}

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

std::string bpf_unavailable_reason(const std::exception &e)
{
	return e.what();
}

namespace {

const std::vector<std::string> kSchedIds = {"sched.runq_wait_p50_us", "sched.runq_wait_p99_us",
					    "sched.involuntary_ctxsw_ps"};
const std::vector<std::string> kBlockIds = {
	"io.iops_read",      "io.iops_write",   "io.read_bps",     "io.write_bps",      "io.latency_p50_us",
	"io.latency_p99_us", "io.queue_p50_us", "io.queue_p99_us", "io.pattern_entropy"};

constexpr const char *kSource = "bpf";

void all_unavailable(Snapshot &snap, const std::vector<std::string> &ids, const std::string &why)
{
	for (const auto &id : ids)
		snap.add_unavailable(id, "system", why);
}

// Attaches on first use; a failure is remembered, not retried every
// interval (it would not change while we run).
template <typename Probe> class LazyCollector {
public:
	Probe *get()
	{
		if (!probe_ && failure_.empty()) {
			try {
				probe_.emplace();
			} catch (const std::exception &e) {
				failure_ = bpf_unavailable_reason(e);
			}
		}
		return probe_ ? &*probe_ : nullptr;
	}
	const std::string &failure() const { return failure_; }

private:
	std::optional<Probe> probe_;
	std::string failure_;
};

class BpfSchedSource : public Source {
public:
	explicit BpfSchedSource(std::vector<int> pids) : pids_(std::move(pids)) {}
	std::string_view name() const override { return "bpf.sched"; }
	std::vector<std::string> provides() const override { return kSchedIds; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		SchedCollector *probe = probe_.get();
		if (!probe) {
			all_unavailable(snap, kSchedIds, probe_.failure());
			return;
		}
		try {
			emit(ctx, *probe, snap);
		} catch (const std::exception &e) {
			all_unavailable(snap, kSchedIds, e.what());
		}
	}

private:
	static void add(Snapshot &snap, const std::string &scope, const SchedCounts &c)
	{
		snap.add_histogram(series::kRunqWaitUs, scope, c.wait_us(), kSource);
		snap.add_histogram(series::kRunqWakeupWaitUs, scope, c.wakeup_wait_us, kSource);
		snap.add_histogram(series::kRunqPreemptWaitUs, scope, c.preempt_wait_us, kSource);
		snap.add_counter(series::kInvoluntarySwitches, scope, static_cast<double>(c.involuntary), kSource);
	}

	void emit(const SourceContext &ctx, SchedCollector &probe, Snapshot &snap)
	{
		// tgid -> scopes it is reported under.
		std::map<int, std::vector<std::string>> wanted;
		if (ctx.vms)
			for (const Vm &vm : *ctx.vms)
				wanted[vm.pid].push_back(vm.scope());
		for (int pid : pids_)
			wanted[pid].push_back("pid:" + std::to_string(pid));
		for (int tgid : probe.selected())
			if (!wanted.count(tgid))
				probe.deselect(tgid);
		for (const auto &[tgid, scopes] : wanted) {
			if (!probe.select(tgid)) {
				for (const auto &scope : scopes)
					for (const auto &id : kSchedIds)
						snap.add_unavailable(id, scope, "too many processes selected for BPF");
				continue;
			}
			auto counts = probe.process(tgid);
			if (!counts)
				continue;
			for (const auto &scope : scopes)
				add(snap, scope, *counts);
		}
		auto cpus = probe.per_cpu();
		SchedCounts system = cpus.empty() ? SchedCounts{} : cpus[0];
		for (std::size_t cpu = 0; cpu < cpus.size(); ++cpu) {
			add(snap, "cpu:" + std::to_string(cpu), cpus[cpu]);
			if (cpu)
				system += cpus[cpu];
		}
		add(snap, "system", system);
	}

	std::vector<int> pids_;
	LazyCollector<SchedCollector> probe_;
};

class BpfBlockSource : public Source {
public:
	std::string_view name() const override { return "bpf.block"; }
	std::vector<std::string> provides() const override { return kBlockIds; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		BlockCollector *probe = probe_.get();
		if (!probe) {
			all_unavailable(snap, kBlockIds, probe_.failure());
			return;
		}
		try {
			for (const auto &[dev, c] : probe->devices()) {
				std::string scope = "dev:" + block_dev_label(ctx.root, dev);
				snap.add_counter(series::kIoReads, scope, static_cast<double>(c.reads), kSource);
				snap.add_counter(series::kIoWrites, scope, static_cast<double>(c.writes), kSource);
				snap.add_counter(series::kIoReadBytes, scope, static_cast<double>(c.read_bytes),
						 kSource);
				snap.add_counter(series::kIoWriteBytes, scope, static_cast<double>(c.write_bytes),
						 kSource);
				snap.add_histogram(series::kIoLatencyUs, scope, c.latency_us, kSource);
				snap.add_histogram(series::kIoQueueUs, scope, c.queue_us, kSource);
				snap.add_histogram(series::kIoSizeKib, scope, c.size_kib, kSource);
				// The full log2 map; derive folds it (seek_pattern_entropy).
				snap.add_histogram(series::kIoSeekSlots, scope, c.seek_sectors, kSource);
			}
		} catch (const std::exception &e) {
			all_unavailable(snap, kBlockIds, e.what());
		}
	}

private:
	LazyCollector<BlockCollector> probe_;
};

// The vhost collector. Unlike the others it cannot attach before vhost_net
// is loaded: until then its metrics say "vhost not loaded" and every
// collect checks again (one stat). A failed attach is remembered until the
// module is reloaded (a kprobe-attached collector does not keep vhost_net
// from being unloaded; a reloaded module needs new probes).
class BpfVhostSource : public Source {
public:
	explicit BpfVhostSource(VhostAttach how) : how_(how) {}
	std::string_view name() const override { return "bpf.vhost"; }
	std::vector<std::string> provides() const override { return vhost_metric_ids(); }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (auto why = vhost_not_loaded_reason(ctx.root)) {
			reset();
			all_unavailable(snap, vhost_metric_ids(), *why);
			return;
		}
		ino_t module = module_ino(ctx.root);
		if ((probe_ || !failure_.empty()) && module != attached_module_)
			reset(); // reloaded: attach to the new module
		if (!probe_ && failure_.empty()) {
			attached_module_ = module;
			try {
				probe_.emplace(how_, ctx.root);
			} catch (const std::exception &e) {
				failure_ = bpf_unavailable_reason(e);
			}
		}
		if (!probe_) {
			all_unavailable(snap, vhost_metric_ids(), failure_);
			return;
		}
		try {
			emit(ctx, snap);
		} catch (const std::exception &e) {
			all_unavailable(snap, vhost_metric_ids(), e.what());
		}
	}

private:
	static ino_t module_ino(const std::string &root)
	{
		struct stat st {};
		if (::stat(join_path(root, "sys/module/vhost_net").c_str(), &st) != 0)
			return 0;
		return st.st_ino;
	}

	void reset()
	{
		probe_.reset();
		failure_.clear();
		retired_ = {};
	}

	void emit(const SourceContext &ctx, Snapshot &snap)
	{
		auto queues = probe_->queues();
		// Queues whose worker exited: their counts move to retired_ (the
		// VM and system sums must not go backwards), their entries go.
		for (auto it = queues.begin(); it != queues.end();) {
			if (path_exists(join_path(ctx.root, "proc/" + std::to_string(it->first.worker_tid)))) {
				++it;
				continue;
			}
			int owner = it->first.owner_tgid ? static_cast<int>(it->first.owner_tgid)
							 : static_cast<int>(it->first.worker_tid);
			if (auto o = owner_of_.find(it->first.worker_tid); o != owner_of_.end())
				owner = o->second;
			retired_.by_owner[owner] += it->second;
			retired_.all += it->second;
			probe_->forget(it->first);
			it = queues.erase(it);
		}
		auto views = name_vhost_queues(queues, ctx.vms, [&](std::uint32_t tid) {
			return vhost_worker_owner(ctx.root, tid);
		});
		owner_of_.clear();
		for (const auto &v : views)
			owner_of_[v.key.worker_tid] = v.owner;
		// A retired owner that is gone (its VM ended) is dropped.
		for (auto it = retired_.by_owner.begin(); it != retired_.by_owner.end();) {
			if (path_exists(join_path(ctx.root, "proc/" + std::to_string(it->first))))
				++it;
			else
				it = retired_.by_owner.erase(it);
		}
		add_vhost_series(snap, views, ctx.vms, retired_);
	}

	VhostAttach how_;
	std::optional<VhostCollector> probe_;
	std::string failure_;
	ino_t attached_module_ = 0;
	VhostRetired retired_;
	std::map<std::uint32_t, int> owner_of_; // worker tid -> owner, last collect
};

} // namespace

SourcePtr make_bpf_vhost_source(VhostAttach how)
{
	return std::make_unique<BpfVhostSource>(how);
}

SourcePtr make_bpf_sched_source()
{
	return std::make_unique<BpfSchedSource>(std::vector<int>{});
}

SourcePtr make_bpf_sched_source(std::vector<int> pids)
{
	return std::make_unique<BpfSchedSource>(std::move(pids));
}

SourcePtr make_bpf_block_source()
{
	return std::make_unique<BpfBlockSource>();
}

} // namespace hwsig
