// HugeTLB pool utilization per page size (system-wide and per node) and THP
// usage, from /sys/kernel/mm, /sys/devices/system/node and /proc/meminfo.
#include "hwsig/procfs.h"
#include "hwsig/parse.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

constexpr const char *kHugepageUtilization = "mem.hugepage_utilization";
constexpr const char *kThpAnonBytes = "mem.thp_anon_bytes";
constexpr const char *kThpFallback = "mem.thp_fallback_ratio";
constexpr const char *kThpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled";

std::string size_name(std::uint64_t kb)
{
	return std::to_string(kb) + "kB";
}

class MeminfoSource final : public Source {
public:
	std::string_view name() const override { return "procfs.meminfo"; }
	std::vector<std::string> provides() const override { return {kHugepageUtilization, kThpAnonBytes}; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		std::string meminfo_problem;
		Meminfo meminfo;
		auto r = read_file(join_path(ctx.root, "/proc/meminfo"));
		if (!r.data) {
			meminfo_problem = read_failure("/proc/meminfo", r.err);
		} else {
			meminfo = parse_meminfo(*r.data);
			if (!meminfo.error.empty())
				meminfo_problem = "/proc/meminfo garbled: " + meminfo.error;
		}

		if (!collect_pools(ctx, "/sys/kernel/mm/hugepages", "", snap))
			collect_meminfo_pool(meminfo, meminfo_problem, snap);
		for (unsigned node : list_numa_nodes(ctx.root))
			collect_pools(ctx, "/sys/devices/system/node/node" + std::to_string(node) + "/hugepages",
				      "node:" + std::to_string(node) + "/", snap);

		collect_thp_anon(meminfo, meminfo_problem, snap);
		check_thp_mode(ctx, snap);
	}

private:
	// Every hugepages-<N>kB pool under rel_dir; false when there is none.
	static bool collect_pools(const SourceContext &ctx, const std::string &rel_dir,
				  const std::string &scope_prefix, Snapshot &snap)
	{
		bool any = false;
		for (const auto &entry : list_dir(join_path(ctx.root, rel_dir), "hugepages-")) {
			auto kb = parse_hugepage_dir_kb(entry);
			if (!kb)
				continue;
			any = true;
			collect_pool(ctx, rel_dir + "/" + entry, *kb, scope_prefix + "hugepages:" + size_name(*kb),
				     snap);
		}
		return any;
	}

	static void collect_pool(const SourceContext &ctx, const std::string &rel_dir, std::uint64_t kb,
				 const std::string &scope, Snapshot &snap)
	{
		// nr_hugepages counts persistent pages only; surplus pages (overcommit)
		// are in the pool too and free_hugepages counts them when free.
		std::uint64_t values[3] = {};
		const char *files[3] = {"nr_hugepages", "free_hugepages", "surplus_hugepages"};
		for (int i = 0; i < 3; ++i) {
			std::string rel = rel_dir + "/" + files[i];
			auto r = read_file(join_path(ctx.root, rel));
			if (!r.data) {
				snap.add_unavailable(kHugepageUtilization, scope, read_failure(rel, r.err));
				return;
			}
			auto v = parse_u64(*r.data);
			if (!v) {
				snap.add_unavailable(kHugepageUtilization, scope,
						     rel + " garbled: not a number: " + quote_token(trim(*r.data)));
				return;
			}
			values[i] = *v;
		}
		auto [nr, free, surplus] = values;
		if (nr + surplus < nr) {
			snap.add_unavailable(kHugepageUtilization, scope,
					     rel_dir + " garbled: nr_hugepages + surplus_hugepages overflows 64 bits");
			return;
		}
		add_utilization(nr + surplus, free, kb, scope, rel_dir, snap);
	}

	static void add_utilization(std::uint64_t total, std::uint64_t free, std::uint64_t kb,
				    const std::string &scope, const std::string &where, Snapshot &snap)
	{
		if (total == 0) {
			snap.add_unavailable(kHugepageUtilization, scope,
					     "no " + size_name(kb) + " huge pages reserved");
			return;
		}
		// The files are read one after the other; a pool resized in between
		// can show more free pages than pages.
		if (free > total) {
			snap.add_unavailable(kHugepageUtilization, scope,
					     where + ": " + std::to_string(free) + " free of " + std::to_string(total) +
						     " pages (pool resized while reading)");
			return;
		}
		snap.add_gauge(series::kHugepageUtilization, scope,
			       static_cast<double>(total - free) / static_cast<double>(total),
			       where.rfind("/proc", 0) == 0 ? "procfs" : "sysfs");
	}

	// Kernels without the sysfs pools still list the default size's pool.
	static void collect_meminfo_pool(const Meminfo &meminfo, const std::string &problem, Snapshot &snap)
	{
		if (!problem.empty()) {
			snap.add_unavailable(kHugepageUtilization, "system",
					     "no /sys/kernel/mm/hugepages, and " + problem);
			return;
		}
		auto total = meminfo.values.find("HugePages_Total");
		auto free = meminfo.values.find("HugePages_Free");
		auto size = meminfo.values.find("Hugepagesize");
		if (total == meminfo.values.end() || free == meminfo.values.end() ||
		    size == meminfo.values.end()) {
			snap.add_unavailable(kHugepageUtilization, "system",
					     "no /sys/kernel/mm/hugepages and no HugePages_Total/HugePages_Free/"
					     "Hugepagesize in /proc/meminfo (kernel without CONFIG_HUGETLBFS)");
			return;
		}
		if (total->second.kb || free->second.kb || !size->second.kb || size->second.value == 0) {
			snap.add_unavailable(kHugepageUtilization, "system",
					     "/proc/meminfo garbled: HugePages_Total/HugePages_Free must be counts "
					     "and Hugepagesize a non-zero size in kB");
			return;
		}
		std::uint64_t kb = size->second.value;
		add_utilization(total->second.value, free->second.value, kb, "hugepages:" + size_name(kb),
				"/proc/meminfo", snap);
	}

	static void collect_thp_anon(const Meminfo &meminfo, const std::string &problem, Snapshot &snap)
	{
		if (!problem.empty()) {
			snap.add_unavailable(kThpAnonBytes, "system", problem);
			return;
		}
		auto anon = meminfo.values.find("AnonHugePages");
		if (anon == meminfo.values.end()) {
			snap.add_unavailable(kThpAnonBytes, "system",
					     "no AnonHugePages in /proc/meminfo (kernel without "
					     "CONFIG_TRANSPARENT_HUGEPAGE)");
			return;
		}
		if (!anon->second.kb) {
			snap.add_unavailable(kThpAnonBytes, "system", "/proc/meminfo garbled: AnonHugePages has no kB unit");
			return;
		}
		snap.add_gauge(series::kThpAnonBytes, "system", static_cast<double>(anon->second.value) * 1024.0,
			       "procfs");
	}

	// The fallback counters themselves come from /proc/vmstat (numa source);
	// here only the reason when THP cannot fault at all.
	static void check_thp_mode(const SourceContext &ctx, Snapshot &snap)
	{
		auto r = read_file(join_path(ctx.root, kThpEnabled));
		if (!r.data) {
			snap.add_unavailable(kThpFallback, "system",
					     r.err == ENOENT ? std::string("THP not available (no ") + kThpEnabled +
								       ": kernel without CONFIG_TRANSPARENT_HUGEPAGE)"
							     : read_failure(kThpEnabled, r.err));
			return;
		}
		auto mode = parse_thp_mode(*r.data);
		if (!mode) {
			snap.add_unavailable(kThpFallback, "system",
					     std::string(kThpEnabled) + " garbled: no single [mode] in " +
						     quote_token(trim(*r.data)));
			return;
		}
		if (*mode == "never")
			snap.add_unavailable(kThpFallback, "system",
					     "THP disabled (transparent_hugepage/enabled = never)");
	}
};

} // namespace

SourcePtr make_meminfo_source()
{
	return std::make_unique<MeminfoSource>();
}

} // namespace hwsig
