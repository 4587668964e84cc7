// The bpf.vmio source: block requests per VM (those its QEMU process
// submitted, any thread, and the writeback of the pages it dirtied where
// its cgroup tells them apart), at vm:NAME, and per VM and disk at
// vm:NAME/dev:NAME, in the io.* series the catalog already derives IOPS,
// bytes and latency percentiles from. Loaded only once there is a VM.
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "hwsig/block_device.h"
#include "hwsig/catalog.h"
#include "hwsig/error.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/source_bpf.h"
#include "hwsig/vm_writeback.h"
#include "source_bpf_lazy.h"
#include "vmio_collector.h"

namespace hwsig {

namespace {

using bpf_source::kSource;

// How often a VM's cgroup is looked at again (a VM moved to another
// cgroup), and its open files where its cgroup does not tell its writeback
// apart (an image hot-plugged with another cache mode): a few files per VM
// a minute, and the open files (a stat and a read per fd) only on hosts
// whose VM cgroups lack the memory and io controllers.
constexpr std::uint64_t kCgroupRecheckNs = 60'000'000'000ull;
constexpr std::uint64_t kFilesRecheckNs = 600'000'000'000ull;

const std::vector<std::string> kVmIoIds = {metric_id::kIoIopsRead,  metric_id::kIoIopsWrite,     metric_id::kIoReadBps,
					   metric_id::kIoWriteBps, metric_id::kIoLatencyP50Us, metric_id::kIoLatencyP99Us};

class BpfVmIoSource final : public Source {
public:
	std::string_view name() const override { return "bpf.vmio"; }
	std::vector<std::string> provides() const override { return kVmIoIds; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		std::map<int, Scope> scope_of;
		if (ctx.vms)
			for (const Vm &vm : *ctx.vms)
				scope_of[vm.pid] = Scope::vm(vm.name);
		if (collector_)
			for (int tgid : collector_->watched_vms())
				if (!scope_of.count(tgid))
					collector_->unwatch_vm(tgid);
		if (scope_of.empty())
			return; // nothing to attribute: not even loaded
		if (!collector_ && failure_.empty()) {
			try {
				collector_.emplace();
			} catch (const Error &e) {
				failure_ = bpf_source::lacks_privilege(e.err()) ? bpf_source::kNeedsRoot : e.what();
				failure_code_ = bpf_source::attach_failure_code(e.err());
			}
		}
		if (!collector_) {
			for (const auto &[tgid, scope] : scope_of)
				for (const auto &id : kVmIoIds)
					snap.add_unavailable(id, scope.str(), failure_code_, failure_);
			return;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		const std::uint64_t now_ns =
			static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
		names_.begin(ctx.root, now_ns);
		for (const char *s : {series::kIoReads, series::kIoWrites, series::kIoReadBytes, series::kIoWriteBytes,
				      series::kIoLatencyUs})
			snap.set_counts_from_zero(s);
		std::set<int> watched;
		for (const auto &[tgid, scope] : scope_of) {
			if (collector_->watch_vm(tgid)) {
				watched.insert(tgid);
				continue;
			}
			for (const auto &id : kVmIoIds)
				snap.add_unavailable(id, scope.str(), UnavailableCode::capacity,
						     "more VMs than the BPF I/O attribution holds (64)");
		}
		const std::map<int, std::string> &unattributed = attribute_writeback(ctx, scope_of, watched, now_ns);
		// Every VM in one read: a call per VM was most of this source.
		const auto all = collector_->all_counts();
		for (const auto &[tgid, scope] : scope_of) {
			auto found = watched.count(tgid) ? all.find(tgid) : all.end();
			const VmIoCounts *c = found == all.end() ? nullptr : &found->second;
			const std::string &vm = scope.str();
			// Its writes through the page cache are not told apart:
			// its write figures would be only the direct ones.
			auto unknown = unattributed.find(tgid);
			const bool writes = unknown == unattributed.end();
			if (!writes)
				for (const char *id : {metric_id::kIoIopsWrite, metric_id::kIoWriteBps})
					snap.add_unavailable(id, vm, UnavailableCode::unsupported, unknown->second);
			// A VM is reported from its first request on, as in
			// bpf.sched: a short-lived process that merely looks like
			// QEMU never shows up as a VM with zero I/O (derive takes
			// that first interval from zero).
			if (!c || !(c->reads || c->writes || c->read_bytes || c->write_bytes))
				continue;
			snap.add_counter(series::kIoReads, vm, static_cast<double>(c->reads), kSource);
			snap.add_counter(series::kIoReadBytes, vm, static_cast<double>(c->read_bytes), kSource);
			if (writes) {
				snap.add_counter(series::kIoWrites, vm, static_cast<double>(c->writes), kSource);
				snap.add_counter(series::kIoWriteBytes, vm, static_cast<double>(c->write_bytes), kSource);
			}
			snap.add_histogram(series::kIoLatencyUs, vm, c->latency_us, kSource);
			for (const auto &[dev, rw] : c->by_dev) {
				const std::string at = scope.disk(names_.label(dev)).str();
				snap.add_counter(series::kIoReads, at, static_cast<double>(rw.first), kSource);
				if (writes)
					snap.add_counter(series::kIoWrites, at, static_cast<double>(rw.second), kSource);
			}
		}
	}

private:
	struct Writeback {
		VmWriteback cgroup;
		std::vector<std::string> buffered; // read while cgroup.cgroup_id is 0
		std::uint64_t cgroup_ns = 0, files_ns = 0;
		bool files_read = false;
		bool attributed = false;
	};

	// Gives each watched VM whose cgroup is its own alone that cgroup's
	// writeback. Returns, by tgid, why the writes of a VM that writes
	// through the page cache are not told apart. Worked out again only
	// when the VMs or what was read of them changed: in a steady interval,
	// a look at each VM's clocks.
	const std::map<int, std::string> &attribute_writeback(const SourceContext &ctx,
							      const std::map<int, Scope> &scope_of,
							      const std::set<int> &watched, std::uint64_t now_ns)
	{
		bool changed = watched != writeback_for_ || retry_;
		for (auto it = writeback_.begin(); it != writeback_.end();)
			it = scope_of.count(it->first) ? std::next(it) : writeback_.erase(it);
		for (int tgid : watched) {
			Writeback &w = writeback_[tgid];
			if (!w.cgroup_ns || now_ns - w.cgroup_ns >= kCgroupRecheckNs) {
				VmWriteback again = vm_writeback(ctx.root, tgid);
				changed |= !w.cgroup_ns || again.cgroup_id != w.cgroup.cgroup_id ||
					   again.not_attributed != w.cgroup.not_attributed;
				w.cgroup = std::move(again);
				w.cgroup_ns = now_ns;
			}
			changed |= !w.attributed && (!w.files_read || now_ns - w.files_ns >= kFilesRecheckNs);
		}
		if (!changed)
			return unattributed_;
		writeback_for_ = watched;
		retry_ = false;
		std::map<std::uint64_t, std::vector<int>> vms_in; // cgroup id -> its VMs
		for (int tgid : watched)
			if (const Writeback &w = writeback_[tgid]; w.cgroup.cgroup_id)
				vms_in[w.cgroup.cgroup_id].push_back(tgid);
		std::map<int, std::string> &out = unattributed_;
		out.clear();
		for (int tgid : watched) {
			Writeback &w = writeback_[tgid];
			std::string why = w.cgroup.not_attributed;
			if (w.cgroup.cgroup_id) {
				const std::vector<int> &sharing = vms_in[w.cgroup.cgroup_id];
				const int other = sharing.front() == tgid ? sharing.back() : sharing.front();
				if (other != tgid)
					why = "its cgroup " + w.cgroup.cgroup + " holds " + scope_of.at(other).str() + " too";
				else if ((w.attributed = collector_->attribute_cgroup(tgid, w.cgroup.cgroup_id)))
					continue; // its writeback is counted as its own
				else { // another VM's until that one's next look: again next time
					why = "its cgroup " + w.cgroup.cgroup + " is another VM's";
					retry_ = true;
				}
			}
			w.attributed = false;
			collector_->attribute_cgroup(tgid, 0);
			if (!w.files_read || now_ns - w.files_ns >= kFilesRecheckNs) {
				w.buffered = buffered_images(ctx.root, tgid);
				w.files_ns = now_ns;
				w.files_read = true;
			}
			if (!w.buffered.empty())
				out[tgid] = "its writes through the page cache (" + w.buffered.front() +
					    ") are not told apart: " + why;
		}
		return out;
	}

	std::optional<VmIoCollector> collector_;
	std::map<int, Writeback> writeback_;
	std::set<int> writeback_for_;               // the VMs unattributed_ was worked out for
	std::map<int, std::string> unattributed_;
	bool retry_ = false;
	std::string failure_;
	UnavailableCode failure_code_ = UnavailableCode::read_error;
	BlockDevNames names_;
};

} // namespace

SourcePtr make_bpf_vmio_source()
{
	return std::make_unique<BpfVmIoSource>();
}

} // namespace hwsig
