// Parsers for the procfs/sysfs files of procfs.h. Each is strict: a file that
// is not in the kernel's format is an error naming the line and the token,
// never a partial result.
#include "hwsig/procfs.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>

#include "hwsig/parse.h"
#include "hwsig/scope.h"

namespace hwsig {

namespace {

bool all_digits(std::string_view s)
{
	if (s.empty())
		return false;
	for (char c : s)
		if (c < '0' || c > '9')
			return false;
	return true;
}

// Decimal number as the kernel prints it: digits only, no leading zero.
std::optional<std::uint64_t> kernel_number(std::string_view s)
{
	if (!all_digits(s) || (s.size() > 1 && s.front() == '0'))
		return std::nullopt;
	return parse_u64(s);
}

std::string at_line(std::size_t index)
{
	return "line " + std::to_string(index + 1) + ": ";
}

bool add_checked(std::uint64_t &sum, std::uint64_t v)
{
	if (sum > UINT64_MAX - v)
		return false;
	sum += v;
	return true;
}

// Names in vmstat/numastat: lower-case identifiers.
bool vmstat_name(std::string_view s)
{
	if (s.empty())
		return false;
	for (char c : s)
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	return true;
}

// Names in meminfo: "MemTotal", "Active(anon)", "HugePages_Total"...
bool meminfo_name(std::string_view s)
{
	if (s.empty())
		return false;
	for (char c : s)
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '(' || c == ')'))
			return false;
	return true;
}

constexpr unsigned kMaxCpu = 1u << 16;

// "cpu12" -> 12, for /proc/stat and /proc/schedstat.
std::optional<unsigned> cpu_number(std::string_view name)
{
	if (name.substr(0, 3) != "cpu")
		return std::nullopt;
	auto n = kernel_number(name.substr(3));
	if (!n || *n >= kMaxCpu)
		return std::nullopt;
	return static_cast<unsigned>(*n);
}

} // namespace

std::string quote_token(std::string_view tok)
{
	constexpr std::size_t kMax = 32;
	std::string out = "'";
	for (std::size_t i = 0; i < tok.size() && i < kMax; ++i) {
		unsigned char c = static_cast<unsigned char>(tok[i]);
		if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
			out.push_back(static_cast<char>(c));
		} else {
			static const char hex[] = "0123456789abcdef";
			out += "\\x";
			out.push_back(hex[c >> 4]);
			out.push_back(hex[c & 15]);
		}
	}
	if (tok.size() > kMax)
		out += "...";
	out += "'";
	return out;
}

std::string read_failure(std::string_view rel, int err)
{
	if (err == ENOENT)
		return std::string(rel) + " missing";
	return "reading " + std::string(rel) + ": " + std::strerror(err);
}

std::vector<unsigned> list_numa_nodes(const std::string &root)
{
	std::vector<unsigned> nodes;
	for (const auto &name : list_dir(join_path(root, "/sys/devices/system/node"), "node")) {
		auto n = kernel_number(std::string_view(name).substr(4));
		if (n && *n < kMaxCpu)
			nodes.push_back(static_cast<unsigned>(*n));
	}
	std::sort(nodes.begin(), nodes.end());
	return nodes;
}

std::optional<std::string> NodeLayoutClock::read_mask(const std::string &root)
{
	auto r = online_.read(join_path(root, "/sys/devices/system/node/online"));
	if (!r.data)
		return std::nullopt;
	return std::string(*r.data);
}

bool NodeLayoutClock::due(const std::string &root, bool force)
{
	const auto now = std::chrono::steady_clock::now();
	std::optional<std::string> mask;
	if (!force && listed_ && root == root_) {
		if (now - checked_at_ < check_)
			return false;
		checked_at_ = now;
		mask = read_mask(root);
		if (mask && mask == mask_ && now - listed_at_ < max_age_)
			return false;
	} else {
		mask = read_mask(root);
	}
	// Read before the caller lists: a node onlined meanwhile changes the
	// mask, and the next check lists again.
	root_ = root;
	listed_ = true;
	checked_at_ = listed_at_ = now;
	mask_ = std::move(mask);
	return true;
}

ProcStat parse_proc_stat(std::string_view text)
{
	ProcStat out;
	std::set<unsigned> seen;
	bool aggregate = false;
	unsigned expected_columns = 0;
	auto lines = split_lines(text);
	std::vector<std::string_view> f; // reused by every line: no allocation per line
	for (std::size_t i = 0; i < lines.size(); ++i) {
		// Only cpu lines are split: "intr" has thousands of fields on big hosts.
		if (lines[i].substr(0, 3) != "cpu")
			continue;
		split_ws(lines[i], f);
		CpuTicks cpu;
		if (f[0] == "cpu") {
			if (aggregate) {
				out.error = at_line(i) + "second aggregate 'cpu' line";
				break;
			}
			aggregate = true;
			cpu.scope = "system";
		} else {
			auto n = cpu_number(f[0]);
			if (!n) {
				out.error = at_line(i) + "bad cpu name " + quote_token(f[0]);
				break;
			}
			if (!seen.insert(*n).second) {
				out.error = at_line(i) + "cpu" + std::to_string(*n) + " listed twice";
				break;
			}
			cpu.scope = Scope::cpu(*n).str();
		}
		cpu.columns = static_cast<unsigned>(f.size() - 1);
		// user nice system idle: present in every kernel that has /proc/stat.
		if (cpu.columns < 4) {
			out.error = at_line(i) + quote_token(f[0]) + " has " + std::to_string(cpu.columns) +
				    " time columns, at least 4 expected";
			break;
		}
		// Every cpu line of one file has the same columns; fewer on one line
		// means a truncated file, not an older kernel.
		if (expected_columns == 0)
			expected_columns = cpu.columns;
		else if (cpu.columns != expected_columns) {
			out.error = at_line(i) + quote_token(f[0]) + " has " + std::to_string(cpu.columns) +
				    " time columns, earlier lines " + std::to_string(expected_columns);
			break;
		}
		// Columns: user nice system idle iowait irq softirq steal guest guest_nice.
		constexpr std::size_t kIdle = 4, kIowait = 5, kSteal = 8, kSummed = 8;
		for (std::size_t c = 1; c < f.size(); ++c) {
			auto v = kernel_number(f[c]);
			if (!v) {
				out.error = at_line(i) + quote_token(f[0]) + " column " + std::to_string(c) +
					    " is not a number: " + quote_token(f[c]);
				break;
			}
			if (c <= kSummed && !add_checked(cpu.total, *v)) {
				out.error = at_line(i) + quote_token(f[0]) + " total overflows 64 bits";
				break;
			}
			if (c == kSteal)
				cpu.steal = *v;
			if (c == kIdle || c == kIowait)
				cpu.idle += *v; // both below total, which did not overflow

		}
		if (!out.error.empty())
			break;
		out.cpus.push_back(std::move(cpu));
	}
	if (out.error.empty() && !aggregate)
		out.error = "no aggregate 'cpu' line";
	if (!out.error.empty())
		out.cpus.clear();
	return out;
}

KeyValues parse_vmstat(std::string_view text)
{
	KeyValues out;
	auto lines = split_lines(text);
	std::vector<std::string_view> f; // reused by every line: no allocation per line
	for (std::size_t i = 0; i < lines.size(); ++i) {
		split_ws(lines[i], f);
		if (f.empty())
			continue;
		if (f.size() != 2) {
			out.error = at_line(i) + "expected 'name value', got " + std::to_string(f.size()) +
				    " fields starting " + quote_token(f[0]);
			break;
		}
		if (!vmstat_name(f[0])) {
			out.error = at_line(i) + "bad name " + quote_token(f[0]);
			break;
		}
		auto v = kernel_number(f[1]);
		if (!v) {
			out.error = at_line(i) + std::string(f[0]) + " is not an unsigned number: " +
				    quote_token(f[1]);
			break;
		}
		if (!out.values.emplace(std::string(f[0]), *v).second) {
			out.error = at_line(i) + std::string(f[0]) + " listed twice";
			break;
		}
	}
	if (out.error.empty() && out.values.empty())
		out.error = "empty";
	if (!out.error.empty())
		out.values.clear();
	return out;
}

NumaStat parse_numastat(std::string_view text)
{
	NumaStat out;
	auto kv = parse_vmstat(text);
	if (!kv.error.empty()) {
		out.error = kv.error;
		return out;
	}
	auto local = kv.values.find("local_node");
	auto other = kv.values.find("other_node");
	if (local == kv.values.end() || other == kv.values.end()) {
		out.error = local == kv.values.end() ? "no local_node" : "no other_node";
		return out;
	}
	out.local_node = local->second;
	out.other_node = other->second;
	auto hit = kv.values.find("numa_hit");
	auto foreign = kv.values.find("numa_foreign");
	if (hit != kv.values.end() && foreign != kv.values.end()) {
		out.numa_hit = hit->second;
		out.numa_foreign = foreign->second;
	}
	return out;
}

Meminfo parse_meminfo(std::string_view text)
{
	Meminfo out;
	auto lines = split_lines(text);
	std::vector<std::string_view> f; // reused by every line: no allocation per line
	for (std::size_t i = 0; i < lines.size(); ++i) {
		std::string_view line = lines[i];
		if (trim(line).empty())
			continue;
		auto colon = line.find(':');
		if (colon == std::string_view::npos) {
			out.error = at_line(i) + "no ':' in " + quote_token(line);
			break;
		}
		std::string_view name = trim(line.substr(0, colon));
		if (!meminfo_name(name)) {
			out.error = at_line(i) + "bad name " + quote_token(name);
			break;
		}
		split_ws(line.substr(colon + 1), f);
		if (f.empty() || f.size() > 2 || (f.size() == 2 && f[1] != "kB")) {
			out.error = at_line(i) + std::string(name) + ": expected 'value' or 'value kB', got " +
				    quote_token(trim(line.substr(colon + 1)));
			break;
		}
		auto v = kernel_number(f[0]);
		if (!v) {
			out.error = at_line(i) + std::string(name) + " is not an unsigned number: " +
				    quote_token(f[0]);
			break;
		}
		if (!out.values.emplace(std::string(name), MeminfoValue{*v, f.size() == 2}).second) {
			out.error = at_line(i) + std::string(name) + " listed twice";
			break;
		}
	}
	if (out.error.empty() && out.values.empty())
		out.error = "empty";
	if (!out.error.empty())
		out.values.clear();
	return out;
}

std::optional<std::uint64_t> parse_hugepage_dir_kb(std::string_view name)
{
	constexpr std::string_view kPrefix = "hugepages-", kSuffix = "kB";
	if (name.size() <= kPrefix.size() + kSuffix.size() || name.substr(0, kPrefix.size()) != kPrefix ||
	    name.substr(name.size() - kSuffix.size()) != kSuffix)
		return std::nullopt;
	auto kb = kernel_number(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
	if (!kb || *kb == 0)
		return std::nullopt;
	return kb;
}

std::optional<std::string> parse_thp_mode(std::string_view text)
{
	std::optional<std::string> mode;
	auto f = split_ws(trim(text));
	if (f.empty())
		return std::nullopt;
	for (auto word : f) {
		bool bracketed = word.size() >= 2 && word.front() == '[' && word.back() == ']';
		std::string_view inner = bracketed ? word.substr(1, word.size() - 2) : word;
		if (inner.empty())
			return std::nullopt;
		for (char c : inner)
			if (!((c >= 'a' && c <= 'z') || c == '_' || c == '-'))
				return std::nullopt;
		if (bracketed) {
			if (mode)
				return std::nullopt; // two selected modes
			mode = std::string(inner);
		}
	}
	return mode;
}

Pressure parse_pressure(std::string_view text)
{
	Pressure out;
	auto lines = split_lines(text);
	std::vector<std::string_view> f; // reused by every line: no allocation per line
	for (std::size_t i = 0; i < lines.size() && out.error.empty(); ++i) {
		split_ws(lines[i], f);
		if (f.empty())
			continue;
		std::optional<PressureLine> *slot = nullptr;
		if (f[0] == "some")
			slot = &out.some;
		else if (f[0] == "full")
			slot = &out.full;
		else {
			out.error = at_line(i) + "expected 'some' or 'full', got " + quote_token(f[0]);
			break;
		}
		if (slot->has_value()) {
			out.error = at_line(i) + std::string(f[0]) + " listed twice";
			break;
		}
		PressureLine p;
		unsigned seen = 0; // bits: avg10, avg60, avg300, total
		for (std::size_t k = 1; k < f.size(); ++k) {
			auto eq = f[k].find('=');
			if (eq == std::string_view::npos || eq == 0) {
				out.error = at_line(i) + "expected key=value, got " + quote_token(f[k]);
				break;
			}
			std::string_view key = f[k].substr(0, eq), value = f[k].substr(eq + 1);
			double *avg = key == "avg10" ? &p.avg10 : key == "avg60" ? &p.avg60 : key == "avg300" ? &p.avg300 : nullptr;
			if (!avg && key != "total")
				continue; // a field a later kernel may add
			const unsigned bit = avg == &p.avg10 ? 1u : avg == &p.avg60 ? 2u : avg == &p.avg300 ? 4u : 8u;
			if (seen & bit) {
				out.error = at_line(i) + std::string(key) + " listed twice";
				break;
			}
			seen |= bit;
			if (avg) {
				auto d = parse_double(value);
				// The kernel prints "%lu.%02lu" of a percentage.
				if (!d || value.front() == '-' || *d > 100.0) {
					out.error = at_line(i) + std::string(key) + " is not a percentage: " +
						    quote_token(value);
					break;
				}
				*avg = *d;
			} else {
				auto t = kernel_number(value);
				if (!t) {
					out.error = at_line(i) + "total is not an unsigned number: " + quote_token(value);
					break;
				}
				p.total_us = *t;
			}
		}
		if (!out.error.empty())
			break;
		if (seen != 15) {
			out.error = at_line(i) + std::string(f[0]) + " lacks one of avg10, avg60, avg300, total";
			break;
		}
		*slot = p;
	}
	if (out.error.empty() && !out.some)
		out.error = "no 'some' line";
	if (!out.error.empty()) {
		out.some.reset();
		out.full.reset();
	}
	return out;
}

Schedstat parse_schedstat(std::string_view text)
{
	Schedstat out;
	std::set<unsigned> seen;
	bool have_version = false;
	auto lines = split_lines(text);
	std::vector<std::string_view> f; // reused by every line: no allocation per line
	for (std::size_t i = 0; i < lines.size(); ++i) {
		// Domain lines (most of the file on big hosts) are not read.
		if (have_version && lines[i].substr(0, 6) == "domain")
			continue;
		split_ws(lines[i], f);
		if (f.empty())
			continue;
		if (!have_version) {
			auto v = f.size() == 2 && f[0] == "version" ? kernel_number(f[1]) : std::nullopt;
			if (!v || *v > 1000) {
				out.error = at_line(i) + "expected 'version N' first, got " + quote_token(lines[i]);
				break;
			}
			have_version = true;
			out.version = static_cast<unsigned>(*v);
			if (out.version < 15 || out.version > 17) {
				out.error = "unsupported version " + std::to_string(out.version) +
					    " (cpu lines are read for versions 15 to 17)";
				break;
			}
			continue;
		}
		if (f[0] == "timestamp" || f[0].substr(0, 6) == "domain")
			continue;
		auto n = cpu_number(f[0]);
		if (!n) {
			out.error = at_line(i) + "unexpected line starting " + quote_token(f[0]);
			break;
		}
		// cpuN yld_count legacy sched_count sched_goidle ttwu_count ttwu_local
		//      rq_cpu_time run_delay pcount
		if (f.size() != 10) {
			out.error = at_line(i) + quote_token(f[0]) + " has " + std::to_string(f.size() - 1) +
				    " fields, 9 expected";
			break;
		}
		for (std::size_t k = 1; k < f.size(); ++k)
			if (!kernel_number(f[k])) {
				out.error = at_line(i) + quote_token(f[0]) + " field " + std::to_string(k) +
					    " is not a number: " + quote_token(f[k]);
				break;
			}
		if (!out.error.empty())
			break;
		if (!seen.insert(*n).second) {
			out.error = at_line(i) + "cpu" + std::to_string(*n) + " listed twice";
			break;
		}
		out.cpus.push_back({*n, *kernel_number(f[8]), *kernel_number(f[9])});
	}
	if (out.error.empty() && !have_version)
		out.error = "empty";
	else if (out.error.empty() && out.cpus.empty())
		out.error = "no cpu lines";
	if (!out.error.empty())
		out.cpus.clear();
	return out;
}

TaskSchedstat parse_task_schedstat(std::string_view text)
{
	TaskSchedstat out;
	std::uint64_t fields[3] = {};
	std::size_t used = 0;
	auto lines = split_lines(text);
	std::vector<std::string_view> f; // reused by every line: no allocation per line
	for (std::size_t i = 0; i < lines.size() && out.error.empty(); ++i) {
		split_ws(lines[i], f);
		if (f.empty())
			continue;
		if (used++ > 0) {
			out.error = at_line(i) + "more than one line";
			break;
		}
		if (f.size() != 3) {
			out.error = at_line(i) + "expected 'on_cpu_ns run_delay_ns timeslices', got " +
				    std::to_string(f.size()) + " fields";
			break;
		}
		for (std::size_t k = 0; k < 3; ++k) {
			auto v = kernel_number(f[k]);
			if (!v) {
				out.error = at_line(i) + "field " + std::to_string(k + 1) +
					    " is not a number: " + quote_token(f[k]);
				break;
			}
			fields[k] = *v;
		}
	}
	if (out.error.empty() && used == 0)
		out.error = "empty";
	if (out.error.empty()) {
		out.on_cpu_ns = fields[0];
		out.run_delay_ns = fields[1];
		out.timeslices = fields[2];
	}
	return out;
}

} // namespace hwsig
