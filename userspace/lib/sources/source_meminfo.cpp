// HugeTLB pool utilization per page size (system-wide and per node) and THP
// usage, from /sys/kernel/mm, /sys/devices/system/node and /proc/meminfo.
#include <chrono>
#include <cstdint>
#include <iterator>
#include <optional>

#include "hwsig/procfs.h"
#include "hwsig/parse.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

constexpr const char *kHugepageUtilization = metric_id::kMemHugepageUtilization;
constexpr const char *kThpAnonBytes = metric_id::kMemThpAnonBytes;
constexpr const char *kThpFallback = metric_id::kMemThpFallbackRatio;
constexpr const char *kThpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled";

std::string size_name(std::uint64_t kb)
{
	return std::to_string(kb) + "kB";
}

// The /proc/meminfo lines this source reads.
constexpr std::string_view kPicked[] = {"HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "Hugepagesize",
				       "AnonHugePages",   "Hugetlb",        "MemAvailable"};

// parse_meminfo() of a file whose names, in order, are those of the last
// text parse_meminfo() accepted (a kernel's meminfo never changes its
// lines): then only the values need checking, without building the map of
// ~55 names. Anything else (other names or order, blank lines, tabs, a
// value that is not a kernel number) goes to parse_meminfo(), and its
// answer is returned. The result holds the kPicked lines only.
class MeminfoParser {
public:
	Meminfo parse(std::string_view text)
	{
		Meminfo out;
		if (fast(text, out))
			return out;
		out = parse_meminfo(text);
		names_.clear();
		pick_.clear();
		if (out.error.empty()) {
			for (auto line : split_lines(text)) {
				if (trim(line).empty())
					continue;
				auto name = trim(line.substr(0, line.find(':')));
				names_.emplace_back(name);
				int k = -1;
				for (std::size_t i = 0; i < std::size(kPicked); ++i)
					if (name == kPicked[i])
						k = static_cast<int>(i);
				pick_.push_back(k);
			}
		}
		return out;
	}

private:
	bool fast(std::string_view text, Meminfo &out) const
	{
		if (names_.empty() || text.empty() || text.back() != '\n')
			return false;
		MeminfoValue picked[std::size(kPicked)];
		bool have[std::size(kPicked)] = {};
		std::size_t pos = 0;
		for (std::size_t i = 0; i < names_.size(); ++i) {
			// "<name>:<spaces><kernel number>[ kB]\n"
			const std::string &name = names_[i];
			if (text.size() - pos < name.size() + 4 || text.compare(pos, name.size(), name) != 0 ||
			    text[pos + name.size()] != ':' || text[pos + name.size() + 1] != ' ')
				return false;
			pos += name.size() + 1;
			std::size_t end = text.find('\n', pos);
			if (end == std::string_view::npos)
				return false;
			std::string_view rest = text.substr(pos, end - pos);
			std::size_t digits = rest.find_first_not_of(' ');
			if (digits == std::string_view::npos)
				return false;
			rest.remove_prefix(digits);
			bool kb = rest.size() > 3 && rest.substr(rest.size() - 3) == " kB";
			if (kb)
				rest.remove_suffix(3);
			auto value = parse_kernel_u64(rest);
			if (!value)
				return false;
			if (int k = pick_[i]; k >= 0) {
				picked[k] = MeminfoValue{*value, kb};
				have[k] = true;
			}
			pos = end + 1;
		}
		if (pos != text.size())
			return false;
		for (std::size_t k = 0; k < std::size(kPicked); ++k)
			if (have[k])
				out.values.emplace(std::string(kPicked[k]), picked[k]);
		return true;
	}


	std::vector<std::string> names_; // of the last accepted file, in order
	std::vector<int> pick_;          // per name: its index in kPicked, or -1
};

class MeminfoSource final : public Source {
public:
	std::string_view name() const override { return "procfs.meminfo"; }
	std::vector<std::string> provides() const override
	{
		return {kHugepageUtilization, kThpAnonBytes, metric_id::kMemAvailableBytes};
	}

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		bool rescanned = refresh_layout(ctx, false);
		std::string meminfo_problem;
		UnavailableCode meminfo_code = UnavailableCode::malformed;
		Meminfo meminfo;
		auto r = files_.read(meminfo_path_);
		if (!r.data) {
			meminfo_problem = read_failure("/proc/meminfo", r.err);
			meminfo_code = errno_code(r.err);
		} else {
			meminfo = meminfo_.parse(*r.data);
			if (!meminfo.error.empty())
				meminfo_problem = "/proc/meminfo garbled: " + meminfo.error;
		}

		// "Hugetlb: 0 kB" (4.16+) is the sum of every pool's pages
		// (nr_hugepages x size, surplus included): all pools, and so
		// every node's share, are empty, and their files need no read.
		auto hugetlb = meminfo.values.find("Hugetlb");
		const bool all_empty = hugetlb != meminfo.values.end() && hugetlb->second.kb && hugetlb->second.value == 0;
		auto reads = all_empty ? std::vector<PoolRead>(pools_.size()) : read_pools();
		// A pool that went away since the last scan (its node taken
		// offline) fails to read: look again, as a fresh listing would.
		if (!rescanned && any_failed(reads)) {
			refresh_layout(ctx, true);
			reads = read_pools();
		}
		for (std::size_t i = 0; i < system_pools_; ++i)
			emit_pool(pools_[i], reads[i], snap);
		if (system_pools_ == 0)
			collect_meminfo_pool(meminfo, meminfo_code, meminfo_problem, snap);
		for (std::size_t i = system_pools_; i < pools_.size(); ++i)
			emit_pool(pools_[i], reads[i], snap, node_reserved(i, reads));

		collect_thp_anon(meminfo, meminfo_code, meminfo_problem, snap);
		collect_available(meminfo, meminfo_code, meminfo_problem, snap);
		check_thp_mode(snap);
	}

private:
	// A hugepages-<N>kB pool directory and its counters. Which pools
	// exist is listed when clock_ says so; the counters are read on
	// every snapshot.
	struct Pool {
		std::string rel_dir; // "/sys/kernel/mm/hugepages/hugepages-2048kB"
		std::uint64_t kb = 0;
		std::string scope;
		std::string paths[3]; // nr_hugepages, free_hugepages, resv_hugepages under the root
		int files = 3;        // a node's pool has no resv_hugepages: 2
	};
	struct PoolRead {
		bool failed = false; // a file could not be read (garbled is not a failure)
		std::string problem;
		UnavailableCode code = UnavailableCode::malformed;
		std::uint64_t values[3] = {};
	};
	// nr_hugepages is the kernel's h->nr_huge_pages: persistent and surplus
	// (overcommitted) pages alike; free_hugepages counts both when free,
	// including the reserved ones (resv_hugepages: promised to a mapping,
	// not yet touched, as QEMU's guest memory is until the guest uses it).
	// The kernel keeps reservations per pool, not per node.
	static constexpr const char *kPoolFiles[3] = {"nr_hugepages", "free_hugepages", "resv_hugepages"};

	// Lists the pools again when forced, when the root changed or when
	// clock_ says the nodes may have changed. True when it listed them.
	bool refresh_layout(const SourceContext &ctx, bool force)
	{
		if (!clock_.due(ctx.root, force))
			return false;
		root_ = ctx.root;
		meminfo_path_ = join_path(ctx.root, "/proc/meminfo");
		thp_path_ = join_path(ctx.root, kThpEnabled);
		pools_.clear();
		list_pools(ctx, "/sys/kernel/mm/hugepages", std::nullopt);
		system_pools_ = pools_.size();
		for (unsigned node : list_numa_nodes(ctx.root))
			list_pools(ctx, "/sys/devices/system/node/node" + std::to_string(node) + "/hugepages", node);
		files_.revalidate();
		return true;
	}

	// Every hugepages-<N>kB pool under rel_dir (the system's, or a node's), in name order.
	void list_pools(const SourceContext &ctx, const std::string &rel_dir, std::optional<unsigned> node)
	{
		for (const auto &entry : list_dir(join_path(ctx.root, rel_dir), "hugepages-")) {
			auto kb = parse_hugepage_dir_kb(entry);
			if (!kb)
				continue;
			Pool p;
			p.rel_dir = rel_dir + "/" + entry;
			p.kb = *kb;
			p.scope = (node ? Scope::hugepages(size_name(*kb), *node) : Scope::hugepages(size_name(*kb))).str();
			p.files = node ? 2 : 3;
			for (int i = 0; i < p.files; ++i)
				p.paths[i] = join_path(ctx.root, p.rel_dir + "/" + kPoolFiles[i]);
			pools_.push_back(std::move(p));
		}
	}

	std::vector<PoolRead> read_pools()
	{
		std::vector<PoolRead> reads(pools_.size());
		for (std::size_t k = 0; k < pools_.size(); ++k) {
			const Pool &p = pools_[k];
			PoolRead &out = reads[k];
			// An empty pool has no free pages: its free_hugepages is
			// not read (most pools of most hosts are empty).
			for (int i = 0; i < p.files && !(i == 1 && out.values[0] == 0); ++i) {
				auto r = files_.read(p.paths[i]);
				if (!r.data) {
					out.failed = true;
					out.problem = read_failure(p.rel_dir + "/" + kPoolFiles[i], r.err);
					out.code = errno_code(r.err);
					break;
				}
				auto v = parse_u64(*r.data);
				if (!v) {
					out.problem = p.rel_dir + "/" + kPoolFiles[i] +
						      " garbled: not a number: " + quote_token(trim(*r.data));
					break;
				}
				out.values[i] = *v;
			}
		}
		return reads;
	}

	static bool any_failed(const std::vector<PoolRead> &reads)
	{
		for (const auto &r : reads)
			if (r.failed)
				return true;
		return false;
	}

	// node_reserved: a node pool's share of its size's reservations
	// (node_reserved()); a system pool reads its own.
	static void emit_pool(const Pool &p, const PoolRead &r, Snapshot &snap,
			      std::optional<double> node_reserved = std::nullopt)
	{
		if (!r.problem.empty()) {
			snap.add_unavailable(kHugepageUtilization, p.scope, r.code, r.problem);
			return;
		}
		auto [nr, free, reserved] = r.values;
		add_utilization(nr, free, node_reserved.value_or(static_cast<double>(reserved)), p.kb, p.scope,
				p.rel_dir, snap);
	}

	// The kernel keeps reservations per size, not per node: a node's share
	// is the size's reserved pages in proportion to its free ones (the
	// reserved pages are free pages, on some node). Exact on a one-node
	// host and wherever one node holds all the free pages; the nodes'
	// shares add up to the system's. 0 when the size's pool is unreadable.
	double node_reserved(std::size_t node_pool, const std::vector<PoolRead> &reads) const
	{
		const Pool &p = pools_[node_pool];
		for (std::size_t i = 0; i < system_pools_; ++i) {
			if (pools_[i].kb != p.kb || !reads[i].problem.empty() || reads[i].failed)
				continue;
			const double sys_free = static_cast<double>(reads[i].values[1]);
			const double sys_reserved = static_cast<double>(reads[i].values[2]);
			const double node_free = static_cast<double>(reads[node_pool].values[1]);
			return sys_free > 0 ? std::min(node_free, sys_reserved * node_free / sys_free) : 0.0;
		}
		return 0;
	}

	// Reserved pages are in use: a mapping owns them, touched or not.
	static void add_utilization(std::uint64_t total, std::uint64_t free, double reserved, std::uint64_t kb,
				    const std::string &scope, const std::string &where, Snapshot &snap)
	{
		if (total == 0) {
			snap.add_unavailable(kHugepageUtilization, scope, UnavailableCode::no_target,
					     "no " + size_name(kb) + " huge pages reserved");
			return;
		}
		// The files are read one after the other; a pool resized in between
		// can show more free pages than pages.
		if (free > total) {
			snap.add_unavailable(kHugepageUtilization, scope, UnavailableCode::incomplete,
					     where + ": " + std::to_string(free) + " free of " + std::to_string(total) +
						     " pages (pool resized while reading)");
			return;
		}
		if (reserved > static_cast<double>(free)) {
			snap.add_unavailable(kHugepageUtilization, scope, UnavailableCode::incomplete,
					     where + ": " + std::to_string(static_cast<std::uint64_t>(reserved)) +
						     " reserved of " + std::to_string(free) +
						     " free pages (pool changed while reading)");
			return;
		}
		snap.add_gauge(series::kHugepageUtilization, scope,
			       (static_cast<double>(total - free) + reserved) / static_cast<double>(total),
			       where.rfind("/proc", 0) == 0 ? "procfs" : "sysfs");
	}

	// Kernels without the sysfs pools still list the default size's pool.
	static void collect_meminfo_pool(const Meminfo &meminfo, UnavailableCode code, const std::string &problem,
					 Snapshot &snap)
	{
		if (!problem.empty()) {
			snap.add_unavailable(kHugepageUtilization, "system", code,
					     "no /sys/kernel/mm/hugepages, and " + problem);
			return;
		}
		auto total = meminfo.values.find("HugePages_Total");
		auto free = meminfo.values.find("HugePages_Free");
		auto size = meminfo.values.find("Hugepagesize");
		if (total == meminfo.values.end() || free == meminfo.values.end() ||
		    size == meminfo.values.end()) {
			snap.add_unavailable(kHugepageUtilization, "system", UnavailableCode::unsupported,
					     "no /sys/kernel/mm/hugepages and no HugePages_Total/HugePages_Free/"
					     "Hugepagesize in /proc/meminfo (kernel without CONFIG_HUGETLBFS)");
			return;
		}
		if (total->second.kb || free->second.kb || !size->second.kb || size->second.value == 0) {
			snap.add_unavailable(kHugepageUtilization, "system", UnavailableCode::malformed,
					     "/proc/meminfo garbled: HugePages_Total/HugePages_Free must be counts "
					     "and Hugepagesize a non-zero size in kB");
			return;
		}
		std::uint64_t kb = size->second.value;
		// HugePages_Rsvd: from Linux 2.6.17 on; without it, none counted.
		auto reserved = meminfo.values.find("HugePages_Rsvd");
		const std::uint64_t resv =
			reserved != meminfo.values.end() && !reserved->second.kb ? reserved->second.value : 0;
		add_utilization(total->second.value, free->second.value, resv, kb,
				Scope::hugepages(size_name(kb)).str(), "/proc/meminfo", snap);
	}

	static void collect_thp_anon(const Meminfo &meminfo, UnavailableCode code, const std::string &problem,
				     Snapshot &snap)
	{
		if (!problem.empty()) {
			snap.add_unavailable(kThpAnonBytes, "system", code, problem);
			return;
		}
		auto anon = meminfo.values.find("AnonHugePages");
		if (anon == meminfo.values.end()) {
			snap.add_unavailable(kThpAnonBytes, "system", UnavailableCode::unsupported,
					     "no AnonHugePages in /proc/meminfo (kernel without "
					     "CONFIG_TRANSPARENT_HUGEPAGE)");
			return;
		}
		if (!anon->second.kb) {
			snap.add_unavailable(kThpAnonBytes, "system", UnavailableCode::malformed,
					     "/proc/meminfo garbled: AnonHugePages has no kB unit");
			return;
		}
		snap.add_gauge(series::kThpAnonBytes, "system", static_cast<double>(anon->second.value) * 1024.0,
			       "procfs");
	}

	static void collect_available(const Meminfo &meminfo, UnavailableCode code, const std::string &problem,
				      Snapshot &snap)
	{
		auto available = meminfo.values.find("MemAvailable");
		if (!problem.empty())
			snap.add_unavailable(metric_id::kMemAvailableBytes, "system", code, problem);
		else if (available == meminfo.values.end() || !available->second.kb)
			snap.add_unavailable(metric_id::kMemAvailableBytes, "system", UnavailableCode::unsupported,
					     "no MemAvailable in kB in /proc/meminfo (kernel before 3.14)");
		else
			snap.add_gauge(series::kMemAvailableBytes, "system",
				       static_cast<double>(available->second.value) * 1024.0, "procfs");
	}

	// The fallback counters themselves come from /proc/vmstat (numa source);
	// here only the reason when THP cannot fault at all. The THP mode
	// changes only when an administrator writes it: read at most every 5 s,
	// its note (if any) repeated in between.
	void check_thp_mode(Snapshot &snap)
	{
		UnavailableCode code{};
		const auto note = thp_mode_note(thp_mode_.read(thp_path_), code);
		if (!note.empty())
			snap.add_unavailable(kThpFallback, "system", code, note);
	}

	// Why the THP fallback ratio cannot be had (and its code), or "" when it can.
	static std::string thp_mode_note(const PeriodicFile::Text &t, UnavailableCode &code)
	{
		if (!t.data) {
			code = errno_code(t.err);
			return t.err == ENOENT ? std::string("THP not available (no ") + kThpEnabled +
							 ": kernel without CONFIG_TRANSPARENT_HUGEPAGE)"
					       : read_failure(kThpEnabled, t.err);
		}
		auto mode = parse_thp_mode(*t.data);
		code = UnavailableCode::malformed;
		if (!mode)
			return std::string(kThpEnabled) + " garbled: no single [mode] in " + quote_token(trim(*t.data));
		code = UnavailableCode::disabled;
		if (*mode == "never")
			return "THP disabled (transparent_hugepage/enabled = never)";
		return {};
	}

	std::string root_, meminfo_path_, thp_path_;
	PeriodicFile thp_mode_;
	std::vector<Pool> pools_;   // the system's pools first, then each node's
	std::size_t system_pools_ = 0;
	NodeLayoutClock clock_;
	FileCache files_{128}; // /proc/meminfo and every pool's counters, kept open
	MeminfoParser meminfo_;
};

} // namespace

SourcePtr make_meminfo_source()
{
	return std::make_unique<MeminfoSource>();
}

} // namespace hwsig
