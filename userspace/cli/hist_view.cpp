#include "hist_view.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "hwsig/fs.h"
#include "hwsig/histogram_print.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"
#include "hwsig/vhost.h"

namespace hwsigctl::hist {

namespace {

using hwsig::Scope;

const char *runq_series(const std::string &kind)
{
	if (kind == "wakeup")
		return hwsig::series::kRunqWakeupWaitUs;
	if (kind == "preempt")
		return hwsig::series::kRunqPreemptWaitUs;
	return hwsig::series::kRunqWaitUs;
}

const char *bio_series(const HistOptions &o)
{
	if (o.size)
		return hwsig::series::kIoSizeKib;
	if (o.seek)
		return hwsig::series::kIoSeekSlots;
	if (o.queue)
		return hwsig::series::kIoQueueUs;
	return hwsig::series::kIoLatencyUs;
}

const char *unit_of(const HistOptions &o)
{
	if (o.what == "vhost")
		return "depth";
	return o.size ? "kbytes" : o.seek ? "sectors" : o.ms ? "msecs" : "usecs";
}

const hwsig::Snapshot::Histograms::mapped_type *series_of(const hwsig::Snapshot &s, const char *name)
{
	auto it = s.histograms().find(name);
	return it == s.histograms().end() ? nullptr : &it->second;
}

HistRow row(std::string key, std::string title, const Histogram &counts)
{
	HistRow r;
	r.key = std::move(key);
	r.title = std::move(title);
	r.counts = counts;
	return r;
}

const hwsig::Vm *vm_with_pid(const std::vector<hwsig::Vm> &vms, int pid)
{
	for (const auto &vm : vms)
		if (vm.pid == pid)
			return &vm;
	return nullptr;
}

const hwsig::Vm *vm_named(const std::vector<hwsig::Vm> &vms, std::string_view name)
{
	for (const auto &vm : vms)
		if (vm.name == name)
			return &vm;
	return nullptr;
}

std::string comm_of(const std::string &root, int pid)
{
	hwsig::FileRead r = hwsig::read_file(hwsig::join_path(root, "proc/" + std::to_string(pid) + "/comm"), 256);
	if (!r.data)
		return "?";
	std::string s = *r.data;
	while (!s.empty() && s.back() == '\n')
		s.pop_back();
	return s;
}

// A guest is labelled by its VM name (every QEMU's comm is the same).
std::string process_title(const HistOptions &o, int pid, const hwsig::Vm *vm)
{
	if (vm)
		return "vm = " + vm->name + " (pid " + std::to_string(pid) + ")";
	return "pid = " + std::to_string(pid) + " " + comm_of(o.root, pid);
}

// -P, -p: the pid:N scopes of the processes asked for, else the vm:NAME
// ones of the guests the sampler follows; those that ran (waited, of any
// kind), by pid.
void process_rows(const HistOptions &o, const hwsig::Snapshot &s, const hwsig::Series<Histogram> &series,
		  const std::vector<hwsig::Vm> &vms, std::vector<HistRow> &rows)
{
	const bool by_pid = std::any_of(series.by_scope.begin(), series.by_scope.end(), [](const auto &e) {
		return Scope::parse(e.first).kind() == Scope::Kind::Pid;
	});
	std::vector<std::pair<int, HistRow>> procs;
	for (const auto &[text, h] : series.by_scope) {
		Scope scope = Scope::parse(text);
		const Histogram *waits = s.histogram(hwsig::series::kRunqWaitUs, text);
		if (scope.kind() != (by_pid ? Scope::Kind::Pid : Scope::Kind::Vm) || !waits || waits->total() == 0)
			continue;
		const hwsig::Vm *vm = by_pid ? vm_with_pid(vms, static_cast<int>(scope.pid())) : vm_named(vms, scope.vm());
		const int pid = by_pid ? static_cast<int>(scope.pid()) : vm ? vm->pid : 0;
		std::string title = vm || by_pid ? process_title(o, pid, vm) : "vm = " + std::string(scope.vm());
		procs.push_back({pid, row(text, std::move(title), h)});
	}
	std::stable_sort(procs.begin(), procs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
	for (auto &proc : procs)
		rows.push_back(std::move(proc.second));
}

void runq_rows(const HistOptions &o, const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms,
	       std::vector<HistRow> &rows)
{
	const auto *series = series_of(s, runq_series(o.kind));
	if (!series)
		return;
	if (o.per_process || !o.pids.empty())
		return process_rows(o, s, *series, vms, rows);
	if (!o.per_cpu) {
		if (const auto *h = s.histogram(runq_series(o.kind), "system"))
			rows.push_back(row("system", "", *h));
		return;
	}
	std::vector<std::pair<unsigned, HistRow>> cpus;
	for (const auto &[text, h] : series->by_scope) {
		Scope scope = Scope::parse(text);
		if (scope.kind() == Scope::Kind::Cpu)
			cpus.push_back({scope.cpu(), row(text, "cpu = " + std::to_string(scope.cpu()), h)});
	}
	std::sort(cpus.begin(), cpus.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
	for (auto &cpu : cpus)
		rows.push_back(std::move(cpu.second));
}

void bio_rows(const HistOptions &o, const hwsig::Snapshot &s, std::vector<HistRow> &rows)
{
	const auto *series = series_of(s, bio_series(o));
	if (!series)
		return;
	for (const auto &[text, h] : series->by_scope) {
		Scope scope = Scope::parse(text);
		if (scope.kind() != Scope::Kind::Dev)
			continue;
		HistRow disk = row(text, "disk = " + std::string(scope.dev()), h);
		disk.skip_if_idle = o.per_disk;
		disk.summed = !o.per_disk;
		rows.push_back(std::move(disk));
	}
}

// The worker thread of a VM's queue pair: pairs are numbered in worker-tid
// order, so the pair-th of its vhost workers when every one has a queue
// here; nullopt when that cannot be told.
std::optional<int> vhost_worker(const hwsig::Vm *vm, unsigned pair, std::size_t pairs_seen)
{
	if (!vm || vm->vhost_tids.size() != pairs_seen || pair >= pairs_seen)
		return std::nullopt;
	std::vector<int> tids = vm->vhost_tids;
	std::sort(tids.begin(), tids.end());
	return tids[pair];
}

// The TX queues' depths and the RX queues' free buffers, per queue or per
// owner (-V: its queues merged slot by slot), with the RX ring stalls.
void vhost_rows(const HistOptions &o, const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms,
		std::vector<HistRow> &rows)
{
	std::map<std::string, HistRow> by_key;
	std::map<unsigned, std::set<unsigned>> pairs_of; // owner -> its queue pairs
	for (const char *name : {hwsig::series::kVhostDepth, hwsig::series::kVhostRxBuffers})
		if (const auto *series = series_of(s, name))
			for (const auto &[text, h] : series->by_scope) {
				Scope scope = Scope::parse(text);
				if (scope.kind() != Scope::Kind::Vq)
					continue;
				pairs_of[scope.pid()].insert(scope.queue() / 2);
				const int owner = static_cast<int>(scope.pid());
				const hwsig::Vm *vm = vm_with_pid(vms, owner);
				const bool rx = scope.direction() == Scope::Direction::Rx;
				const auto *stalls = rx ? s.counter(hwsig::series::kVhostStalls, text) : nullptr;
				const std::uint64_t n = stalls ? static_cast<std::uint64_t>(stalls->value) : 0;
				std::string key = !o.per_vm ? text : vm ? "vm " + vm->name : "pid " + std::to_string(owner);
				auto [it, fresh] = by_key.try_emplace(key);
				HistRow &row = it->second;
				if (fresh) {
					row.key = key;
					row.counts = Histogram{Histogram::Layout::LinearLog2, {}};
				}
				row.counts += h;
				if (o.per_vm) {
					row.title = vm ? "vm = " + vm->name + " (pid " + std::to_string(owner) + ")"
						       : "owner = " + std::to_string(owner) + " (not a discovered VM)";
					row.stalls = row.stalls.value_or(0) + n;
				} else {
					row.title = "vq = " + text + (vm ? " vm = " + vm->name : "");
					if (rx)
						row.stalls = n;
				}
			}
	for (auto &[key, row] : by_key) {
		Scope scope = Scope::parse(key);
		if (scope.kind() == Scope::Kind::Vq)
			if (auto tid = vhost_worker(vm_with_pid(vms, static_cast<int>(scope.pid())), scope.queue() / 2,
						    pairs_of[scope.pid()].size()))
				row.title += " worker = " + std::to_string(*tid);
		rows.push_back(std::move(row));
	}
}

} // namespace

std::vector<HistRow> hist_rows(const HistOptions &o, const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms)
{
	std::vector<HistRow> rows;
	if (o.what == "runq")
		runq_rows(o, s, vms, rows);
	else if (o.what == "bio")
		bio_rows(o, s, rows);
	else
		vhost_rows(o, s, vms, rows);
	return rows;
}

void HistView::start(const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms)
{
	for (const auto &row : hist_rows(o_, s, vms)) {
		advance(row);
		if (row.stalls)
			advance_stalls(row);
	}
}

Histogram HistView::advance(const HistRow &row)
{
	Histogram d = diff(prev_[row.key], row.counts);
	prev_[row.key] = row.counts;
	return d;
}

std::uint64_t HistView::advance_stalls(const HistRow &row)
{
	std::uint64_t &prev = prev_stalls_[row.key];
	std::uint64_t d = *row.stalls - std::min(*row.stalls, prev);
	prev = *row.stalls;
	return d;
}

void HistView::print_log2(const Histogram &h, const char *unit) const
{
	if (us_slots_in_ms_)
		hwsig::print_log2_hist_scaled(stdout, h, unit, 1000.0);
	else
		hwsig::print_log2_hist(stdout, h, unit);
}

void HistView::print(const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms)
{
	const auto rows = hist_rows(o_, s, vms);
	const char *unit = unit_of(o_);
	Histogram sum;
	if (rows.empty() && !empty_note_.empty())
		std::printf("%s\n", empty_note_.c_str());
	for (const auto &row : rows) {
		Histogram d = advance(row);
		if (row.summed) {
			sum += d;
			continue;
		}
		if (row.skip_if_idle && d.total() == 0)
			continue;
		if (!row.title.empty())
			std::printf("\n%s\n", row.title.c_str());
		if (row.stalls)
			std::printf("ring stalls = %llu\n", static_cast<unsigned long long>(advance_stalls(row)));
		if (o_.what == "vhost")
			hwsig::print_linear_log2_hist(stdout, d, unit);
		else
			print_log2(d, unit);
	}
	// bio without -D: every disk in one histogram, printed even when empty.
	if (o_.what == "bio" && !o_.per_disk)
		print_log2(sum, unit);
	// What the rows above leave out in this interval: handler runs of
	// queues the full BPF table could not take (the source's note at
	// system when its sums are not whole).
	if (o_.what == "vhost")
		for (const auto &note : s.unavailable())
			if (note.scope == "system" && note.id == hwsig::metric_id::kVhostQueueDepthP50 &&
			    note.reason.find(hwsig::kVhostTableFull) != std::string::npos)
				std::printf("\n%s\n", note.reason.c_str());
}

} // namespace hwsigctl::hist
