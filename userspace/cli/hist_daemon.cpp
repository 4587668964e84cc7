#include "hist_daemon.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "hwsig/histogram_print.h"
#include "hwsig/series.h"

namespace hwsigctl::hist {
namespace {

std::string_view runq_series(const std::string &kind)
{
	if (kind == "wakeup")
		return hwsig::series::kRunqWakeupWaitUs;
	if (kind == "preempt")
		return hwsig::series::kRunqPreemptWaitUs;
	return hwsig::series::kRunqWaitUs;
}

std::string_view bio_series(const HistOptions &o)
{
	if (o.size)
		return hwsig::series::kIoSizeKib;
	if (o.seek)
		return hwsig::series::kIoSeekSlots;
	if (o.queue)
		return hwsig::series::kIoQueueUs;
	return hwsig::series::kIoLatencyUs;
}

bool starts_with(const std::string &s, std::string_view p)
{
	return s.compare(0, p.size(), p) == 0;
}

// Scopes of one series in one snapshot, as (scope, histogram).
const std::map<std::string, Histogram, std::less<>> *scopes_of(const hwsig::Snapshot &s, std::string_view series)
{
	auto it = s.histograms().find(series);
	return it == s.histograms().end() ? nullptr : &it->second.by_scope;
}

// vhost: the TX queues' depths and the RX queues' free buffers are two
// series; their queues are shown together, a VM's rows summed over both
// (as `hist vhost -V` without hwsigd does).
std::map<std::string, Histogram, std::less<>> vhost_scopes(const hwsig::Snapshot &s)
{
	std::map<std::string, Histogram, std::less<>> out;
	for (const char *name : {hwsig::series::kVhostDepth, hwsig::series::kVhostRxBuffers})
		if (const auto *sc = scopes_of(s, name))
			for (const auto &[scope, h] : *sc) {
				auto [it, fresh] = out.emplace(scope, h);
				if (!fresh)
					it->second += h;
			}
	return out;
}

// "cpu:10" sorts after "cpu:9".
bool scope_less(const std::string &a, const std::string &b)
{
	auto num = [](const std::string &s) {
		auto colon = s.find(':');
		return colon == std::string::npos ? -1L : std::strtol(s.c_str() + colon + 1, nullptr, 10);
	};
	if (starts_with(a, "cpu:") && starts_with(b, "cpu:"))
		return num(a) < num(b);
	return a < b;
}

std::string title_of(const std::string &scope)
{
	if (starts_with(scope, "cpu:"))
		return "cpu = " + scope.substr(4);
	if (starts_with(scope, "vm:"))
		return "vm = " + scope.substr(3);
	if (starts_with(scope, "dev:"))
		return "disk = " + scope.substr(4);
	if (starts_with(scope, "vq:"))
		return "vq = " + scope;
	return scope;
}

} // namespace

int run_from_daemon(const HistOptions &o, const hwsig::DaemonClient &daemon)
{
	const char *why_not = nullptr;
	if (!o.pids.empty())
		why_not = "-p selects processes in the scheduler program, which hwsigd shares";
	else if (o.ms)
		why_not = "-m needs millisecond slots, hwsigd's programs count microseconds";
	else if (o.per_process && o.what == "runq")
		why_not = nullptr; // -P: the VMs hwsigd follows (vm:NAME scopes)
	if (why_not) {
		std::fprintf(stderr,
			     "hwsigctl hist: hwsigd runs: %s; pass --no-daemon to load a second copy of the "
			     "programs for this run\n",
			     why_not);
		return 1;
	}
	const std::string_view series = o.what == "runq" ? runq_series(o.kind)
					: o.what == "bio" ? bio_series(o)
							  : std::string_view(hwsig::series::kVhostDepth);
	const char *unit = o.what == "vhost" ? "depth" : o.size ? "kbytes" : o.seek ? "sectors" : "usecs";
	// Which scopes make a histogram of their own; the rest are summed.
	auto own_row = [&](const std::string &scope) {
		if (o.what == "runq")
			return o.per_cpu ? starts_with(scope, "cpu:") : o.per_process ? starts_with(scope, "vm:")
										 : scope == "system";
		if (o.what == "bio")
			return o.per_disk && starts_with(scope, "dev:");
		return o.per_vm ? starts_with(scope, "vm:") : starts_with(scope, "vq:");
	};
	auto summed = [&](const std::string &scope) {
		return o.what == "bio" && !o.per_disk && starts_with(scope, "dev:");
	};
	std::map<std::string, Histogram> prev;
	std::string banner = std::string(o.what == "runq" ? "Tracing run queue latency"
					 : o.what == "bio" ? "Tracing block device I/O"
							   : "Tracing vhost-net virtqueue depths") +
			     " (through hwsigd at " + daemon.path() + ")";
	// The cumulative counts when the run starts: the first interval is
	// the difference from them, as with collectors of our own.
	auto first = daemon.snapshot().snapshot;
	std::map<std::string, Histogram, std::less<>> vhost_first, vhost_now;
	const auto *first_scopes = o.what == "vhost" ? &(vhost_first = vhost_scopes(first)) : scopes_of(first, series);
	if (const auto *sc = first_scopes)
		for (const auto &[scope, h] : *sc)
			prev[scope] = h;
	return interval_loop(o, banner.c_str(), [&] {
		auto snap = daemon.snapshot().snapshot;
		const auto *sc = o.what == "vhost" ? &(vhost_now = vhost_scopes(snap)) : scopes_of(snap, series);
		std::vector<std::string> rows;
		Histogram sum;
		sum.layout = Histogram::Layout::Log2;
		bool any_sum = false;
		if (sc) {
			for (const auto &[scope, h] : *sc) {
				Histogram d = diff(prev[scope], h);
				prev[scope] = h;
				if (own_row(scope))
					rows.push_back(scope);
				else if (summed(scope)) {
					sum += d;
					any_sum = true;
				}
				prev["delta:" + scope] = d;
			}
		}
		std::sort(rows.begin(), rows.end(), scope_less);
		if (o.what == "bio" && !o.per_disk) {
			hwsig::print_log2_hist(stdout, any_sum ? sum : Histogram{}, unit);
			return;
		}
		if (rows.empty())
			std::printf(o.what == "vhost" ? "no vhost-net virtqueue has been handled yet\n"
				    : o.per_process   ? "no QEMU/KVM guest followed by hwsigd\n"
						      : "no samples\n");
		for (const auto &scope : rows) {
			const Histogram &d = prev["delta:" + scope];
			if (o.what == "bio" && d.total() == 0)
				continue;
			const bool single = o.what == "runq" && scope == "system";
			if (!single)
				std::printf("\n%s\n", title_of(scope).c_str());
			if (o.what == "vhost")
				hwsig::print_linear_log2_hist(stdout, d, unit);
			else
				hwsig::print_log2_hist(stdout, d, unit);
		}
	});
}

} // namespace hwsigctl::hist
