// Snapshot <-> the local socket's text form. One record per line, fields
// separated by tabs; strings escape backslash, tab and newline, so a VM
// named "a\tb" survives the trip. Numbers are written with %.17g so that a
// double comes back bit for bit (derive takes differences of them).
#include "hwsig/snapshot_wire.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>

#include "hwsig/error.h"

namespace hwsig {
namespace {

void put_escaped(std::string &out, std::string_view s)
{
	for (char c : s) {
		switch (c) {
		case '\\': out += "\\\\"; break;
		case '\t': out += "\\t"; break;
		case '\n': out += "\\n"; break;
		default: out += c;
		}
	}
}

// Escaped string fields, each followed by a tab (the record's numbers come
// after them).
template <typename... S> void put_fields(std::string &out, const S &...fields)
{
	((put_escaped(out, fields), out += '\t'), ...);
}

void put_double(std::string &out, double v)
{
	char buf[40];
	int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
	out.append(buf, static_cast<std::size_t>(n));
}

template <typename T> void put_list(std::string &out, const std::vector<T> &v)
{
	for (std::size_t i = 0; i < v.size(); i++) {
		if (i)
			out += ',';
		if constexpr (std::is_same_v<T, std::string>)
			put_escaped(out, v[i]); // commas in tap names are not possible
		else
			out += std::to_string(v[i]);
	}
}

struct Fields {
	std::vector<std::string> f;
};

[[noreturn]] void bad(std::size_t line, const std::string &what)
{
	throw Error("hwsigd snapshot line " + std::to_string(line) + ": " + what);
}

std::string unescape(std::string_view s, std::size_t line)
{
	std::string out;
	out.reserve(s.size());
	for (std::size_t i = 0; i < s.size(); i++) {
		if (s[i] != '\\') {
			out += s[i];
			continue;
		}
		if (++i == s.size())
			bad(line, "dangling escape");
		switch (s[i]) {
		case '\\': out += '\\'; break;
		case 't': out += '\t'; break;
		case 'n': out += '\n'; break;
		default: bad(line, "unknown escape");
		}
	}
	return out;
}

std::vector<std::string> split_tabs(std::string_view l, std::size_t line)
{
	std::vector<std::string> out;
	std::size_t start = 0;
	for (;;) {
		std::size_t tab = l.find('\t', start);
		out.push_back(unescape(l.substr(start, tab == std::string_view::npos ? tab : tab - start), line));
		if (tab == std::string_view::npos)
			return out;
		start = tab + 1;
	}
}

double to_double(const std::string &s, std::size_t line)
{
	if (s.empty())
		bad(line, "empty number");
	char *end = nullptr;
	errno = 0;
	double v = std::strtod(s.c_str(), &end);
	if (*end != '\0' || errno == ERANGE || !std::isfinite(v))
		bad(line, "not a finite number: '" + s + "'");
	return v;
}

template <typename U> U to_unsigned(std::string_view s, std::size_t line)
{
	U v{};
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size() || s.empty())
		bad(line, "not an unsigned integer: '" + std::string(s) + "'");
	return v;
}

// A pid or tid: digits only, at most INT_MAX (what /proc can name).
int to_id(std::string_view s, std::size_t line)
{
	unsigned v = to_unsigned<unsigned>(s, line);
	if (v > static_cast<unsigned>(std::numeric_limits<int>::max()))
		bad(line, "process id out of range: '" + std::string(s) + "'");
	return static_cast<int>(v);
}

std::vector<int> to_ids(const std::string &s, std::size_t line)
{
	std::vector<int> out;
	if (s.empty())
		return out;
	std::size_t start = 0;
	for (;;) {
		std::size_t comma = s.find(',', start);
		out.push_back(to_id(std::string_view(s.data() + start,
						     (comma == std::string::npos ? s.size() : comma) - start),
				    line));
		if (comma == std::string::npos)
			return out;
		start = comma + 1;
	}
}

// Calls each(item) for every comma-separated item of s (none when s is
// empty; an empty item between two commas is an item).
template <typename Each> void for_each_item(const std::string &s, Each &&each)
{
	if (s.empty())
		return;
	for (std::size_t start = 0;;) {
		const std::size_t comma = s.find(',', start);
		each(std::string_view(s.data() + start, (comma == std::string::npos ? s.size() : comma) - start));
		if (comma == std::string::npos)
			return;
		start = comma + 1;
	}
}

template <typename U> std::vector<U> to_list(const std::string &s, std::size_t line)
{
	std::vector<U> out;
	for_each_item(s, [&](std::string_view item) { out.push_back(to_unsigned<U>(item, line)); });
	return out;
}

std::vector<std::string> to_names(const std::string &s)
{
	std::vector<std::string> out;
	for_each_item(s, [&](std::string_view item) { out.emplace_back(item); });
	return out;
}

// Bounds that keep a hostile or broken peer from making us allocate
// without limit: far above any real host (4096 CPUs x 74 slots).
constexpr std::size_t kMaxSlots = 4096;
constexpr unsigned kMaxCpu = 65535; // above any kernel's NR_CPUS

// CPU:COUNT,... with the CPUs strictly ascending, each once.
CpuCounts to_cpu_counts(const std::string &s, std::size_t line)
{
	CpuCounts out;
	for_each_item(s, [&](std::string_view item) {
		const std::size_t colon = item.find(':');
		if (colon == std::string_view::npos)
			bad(line, "not CPU:COUNT: '" + std::string(item) + "'");
		const unsigned cpu = to_unsigned<unsigned>(item.substr(0, colon), line);
		if (cpu > kMaxCpu)
			bad(line, "CPU out of range: " + std::to_string(cpu));
		if (!out.empty() && cpu <= out.back().first)
			bad(line, "CPUs not ascending");
		out.emplace_back(cpu, to_unsigned<std::uint64_t>(item.substr(colon + 1), line));
		if (out.size() > kMaxSlots)
			bad(line, "too many CPUs");
	});
	return out;
}

} // namespace

std::string encode_snapshot(const Snapshot &snap, const std::vector<Vm> &vms,
			    const std::vector<std::string> &claimed_ids)
{
	std::string out = "hwsig-snapshot\t" + std::to_string(kSnapshotWireVersion) + "\n";
	out += "time\t" + std::to_string(snap.mono_ns) + "\t" + std::to_string(snap.realtime_ns) + "\n";
	for (const auto &id : claimed_ids) {
		out += "claim\t";
		put_escaped(out, id);
		out += '\n';
	}
	for (const auto &vm : vms) {
		out += "vm\t" + std::to_string(vm.pid) + "\t";
		put_escaped(out, vm.name);
		out += '\t';
		put_list(out, vm.vcpu_tids);
		out += '\t';
		put_list(out, vm.vhost_tids);
		out += '\t';
		put_list(out, vm.taps);
		out += '\n';
	}
	auto head = [&](const char *kind, const std::string &name, const std::string &scope,
			const std::string &source) { put_fields(out, std::string_view(kind), name, scope, source); };
	for (const auto &[name, series] : snap.counters())
		for (const auto &[scope, p] : series.by_scope) {
			if (p.mux.empty()) {
				head("C", name, scope, series.source);
				put_double(out, p.value);
			} else {
				head("M", name, scope, series.source);
				for (double v : {p.value, p.mux.raw, p.mux.enabled_ns, p.mux.running_ns, p.mux.uncounted_ns,
						 p.mux.unread}) {
					put_double(out, v);
					out += '\t';
				}
				out.pop_back();
			}
			out += '\n';
		}
	for (const auto &[name, series] : snap.gauges())
		for (const auto &[scope, v] : series.by_scope) {
			head("G", name, scope, series.source);
			put_double(out, v);
			out += '\n';
		}
	for (const auto &[name, series] : snap.histograms())
		for (const auto &[scope, h] : series.by_scope) {
			head("H", name, scope, series.source);
			out += std::to_string(static_cast<int>(h.layout));
			out += '\t';
			put_list(out, h.counts);
			out += '\n';
		}
	// CPU:COUNT,CPU:COUNT ascending.
	for (const auto &[name, series] : snap.cpu_counts())
		for (const auto &[scope, counts] : series.by_scope) {
			head("P", name, scope, series.source);
			for (std::size_t i = 0; i < counts.size(); ++i) {
				if (i)
					out += ',';
				out += std::to_string(counts[i].first);
				out += ':';
				out += std::to_string(counts[i].second);
			}
			out += '\n';
		}
	// One stamp per series name (a name's series of every kind come from
	// one source, stamped together).
	std::map<std::string_view, std::uint64_t> stamps;
	auto stamp = [&](const auto &series_map) {
		for (const auto &[name, series] : series_map)
			if (series.read_ns)
				stamps.emplace(name, series.read_ns);
	};
	stamp(snap.counters());
	stamp(snap.gauges());
	stamp(snap.histograms());
	stamp(snap.cpu_counts());
	for (const auto &[name, ns] : stamps) {
		out += "read\t";
		put_escaped(out, name);
		out += '\t' + std::to_string(ns) + '\n';
	}
	for (const auto &name : snap.from_zero()) {
		out += "zero\t";
		put_escaped(out, name);
		out += '\n';
	}
	for (const auto &u : snap.unavailable()) {
		put_fields(out, std::string_view("U"), u.id, u.scope, code_name(u.code));
		put_escaped(out, u.reason); // the last field: no tab after it
		out += '\n';
	}
	out += "end\n";
	return out;
}

SharedSnapshot decode_snapshot(std::string_view text)
{
	SharedSnapshot s;
	std::vector<std::pair<std::string, std::uint64_t>> stamps; // "read" lines
	unsigned version = 0;
	std::size_t line = 0, pos = 0;
	bool ended = false;
	while (pos < text.size()) {
		std::size_t nl = text.find('\n', pos);
		if (nl == std::string_view::npos)
			bad(line + 1, "truncated (no newline)");
		std::string_view l = text.substr(pos, nl - pos);
		pos = nl + 1;
		++line;
		if (ended)
			bad(line, "data after 'end'");
		auto f = split_tabs(l, line);
		const std::string &kind = f[0];
		auto want = [&](std::size_t n) {
			if (f.size() != n)
				bad(line, "'" + kind + "' needs " + std::to_string(n - 1) + " fields, has " +
						  std::to_string(f.size() - 1));
		};
		if (line == 1) {
			if (kind != "hwsig-snapshot")
				bad(line, "not a hwsigd snapshot");
			want(2);
			version = to_unsigned<unsigned>(f[1], line);
			if (version < 1 || version > kSnapshotWireVersion)
				bad(line, "version " + f[1] + ", this hwsigctl reads 1 to " +
						  std::to_string(kSnapshotWireVersion) + " (upgrade both together)");
		} else if (kind == "time") {
			want(3);
			s.snapshot.mono_ns = to_unsigned<std::uint64_t>(f[1], line);
			s.snapshot.realtime_ns = to_unsigned<std::uint64_t>(f[2], line);
		} else if (kind == "claim") {
			want(2);
			s.claimed_ids.push_back(f[1]);
		} else if (kind == "vm") {
			want(6);
			Vm vm;
			vm.pid = to_id(f[1], line);
			vm.name = f[2];
			vm.vcpu_tids = to_ids(f[3], line);
			vm.vhost_tids = to_ids(f[4], line);
			vm.taps = to_names(f[5]);
			s.vms.push_back(std::move(vm));
		} else if (kind == "C" && version == 1) {
			// Version 1 PMU counts were scaled by lifetime times and came
			// with a lifetime running fraction: read as plain counters,
			// the fraction checked and dropped (it says nothing of an
			// interval).
			want(6);
			(void)to_double(f[5], line);
			s.snapshot.add_counter(f[1], f[2], to_double(f[4], line), f[3]);
		} else if (kind == "C") {
			want(5);
			s.snapshot.add_counter(f[1], f[2], to_double(f[4], line), f[3]);
		} else if (kind == "M" && version >= 2) {
			want(version >= 5 ? 10 : 9);
			CounterPoint p;
			p.value = to_double(f[4], line);
			p.mux.raw = to_double(f[5], line);
			p.mux.enabled_ns = to_double(f[6], line);
			p.mux.running_ns = to_double(f[7], line);
			p.mux.uncounted_ns = to_double(f[8], line);
			if (version >= 5)
				p.mux.unread = to_double(f[9], line);
			s.snapshot.add_counter(f[1], f[2], p, f[3]);
		} else if (kind == "G") {
			want(5);
			s.snapshot.add_gauge(f[1], f[2], to_double(f[4], line), f[3]);
		} else if (kind == "H") {
			want(6);
			unsigned layout = to_unsigned<unsigned>(f[4], line);
			if (layout > static_cast<unsigned>(Histogram::Layout::LinearLog2))
				bad(line, "unknown histogram layout " + f[4]);
			Histogram h;
			h.layout = static_cast<Histogram::Layout>(layout);
			h.counts = to_list<std::uint64_t>(f[5], line);
			if (h.counts.size() > kMaxSlots)
				bad(line, "too many histogram slots");
			s.snapshot.add_histogram(f[1], f[2], std::move(h), f[3]);
		} else if (kind == "P" && version >= 6) {
			want(5);
			s.snapshot.add_cpu_counts(f[1], f[2], to_cpu_counts(f[4], line), f[3]);
		} else if (kind == "read" && version >= 3) {
			want(3);
			stamps.emplace_back(f[1], to_unsigned<std::uint64_t>(f[2], line));
		} else if (kind == "zero") {
			want(2);
			s.snapshot.set_counts_from_zero(f[1]);
		} else if (kind == "U" && version >= 4) {
			want(5);
			auto code = parse_unavailable_code(f[3]);
			if (!code)
				bad(line, "unknown unavailable code '" + f[3] + "'");
			s.snapshot.add_unavailable(f[1], f[2], *code, f[4]);
		} else if (kind == "U") {
			want(4);
			s.snapshot.add_unavailable(f[1], f[2], UnavailableCode::unknown, f[3]);
		} else if (kind == "end") {
			want(1);
			ended = true;
		} else {
			bad(line, "unknown record '" + kind + "'");
		}
	}
	if (line == 0)
		bad(1, "empty");
	if (!ended)
		bad(line, "truncated (no 'end')");
	// After every series is in: a stamp may precede its series' lines.
	for (const auto &[name, ns] : stamps)
		s.snapshot.set_read_ns(name, ns);
	return s;
}

} // namespace hwsig
