// The bpf.vhost source: reads the VhostCollector, names its queues after
// their VMs, emits the bpf.vhost_* series (hwsig/vhost.h).
#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>

#include "hwsig/fs.h"
#include "hwsig/source_bpf.h"
#include "hwsig/series.h"
#include "hwsig/vhost.h"
#include "source_bpf_lazy.h"
#include "hwsig_vhost.h"
#include "vhost_collector.h"

// The registry's bucket spec describes this program's depth histograms.
static_assert(hwsig::series::kExactDepth.slots == HWSIG_VHOST_SLOTS);

namespace hwsig {

namespace {

using bpf_source::all_unavailable;

// Unlike the other BPF sources it cannot attach before vhost_net is
// loaded: until then its metrics say "vhost not loaded". While loaded,
// every collect stats the module (its inode tells a reload); while not,
// it checks again when the VMs are rediscovered: the module loads when a
// VM with vhost starts, which that scan sees. A failed attach is
// remembered until the module is reloaded (a kprobe-attached collector
// does not keep vhost_net from being unloaded; a reloaded module needs a
// new collector).
class BpfVhostSource : public Source {
public:
	explicit BpfVhostSource(VhostAttach how) : how_(how) {}
	std::string_view name() const override { return "bpf.vhost"; }
	std::vector<std::string> provides() const override { return vhost_metric_ids(); }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		// Until a VM with vhost-net starts, nothing loads the module.
		if (!not_loaded_.empty() && !ctx.rediscovered) {
			all_unavailable(snap, vhost_metric_ids(), UnavailableCode::no_target, not_loaded_);
			return;
		}
		const ino_t module = module_ino(ctx.root);
		if (!module) {
			// Built in without /sys/module/vhost_net: its BTF says it is there.
			if (auto why = vhost_not_loaded_reason(ctx.root)) {
				reset();
				not_loaded_ = *why;
				all_unavailable(snap, vhost_metric_ids(), UnavailableCode::no_target, not_loaded_);
				return;
			}
		}
		not_loaded_.clear();
		if ((collector_ || !failure_.empty()) && module != attached_module_)
			reset(); // reloaded: attach to the new module
		if (!collector_ && failure_.empty()) {
			attached_module_ = module;
			try {
				collector_.emplace(how_, ctx.root);
			} catch (const Error &e) {
				failure_ = bpf_source::lacks_privilege(e.err()) ? bpf_source::kNeedsRoot : e.what();
				failure_code_ = bpf_source::attach_failure_code(e.err());
			} catch (const std::exception &e) {
				failure_ = e.what();
				failure_code_ = UnavailableCode::read_error;
			}
		}
		if (!collector_) {
			all_unavailable(snap, vhost_metric_ids(), failure_code_, failure_);
			return;
		}
		try {
			emit(ctx, snap);
		} catch (const std::exception &e) {
			all_unavailable(snap, vhost_metric_ids(), UnavailableCode::read_error, e.what());
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
		collector_.reset();
		dropped_seen_ = 0;
		failure_.clear();
		retired_ = {};
	}

	void emit(const SourceContext &ctx, Snapshot &snap)
	{
		// The checks and the attach above took their time: the reading is
		// the map walk.
		snap.restamp_readings();
		auto queues = collector_->queues();
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
			retired_.add(owner, it->second, it->first.tx);
			collector_->forget(it->first);
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
		// Handler runs of queues the full BPF table could not take, since
		// the last snapshot: of unknown queues, so no sum is whole.
		const std::uint64_t dropped = collector_->dropped();
		std::string sums_unavailable;
		if (dropped > dropped_seen_)
			sums_unavailable = std::to_string(dropped - dropped_seen_) +
					   " vhost handler runs not counted: " + kVhostTableFull + " (" +
					   std::to_string(HWSIG_VHOST_MAX_QUEUES) + ")";
		dropped_seen_ = dropped;
		add_vhost_series(snap, views, ctx.vms, retired_, sums_unavailable);
	}

	VhostAttach how_;
	std::optional<VhostCollector> collector_;
	std::uint64_t dropped_seen_ = 0; // the collector's dropped() at the last emit
	std::string failure_;
	UnavailableCode failure_code_ = UnavailableCode::read_error;
	std::string not_loaded_; // why, when the last check found no vhost_net
	ino_t attached_module_ = 0;
	VhostRetired retired_;
	std::map<std::uint32_t, int> owner_of_; // worker tid -> owner, last collect
};

} // namespace

SourcePtr make_bpf_vhost_source()
{
	return make_bpf_vhost_source(VhostAttach::Auto);
}

SourcePtr make_bpf_vhost_source(VhostAttach how)
{
	return std::make_unique<BpfVhostSource>(how);
}

} // namespace hwsig
