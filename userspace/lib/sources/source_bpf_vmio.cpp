// The bpf.vmio source: block requests per VM (those its QEMU process
// submitted, any thread), at vm:NAME, and per VM and disk at
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
#include "source_bpf_lazy.h"
#include "vmio_collector.h"

namespace hwsig {

namespace {

using bpf_source::kSource;

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
		names_.begin(ctx.root, static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
					       static_cast<std::uint64_t>(ts.tv_nsec));
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
		// Every VM in one read: a call per VM was most of this source.
		const auto all = collector_->all_counts();
		for (const auto &[tgid, scope] : scope_of) {
			auto found = watched.count(tgid) ? all.find(tgid) : all.end();
			const VmIoCounts *c = found == all.end() ? nullptr : &found->second;
			// A VM is reported from its first request on, as in
			// bpf.sched: a short-lived process that merely looks like
			// QEMU never shows up as a VM with zero I/O (derive takes
			// that first interval from zero).
			if (!c || !(c->reads || c->writes || c->read_bytes || c->write_bytes))
				continue;
			const std::string &vm = scope.str();
			snap.add_counter(series::kIoReads, vm, static_cast<double>(c->reads), kSource);
			snap.add_counter(series::kIoWrites, vm, static_cast<double>(c->writes), kSource);
			snap.add_counter(series::kIoReadBytes, vm, static_cast<double>(c->read_bytes), kSource);
			snap.add_counter(series::kIoWriteBytes, vm, static_cast<double>(c->write_bytes), kSource);
			snap.add_histogram(series::kIoLatencyUs, vm, c->latency_us, kSource);
			for (const auto &[dev, rw] : c->by_dev) {
				const std::string at = scope.disk(names_.label(dev)).str();
				snap.add_counter(series::kIoReads, at, static_cast<double>(rw.first), kSource);
				snap.add_counter(series::kIoWrites, at, static_cast<double>(rw.second), kSource);
			}
		}
	}

private:
	std::optional<VmIoCollector> collector_;
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
