// vhost queues -> scopes and series (vhost.h). Documentation/vhost.rst.
#include "hwsig/docs.h"
#include "hwsig/vhost.h"

#include <algorithm>
#include <set>

#include "hwsig/catalog.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/vm_parse.h"

namespace hwsig {

namespace {

constexpr const char *kSource = "bpf";

std::optional<int> tgid_of(const std::string &root, int tid)
{
	FileRead r = read_file(join_path(root, "proc/" + std::to_string(tid) + "/status"), 64 << 10);
	if (!r.data)
		return std::nullopt;
	for (auto line : split_lines(*r.data)) {
		if (!line.starts_with("Tgid:"))
			continue;
		auto n = parse_u64(trim(line.substr(5)));
		if (!n || *n == 0 || *n > 0x7fffffff)
			return std::nullopt;
		return static_cast<int>(*n);
	}
	return std::nullopt;
}

} // namespace

VhostQueueCounts &VhostQueueCounts::operator+=(const VhostQueueCounts &o)
{
	depth += o.depth;
	samples += o.samples;
	handled += o.handled;
	stalls += o.stalls;
	read_errors += o.read_errors;
	viommu += o.viommu;
	return *this;
}

std::string vhost_queue_scope(int owner, unsigned index, bool tx)
{
	return Scope::vq(static_cast<unsigned>(owner), index, tx ? Scope::Direction::Tx : Scope::Direction::Rx).str();
}

std::optional<int> vhost_worker_owner(const std::string &root, std::uint32_t worker_tid)
{
	FileRead r = read_file(join_path(root, "proc/" + std::to_string(worker_tid) + "/comm"), 256);
	if (!r.data)
		return std::nullopt;
	auto setter = vmparse::parse_vhost_comm(trim(*r.data));
	if (!setter)
		return std::nullopt;
	if (auto tgid = tgid_of(root, *setter))
		return tgid;
	// The thread that set the owner exited. On 6.4+ the worker is itself a
	// thread of the owner process: its own Tgid. (A 6.1 kthread is its own
	// thread group: nothing to learn from it.)
	auto own = tgid_of(root, static_cast<int>(worker_tid));
	if (own && *own != static_cast<int>(worker_tid))
		return own;
	return std::nullopt;
}

std::vector<VhostQueueView> name_vhost_queues(
	const std::map<VhostQueueKey, VhostQueueCounts> &queues, const std::vector<Vm> *vms,
	const std::function<std::optional<int>(std::uint32_t)> &owner_of_worker)
{
	std::map<std::uint32_t, int> owner_of; // worker tid -> owner
	std::map<int, std::set<std::uint32_t>> workers_of; // owner -> its workers
	for (const auto &[key, counts] : queues) {
		(void)counts;
		if (owner_of.count(key.worker_tid))
			continue;
		std::optional<int> owner;
		if (key.owner_tgid)
			owner = static_cast<int>(key.owner_tgid);
		if (!owner && vms) {
			for (const Vm &vm : *vms)
				if (std::find(vm.vhost_tids.begin(), vm.vhost_tids.end(),
					      static_cast<int>(key.worker_tid)) != vm.vhost_tids.end())
					owner = vm.pid;
		}
		if (!owner && owner_of_worker)
			owner = owner_of_worker(key.worker_tid);
		if (!owner)
			owner = static_cast<int>(key.worker_tid);
		owner_of[key.worker_tid] = *owner;
		workers_of[*owner].insert(key.worker_tid);
	}
	std::map<int, std::string> vm_scope; // owner -> vm:NAME
	if (vms)
		for (const Vm &vm : *vms)
			vm_scope[vm.pid] = vm.scope();

	std::vector<VhostQueueView> out;
	for (const auto &[key, counts] : queues) {
		VhostQueueView v;
		v.key = key;
		v.owner = owner_of[key.worker_tid];
		const auto &workers = workers_of[v.owner];
		v.pair = static_cast<unsigned>(std::distance(workers.begin(), workers.find(key.worker_tid)));
		v.index = 2 * v.pair + key.queue;
		v.scope = vhost_queue_scope(v.owner, v.index, key.tx);
		if (auto it = vm_scope.find(v.owner); it != vm_scope.end())
			v.vm_scope = it->second;
		v.counts = counts;
		out.push_back(std::move(v));
	}
	std::sort(out.begin(), out.end(), [](const VhostQueueView &a, const VhostQueueView &b) {
		return a.owner != b.owner ? a.owner < b.owner : a.index < b.index;
	});
	return out;
}

const std::vector<std::string> &vhost_metric_ids()
{
	static const std::vector<std::string> ids = metrics_reading(
		{series::kVhostDepth, series::kVhostRxBuffers, series::kVhostRxEmpty, series::kVhostStalls});
	return ids;
}

namespace {

// The ids of one direction's queues.
const std::vector<std::string> &tx_ids()
{
	static const std::vector<std::string> ids = metrics_reading({series::kVhostDepth});
	return ids;
}
const std::vector<std::string> &rx_ids()
{
	static const std::vector<std::string> ids =
		metrics_reading({series::kVhostRxBuffers, series::kVhostRxEmpty, series::kVhostStalls});
	return ids;
}

constexpr const char *kRxNotTx =
	"RX queue: its depth counts the guest's free receive buffers, whose high end is the healthy end "
	"(vhost.rx_buffers_p1, vhost.rx_empty_ratio; " HWSIG_DOC("vhost.rst") ")";
constexpr const char *kTxNotRx = "TX queue: no receive buffers or ring stalls by definition (" HWSIG_DOC("vhost.rst") ")";
constexpr const char *kViommu =
	"device behind a vIOMMU (VIRTIO_F_ACCESS_PLATFORM): its ring address is a guest I/O address, "
	"not a user address; depth not sampled";

using Sums = VhostRetired::Dirs;

void add_rx(Snapshot &snap, const std::string &scope, const VhostQueueCounts &c)
{
	snap.add_histogram(series::kVhostRxBuffers, scope, c.depth, kSource);
	snap.add_counter(series::kVhostRxEmpty, scope, static_cast<double>(c.depth.counts.empty() ? 0 : c.depth.counts[0]),
			 kSource);
	snap.add_counter(series::kVhostRxSamples, scope, static_cast<double>(c.samples), kSource);
	snap.add_counter(series::kVhostStalls, scope, static_cast<double>(c.stalls), kSource);
}

// A sum whose queues were never sampled, all behind a vIOMMU: notes where
// a percentile would otherwise say "no events".
void note_viommu(Snapshot &snap, const std::string &scope, const VhostQueueCounts &c, bool tx)
{
	if (!c.viommu || c.samples)
		return;
	for (const auto &id : tx ? tx_ids() : rx_ids())
		if (id != metric_id::kVhostRingStallsPs)
			snap.add_unavailable(id, scope, UnavailableCode::unsupported, kViommu);
}

} // namespace

void add_vhost_series(Snapshot &snap, const std::vector<VhostQueueView> &queues,
		      const std::vector<Vm> *vms, const VhostRetired &retired, const std::string &sums_unavailable)
{
	Sums all = retired.all;
	std::map<int, Sums> by_owner = retired.by_owner;
	for (const auto &q : queues) {
		if (q.key.tx) {
			snap.add_histogram(series::kVhostDepth, q.scope, q.counts.depth, kSource);
			for (const auto &id : rx_ids())
				snap.add_unavailable(id, q.scope, UnavailableCode::no_target, kTxNotRx);
		} else {
			add_rx(snap, q.scope, q.counts);
			for (const auto &id : tx_ids())
				snap.add_unavailable(id, q.scope, UnavailableCode::no_target, kRxNotTx);
		}
		note_viommu(snap, q.scope, q.counts, q.key.tx);
		all.add(q.counts, q.key.tx);
		by_owner[q.owner].add(q.counts, q.key.tx);
	}
	auto add_sums = [&](const std::string &scope, const Sums &s) {
		if (!sums_unavailable.empty()) {
			for (const auto &id : vhost_metric_ids())
				snap.add_unavailable(id, scope, UnavailableCode::capacity, sums_unavailable); // a full table
			return;
		}
		snap.add_histogram(series::kVhostDepth, scope, s.tx.depth, kSource);
		add_rx(snap, scope, s.rx);
		note_viommu(snap, scope, s.tx, true);
		note_viommu(snap, scope, s.rx, false);
	};
	if (vms) {
		for (const Vm &vm : *vms) {
			auto it = by_owner.find(vm.pid);
			if (it == by_owner.end()) {
				for (const auto &id : vhost_metric_ids())
					snap.add_unavailable(id, vm.scope(), UnavailableCode::no_target,
							     "no vhost-net virtqueue seen for this VM");
				continue;
			}
			add_sums(vm.scope(), it->second);
		}
	}
	add_sums("system", all);
}

std::optional<std::string> vhost_not_loaded_reason(const std::string &root)
{
	if (path_exists(join_path(root, "sys/module/vhost_net")) ||
	    path_exists(join_path(root, "sys/kernel/btf/vhost_net")))
		return std::nullopt;
	return std::string("vhost not loaded (no vhost_net module)");
}

} // namespace hwsig
