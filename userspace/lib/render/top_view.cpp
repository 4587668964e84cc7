// hwsigctl top's rows, verdicts and renderings (include/hwsig/top_view.h).
#include "hwsig/top_view.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "hwsig/series.h"
#include "hwsig/parse.h"
#include "hwsig/render.h"
#include "hwsig/scope.h"
#include "hwsig/units.h"

namespace hwsig {

namespace {

using Kind = TopColumn::Kind;

// (id, scope) -> value of one interval, for the ids a row reads: a host
// with 200 VMs has 40,000 culprit pairs that only find_culprits() reads.
class Values {
public:
	explicit Values(const Interval &iv)
	{
		static const std::set<std::string_view> read = {
			metric_id::kMemMbmTotalBps, metric_id::kMemLlcMissBps, metric_id::kMemLlcOccupancyBytes,
			metric_id::kSchedCpuBusyRatio, metric_id::kSchedRunqWaitP99Us,
			metric_id::kSchedInvoluntaryCtxswPs, metric_id::kCpuIpc, metric_id::kCpuLlcMpki,
			metric_id::kSchedVcpuCpus, metric_id::kSchedVcpuWaitRatio, metric_id::kVhostQueueDepthP99,
			metric_id::kVhostRingStallsPs, metric_id::kIoIopsRead, metric_id::kIoIopsWrite,
			metric_id::kIoLatencyP99Us,
		};
		for (const Metric &m : iv.metrics)
			if (read.count(m.id))
				by_key_[{m.id, m.scope}] = {m.value, m.upper_bound};
	}
	std::optional<double> get(const std::string &id, const std::string &scope) const
	{
		auto it = by_key_.find({id, scope});
		if (it == by_key_.end() || !std::isfinite(it->second.first))
			return std::nullopt;
		return it->second.first;
	}
	// Whether the value is an upper bound (Metric::upper_bound).
	bool bound(const std::string &id, const std::string &scope) const
	{
		auto it = by_key_.find({id, scope});
		return it != by_key_.end() && it->second.second;
	}

private:
	std::map<std::pair<std::string, std::string>, std::pair<double, bool>> by_key_;
};

// Memory bandwidth: resctrl's MBM where it is on, else what LLC misses
// suggest; and the LLC the threads hold (resctrl only).
void memory(const Values &v, const std::string &scope, TopRow &r)
{
	r.mem_bps = v.get(metric_id::kMemMbmTotalBps, scope);
	if (!r.mem_bps)
		r.mem_bps = v.get(metric_id::kMemLlcMissBps, scope);
	r.llc_bytes = v.get(metric_id::kMemLlcOccupancyBytes, scope);
}

TopRow host_row(const Interval &iv, const Values &v)
{
	TopRow r;
	r.name = "host";
	r.host = true;
	std::size_t cpus = 0;
	double iops = 0;
	bool any_io = false;
	LargestValue io_p99; // the worst disk's
	for (const Metric &m : iv.metrics) {
		const Scope::Kind kind = Scope::kind_of(m.scope);
		if (m.id == metric_id::kSchedCpuBusyRatio && kind == Scope::Kind::Cpu)
			++cpus;
		if (kind != Scope::Kind::Dev || !std::isfinite(m.value))
			continue;
		if (m.id == metric_id::kIoIopsRead || m.id == metric_id::kIoIopsWrite) {
			iops += m.value;
			any_io = true;
		} else if (m.id == metric_id::kIoLatencyP99Us) {
			io_p99.add(m.value, m.upper_bound);
		}
	}
	if (auto busy = v.get(metric_id::kSchedCpuBusyRatio, "system"); busy && cpus)
		r.cpus = *busy * static_cast<double>(cpus);
	r.runq_p99_us = v.get(metric_id::kSchedRunqWaitP99Us, "system");
	r.runq_p99_bound = v.bound(metric_id::kSchedRunqWaitP99Us, "system");
	r.preempt_ps = v.get(metric_id::kSchedInvoluntaryCtxswPs, "system");
	if (any_io)
		r.iops = iops;
	if (io_p99.any) {
		r.io_p99_us = io_p99.value;
		r.io_p99_bound = io_p99.upper_bound;
	}
	r.ipc = v.get(metric_id::kCpuIpc, "system");
	r.llc_mpki = v.get(metric_id::kCpuLlcMpki, "system");
	memory(v, "system", r);
	return r;
}

// Per VM name, its top culprit (idle is never one: waiting for an idle CPU
// to wake is latency, not contention) and its share of all the VM's waits:
// one pass over the interval for every VM.
struct Culprit {
	double total = 0, top = 0;
	std::string who;
	std::string scope; // vm:NAME/culprit:WHO of the top one
};
using Culprits = std::map<std::string, Culprit, std::less<>>;

Culprits find_culprits(const Interval &iv)
{
	Culprits out;
	for (const Metric &m : iv.metrics) {
		if (m.id != metric_id::kSchedWaitBehindRatio || !std::isfinite(m.value))
			continue;
		const Scope s = Scope::parse(m.scope);
		if (s.kind() != Scope::Kind::VmCulprit)
			continue;
		auto it = out.find(s.vm());
		if (it == out.end())
			it = out.emplace(std::string(s.vm()), Culprit{}).first;
		Culprit &c = it->second;
		c.total += m.value;
		if (s.culprit_scope().kind() != Scope::Kind::Idle && m.value > c.top) {
			c.top = m.value;
			c.who = s.culprit();
			c.scope = m.scope;
		}
	}
	return out;
}

// The CPUs the waits blamed on each culprit were on, in the interval.
using WaitCpus = std::map<std::string, std::vector<unsigned>, std::less<>>;

const WaitCpus &wait_cpus(const Interval &iv)
{
	static const WaitCpus none;
	auto it = iv.cpus.find(series::kVmWaitBehindCpus);
	return it == iv.cpus.end() ? none : it->second;
}

void set_culprit(const Culprits &culprits, const WaitCpus &where, const std::string &vm, TopRow &r)
{
	auto it = culprits.find(vm);
	if (it == culprits.end())
		return;
	r.culprit = it->second.who;
	if (!r.culprit.empty() && it->second.total > 0)
		r.culprit_share = it->second.top / it->second.total;
	if (r.culprit.empty())
		return;
	if (auto cpus = where.find(it->second.scope); cpus != where.end())
		r.on_cpus = cpus->second;
}

std::string percent(double ratio)
{
	return sig3(ratio * 100) + "%";
}

// Of the disks `vm` issued requests to, the one where another VM issued the
// largest share of the disk's requests: "(vm:OTHER, disk, share)".
struct IoNeighbour {
	std::string vm, disk;
	double share = 0;
};

// Requests/s of each disk, and per VM scope on it: read once per interval.
class DiskRequests {
public:
	explicit DiskRequests(const Interval &iv)
	{
		for (const Metric &m : iv.metrics) {
			if ((m.id != metric_id::kIoIopsRead && m.id != metric_id::kIoIopsWrite) || !std::isfinite(m.value))
				continue;
			const Scope s = Scope::parse(m.scope);
			if (s.kind() == Scope::Kind::Dev)
				disk_total_[std::string(s.dev())] += m.value;
			else if (s.kind() == Scope::Kind::VmDev)
				by_vm_[std::string(s.dev())][Scope::vm(s.vm()).str()] += m.value;
		}
	}
	std::optional<IoNeighbour> neighbour(const std::string &scope) const;

private:
	std::map<std::string, double> disk_total_;
	std::map<std::string, std::map<std::string, double>> by_vm_; // disk -> vm scope -> req/s
};

std::optional<IoNeighbour> DiskRequests::neighbour(const std::string &scope) const
{
	std::optional<IoNeighbour> best;
	for (const auto &[disk, vms] : by_vm_) {
		auto total = disk_total_.find(disk);
		if (!vms.count(scope) || total == disk_total_.end() || !(total->second > 0))
			continue;
		for (const auto &[other, rate] : vms) {
			double share = rate / total->second;
			if (other != scope && (!best || share > best->share))
				best = IoNeighbour{other, disk, share};
		}
	}
	return best;
}

// What every VM's row reads besides its own values, found once per interval.
struct Shared {
	explicit Shared(const Interval &iv)
		: values(iv), culprits(find_culprits(iv)), where(wait_cpus(iv)), disks(iv)
	{
	}
	Values values;
	Culprits culprits;
	const WaitCpus &where;
	DiskRequests disks;
};

void judge(const DiskRequests &disks, const std::string &scope, TopRow &r, const TopRules &rules)
{
	if (r.vcpu_wait && *r.vcpu_wait >= rules.min_vcpu_wait && r.culprit_share &&
	    *r.culprit_share >= rules.min_share) {
		std::string where;
		if (!r.on_cpus.empty())
			where = std::string(r.on_cpus.size() == 1 ? " on CPU " : " on CPUs ") +
				format_cpu_list(r.on_cpus);
		r.verdict = "waits behind " + culprit_text(r.culprit) + where + " (" + percent(*r.culprit_share) +
			    " of its wait; vCPUs wait " + percent(*r.vcpu_wait) + ")";
		return;
	}
	if (r.io_p99_us && *r.io_p99_us >= rules.min_io_p99_us) {
		auto n = disks.neighbour(scope);
		if (n && n->share >= rules.min_io_share) {
			HumanValue p99 = human_time_us(*r.io_p99_us);
			r.verdict = "I/O latency p99 " + p99.number + " " + p99.unit + " with " + n->vm + " issuing " +
				    percent(n->share) + " of " + n->disk + "'s requests";
			return;
		}
	}
	if (r.vhost_stalls_ps && *r.vhost_stalls_ps >= 1)
		r.verdict = "RX ring stalls: the guest posts too few receive buffers";
}

TopRow vm_row(const Shared &shared, const Vm &vm, const TopRules &rules)
{
	const Values &v = shared.values;
	TopRow r;
	r.name = vm.name;
	const std::string scope = vm.scope();
	if (!vm.vcpu_tids.empty())
		r.vcpus = static_cast<double>(vm.vcpu_tids.size());
	r.cpus = v.get(metric_id::kSchedVcpuCpus, scope);
	r.vcpu_wait = v.get(metric_id::kSchedVcpuWaitRatio, scope);
	r.runq_p99_us = v.get(metric_id::kSchedRunqWaitP99Us, scope);
	r.runq_p99_bound = v.bound(metric_id::kSchedRunqWaitP99Us, scope);
	r.preempt_ps = v.get(metric_id::kSchedInvoluntaryCtxswPs, scope);
	r.vhost_depth_p99 = v.get(metric_id::kVhostQueueDepthP99, scope);
	r.vhost_stalls_ps = v.get(metric_id::kVhostRingStallsPs, scope);
	r.ipc = v.get(metric_id::kCpuIpc, scope);
	r.llc_mpki = v.get(metric_id::kCpuLlcMpki, scope);
	memory(v, scope, r);
	auto reads = v.get(metric_id::kIoIopsRead, scope), writes = v.get(metric_id::kIoIopsWrite, scope);
	if (reads || writes)
		r.iops = reads.value_or(0) + writes.value_or(0);
	r.io_p99_us = v.get(metric_id::kIoLatencyP99Us, scope);
	r.io_p99_bound = v.bound(metric_id::kIoLatencyP99Us, scope);
	set_culprit(shared.culprits, shared.where, vm.name, r);
	judge(shared.disks, scope, r, rules);
	return r;
}

std::string cell(const TopRow &r, const TopColumn &c)
{
	if (c.text) {
		const std::string &t = r.*c.text;
		if (t.empty())
			return "-";
		return c.text == &TopRow::culprit ? culprit_text(t) : t;
	}
	const auto &v = r.*c.value;
	if (!v)
		return "-";
	switch (c.kind) {
	case Kind::Percent: return percent(*v);
	case Kind::TimeUs: {
		HumanValue h = human_time_us(*v);
		return (c.bound && r.*c.bound ? "<" : "") + h.number + h.unit;
	}
	case Kind::Count: return std::to_string(std::llround(*v));
	case Kind::Rate: return sig3_grouped(*v);
	case Kind::Bytes:
	case Kind::BytesPerS: {
		HumanValue h = human_bytes(*v, c.kind == Kind::BytesPerS ? "/s" : "");
		return h.number + h.unit;
	}
	case Kind::Cpus:
	case Kind::Plain:
	case Kind::Text: break;
	}
	return sig3(*v);
}

std::string json_value(const TopRow &r, const TopColumn &c)
{
	if (c.text)
		return (r.*c.text).empty() ? "null" : "\"" + json_escape(r.*c.text) + "\"";
	const auto &v = r.*c.value;
	if (!v)
		return "null";
	char buf[64];
	std::snprintf(buf, sizeof buf, "%.9g", *v);
	return buf;
}

std::string lower(std::string s)
{
	for (char &ch : s)
		ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
	return s;
}

} // namespace

const std::vector<TopColumn> &top_columns()
{
	static const std::vector<TopColumn> columns = {
		{"VM", "name", 0, Kind::Text, nullptr, &TopRow::name},
		{"VCPU", "vcpus", 4, Kind::Count, &TopRow::vcpus},
		{"CPUS", "cpus", 5, Kind::Cpus, &TopRow::cpus},
		{"WAIT%", "vcpu_wait_ratio", 6, Kind::Percent, &TopRow::vcpu_wait},
		{"RUNQ99", "runq_wait_p99_us", 7, Kind::TimeUs, &TopRow::runq_p99_us, nullptr, &TopRow::runq_p99_bound},
		{"CULPRIT", "culprit", 14, Kind::Text, nullptr, &TopRow::culprit},
		{"SHARE", "culprit_share", 5, Kind::Percent, &TopRow::culprit_share},
		{"PREEMPT/S", "preemptions_ps", 9, Kind::Rate, &TopRow::preempt_ps},
		{"IOPS", "iops", 6, Kind::Rate, &TopRow::iops},
		{"IO99", "io_latency_p99_us", 7, Kind::TimeUs, &TopRow::io_p99_us, nullptr, &TopRow::io_p99_bound},
		{"VQ99", "vhost_depth_p99", 5, Kind::Plain, &TopRow::vhost_depth_p99},
		{"STALL/S", "vhost_stalls_ps", 7, Kind::Rate, &TopRow::vhost_stalls_ps},
		{"IPC", "ipc", 4, Kind::Plain, &TopRow::ipc},
		{"MPKI", "llc_mpki", 5, Kind::Plain, &TopRow::llc_mpki},
		{"MEMBW", "mem_bps", 10, Kind::BytesPerS, &TopRow::mem_bps},
		{"LLC", "llc_occupancy_bytes", 9, Kind::Bytes, &TopRow::llc_bytes},
		{"VERDICT", "verdict", 0, Kind::Text, nullptr, &TopRow::verdict},
	};
	return columns;
}

const TopColumn *find_top_column(const std::string &name)
{
	const std::string want = lower(name);
	for (const TopColumn &c : top_columns())
		if (lower(c.header) == want || c.json == want)
			return &c;
	return nullptr;
}

std::string culprit_text(const std::string &culprit)
{
	const Scope who = Scope::parse(culprit);
	if (who.kind() != Scope::Kind::Host)
		return culprit;
	switch (who.host()) {
	case Scope::HostWork::Other: return "host processes";
	case Scope::HostWork::Kernel: return "kernel threads";
	case Scope::HostWork::Vhost: return "vhost workers";
	}
	return culprit;
}

std::vector<TopRow> top_rows(const Interval &iv, const std::vector<Vm> &vms, const TopRules &rules)
{
	const Shared shared(iv);
	std::vector<TopRow> rows;
	rows.reserve(vms.size() + 1);
	rows.push_back(host_row(iv, shared.values));
	for (const Vm &vm : vms)
		rows.push_back(vm_row(shared, vm, rules));
	return rows;
}

void sort_top_rows(std::vector<TopRow> &rows, const TopColumn &sort, bool ascending)
{
	auto first_vm = std::find_if(rows.begin(), rows.end(), [](const TopRow &r) { return !r.host; });
	std::stable_sort(first_vm, rows.end(), [&](const TopRow &a, const TopRow &b) {
		if (sort.text) {
			const std::string &x = a.*sort.text, &y = b.*sort.text;
			if (x.empty() != y.empty())
				return y.empty();
			if (x != y)
				return ascending ? x < y : x > y;
		} else {
			const auto &x = a.*sort.value, &y = b.*sort.value;
			if (x.has_value() != y.has_value())
				return x.has_value();
			if (x && *x != *y)
				return ascending ? *x < *y : *x > *y;
		}
		return a.name < b.name;
	});
}

void filter_top_rows(std::vector<TopRow> &rows, const VmNameFilter &filter)
{
	if (filter.empty())
		return;
	rows.erase(std::remove_if(rows.begin(), rows.end(),
				  [&](const TopRow &r) { return !r.host && !filter.matches(r.name); }),
		   rows.end());
}

namespace {

// What a narrow terminal keeps of the verdict, the column that says why.
constexpr std::size_t kVerdictMinWidth = 24;

// The columns a width shows: the VM name, the sort column and the verdict
// always; of the others, from the left, as many as leave the verdict
// kVerdictMinWidth columns. The rest are named in `hidden`.
std::vector<const TopColumn *> shown_columns(const TopTableOptions &o, std::size_t name_width,
					     std::vector<std::string> &hidden)
{
	auto always = [&o](const TopColumn &c) {
		return c.text == &TopRow::name || c.text == &TopRow::verdict || &c == o.sort;
	};
	std::size_t used = name_width + 1;
	if (o.sort && !(o.sort->text == &TopRow::name || o.sort->text == &TopRow::verdict))
		used += o.sort->width + 1;
	const std::size_t budget = o.width ? o.width - std::min(o.width, kVerdictMinWidth) : SIZE_MAX;
	std::vector<const TopColumn *> out;
	bool full = false;
	for (const TopColumn &c : top_columns()) {
		if (always(c)) {
			out.push_back(&c);
			continue;
		}
		full = full || used + c.width + 1 > budget;
		if (full) {
			hidden.push_back(c.header);
			continue;
		}
		out.push_back(&c);
		used += c.width + 1;
	}
	return out;
}

} // namespace

namespace {

// The lines of the list of hidden columns, wrapped (not cut: every one is
// named).
std::vector<std::string> hidden_lines(const std::vector<std::string> &hidden, std::size_t width)
{
	std::vector<std::string> out;
	if (hidden.empty())
		return out;
	std::string line = "hidden at " + std::to_string(width) + " columns (a wider terminal, or --format json, shows them):";
	for (const auto &h : hidden) {
		if (display_width(line) + 1 + h.size() > width) {
			out.push_back(line);
			line = " ";
		}
		line += " " + h;
	}
	out.push_back(line);
	return out;
}

// VM rows (rows[first_vm..]) the table shows: all, or what --rows and the
// terminal's height leave, with one line to count the rest.
std::size_t vm_rows_shown(std::size_t vm_rows, std::size_t other_lines, const TopTableOptions &o)
{
	const std::size_t limit = o.max_vms ? o.max_vms : SIZE_MAX;
	// The last line stays free: a newline there would scroll the title away.
	std::size_t room = SIZE_MAX;
	if (o.height)
		room = o.height > other_lines + 1 ? o.height - other_lines - 1 : 0;
	if (vm_rows <= std::min(limit, room))
		return vm_rows;
	// The line counting the rest takes a line of the screen.
	return std::min(limit, room == SIZE_MAX ? room : room - std::min<std::size_t>(room, 1));
}

} // namespace

std::string render_top_table(const std::vector<TopRow> &all_rows, const TopTableOptions &o)
{
	const auto first_vm = static_cast<std::size_t>(
		std::find_if(all_rows.begin(), all_rows.end(), [](const TopRow &r) { return !r.host; }) -
		all_rows.begin());
	const std::size_t vm_rows = all_rows.size() - first_vm;
	// The name column is as wide as the widest name of any VM, shown or
	// not, so that it does not change width as the rows scroll.
	std::size_t name_width = 4;
	for (const TopRow &r : all_rows)
		name_width = std::max(name_width, std::min<std::size_t>(display_width(r.name), 20));
	std::vector<std::string> hidden;
	const auto columns = shown_columns(o, name_width, hidden);
	const std::vector<std::string> hidden_text = hidden_lines(hidden, o.width);
	const std::size_t other_lines = !o.title.empty() + 1 + first_vm + hidden_text.size() + !o.footer.empty();
	const std::size_t shown = vm_rows_shown(vm_rows, other_lines, o);
	const std::vector<TopRow> rows(all_rows.begin(),
				       all_rows.begin() + static_cast<std::ptrdiff_t>(first_vm + shown));
	auto fit = [&](std::string line) {
		if (o.width && display_width(line) > o.width) {
			// Cut on a character boundary (the units may be UTF-8).
			std::string cut;
			std::size_t cols = 0;
			for (std::size_t i = 0; i < line.size() && cols < o.width; ++cols) {
				std::size_t len = 1;
				while (i + len < line.size() && (static_cast<unsigned char>(line[i + len]) & 0xC0) == 0x80)
					++len;
				cut += line.substr(i, len);
				i += len;
			}
			line = cut;
		}
		while (!line.empty() && line.back() == ' ')
			line.pop_back();
		return line + "\n";
	};
	std::string out = o.title.empty() ? std::string() : fit(o.title);
	std::string header;
	for (const TopColumn *cp : columns) {
		const TopColumn &c = *cp;
		std::string h = c.header;
		if (&c == o.sort)
			h += o.ascending ? "^" : "v";
		const bool text = c.kind == Kind::Text;
		std::size_t width = c.text == &TopRow::name ? name_width : c.width;
		header += (text ? pad(h, width) : pad(h, width, false)) + " ";
	}
	out += fit(header);
	for (const TopRow &r : rows) {
		std::string line;
		for (const TopColumn *cp : columns) {
			const TopColumn &c = *cp;
			std::string v = cell(r, c);
			if (c.text == &TopRow::name && display_width(v) > name_width)
				v = v.substr(0, name_width);
			if (c.text == &TopRow::verdict && r.verdict.empty())
				v.clear();
			const bool text = c.kind == Kind::Text;
			std::size_t width = c.text == &TopRow::name ? name_width : c.width;
			line += (text ? pad(v, width) : pad(v, width, false)) + " ";
		}
		out += fit(line);
	}
	if (vm_rows == 0 && !o.no_rows.empty())
		out += fit(o.no_rows);
	if (shown < vm_rows)
		out += fit(std::to_string(vm_rows - shown) + (vm_rows - shown == 1 ? " more VM" : " more VMs") +
			   " not shown" + (o.more_hint.empty() ? "" : ": " + o.more_hint));
	for (const std::string &line : hidden_text)
		out += fit(line);
	if (!o.footer.empty())
		out += fit(o.footer);
	return out;
}

std::string render_top_json(const Interval &iv, const std::vector<TopRow> &rows)
{
	char head[96];
	std::snprintf(head, sizeof head, "{\"time\":%.3f,\"interval_s\":%.6g,\"rows\":[",
		      static_cast<double>(iv.realtime_ns) / 1e9, iv.interval_s);
	std::string out = head;
	for (std::size_t i = 0; i < rows.size(); ++i) {
		const TopRow &r = rows[i];
		out += i ? ",{" : "{";
		out += std::string("\"host\":") + (r.host ? "true" : "false");
		for (const TopColumn &c : top_columns())
			out += std::string(",\"") + c.json + "\":" + json_value(r, c);
		// Digits, commas and hyphens: nothing to escape.
		if (!r.host)
			out += ",\"on_cpus\":" + (r.on_cpus.empty() ? "null" : "\"" + format_cpu_list(r.on_cpus) + "\"");
		out += "}";
	}
	out += "]}\n";
	return out;
}

} // namespace hwsig
