// NUMA placement and page migration: per-node numastat (falling back to the
// system-wide /proc/vmstat numa_* counters) and the /proc/vmstat migration
// and THP fault counters.
#include "hwsig/procfs.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

constexpr const char *kRemoteRatio = "mem.numa_remote_ratio";
constexpr const char *kMigrations = "mem.page_migrations_ps";
constexpr const char *kNumaMigrations = "mem.numa_pages_migrated_ps";
constexpr const char *kThpFallback = "mem.thp_fallback_ratio";

class NumaSource final : public Source {
public:
	std::string_view name() const override { return "procfs.numa"; }
	std::vector<std::string> provides() const override
	{
		return {kRemoteRatio, kMigrations, kNumaMigrations, kThpFallback};
	}

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		std::string vmstat_problem;
		KeyValues vmstat;
		auto r = read_file(join_path(ctx.root, "/proc/vmstat"));
		if (!r.data) {
			vmstat_problem = read_failure("/proc/vmstat", r.err);
		} else {
			vmstat = parse_vmstat(*r.data);
			if (!vmstat.error.empty())
				vmstat_problem = "/proc/vmstat garbled: " + vmstat.error;
		}

		auto nodes = list_numa_nodes(ctx.root);
		if (!nodes.empty())
			collect_nodes(ctx, nodes, snap);
		else if (!vmstat_problem.empty())
			snap.add_unavailable(kRemoteRatio, "system",
					     "no /sys/devices/system/node/node*, and " + vmstat_problem);
		else
			collect_vmstat_numa(vmstat, snap);

		if (!vmstat_problem.empty()) {
			for (const char *id : {kMigrations, kNumaMigrations, kThpFallback})
				snap.add_unavailable(id, "system", vmstat_problem);
			return;
		}
		add_if_present(vmstat, "pgmigrate_success", series::kPgmigrateSuccess, kMigrations,
			       "kernel without CONFIG_MIGRATION", snap);
		add_if_present(vmstat, "numa_pages_migrated", series::kNumaPagesMigrated, kNumaMigrations,
			       "kernel without CONFIG_NUMA_BALANCING", snap);
		// The ratio needs both counters: one alone must not pair with a zero.
		auto alloc = vmstat.values.find("thp_fault_alloc");
		auto fallback = vmstat.values.find("thp_fault_fallback");
		if (alloc == vmstat.values.end() || fallback == vmstat.values.end()) {
			snap.add_unavailable(kThpFallback, "system",
					     std::string("/proc/vmstat has no ") +
						     (alloc == vmstat.values.end() ? "thp_fault_alloc" : "thp_fault_fallback") +
						     " (kernel without CONFIG_TRANSPARENT_HUGEPAGE)");
		} else {
			snap.add_counter(series::kThpFaultAlloc, "system", static_cast<double>(alloc->second), "procfs");
			snap.add_counter(series::kThpFaultFallback, "system", static_cast<double>(fallback->second),
					 "procfs");
		}
	}

private:
	static void collect_nodes(const SourceContext &ctx, const std::vector<unsigned> &nodes, Snapshot &snap)
	{
		double local_sum = 0, other_sum = 0;
		std::string first_failure;
		for (unsigned node : nodes) {
			std::string rel = "/sys/devices/system/node/node" + std::to_string(node) + "/numastat";
			std::string scope = "node:" + std::to_string(node);
			auto r = read_file(join_path(ctx.root, rel));
			std::string problem;
			NumaStat stat;
			if (!r.data) {
				problem = read_failure(rel, r.err);
			} else {
				stat = parse_numastat(*r.data);
				if (!stat.error.empty())
					problem = rel + " garbled: " + stat.error;
			}
			if (!problem.empty()) {
				snap.add_unavailable(kRemoteRatio, scope, problem);
				if (first_failure.empty())
					first_failure = scope + ": " + problem;
				continue;
			}
			snap.add_counter(series::kNumaLocal, scope, static_cast<double>(stat.local_node), "sysfs");
			snap.add_counter(series::kNumaOther, scope, static_cast<double>(stat.other_node), "sysfs");
			local_sum += static_cast<double>(stat.local_node);
			other_sum += static_cast<double>(stat.other_node);
		}
		// A sum over fewer nodes than last time would look like a counter
		// going backwards (or a burst): no system value rather than that.
		if (!first_failure.empty()) {
			snap.add_unavailable(kRemoteRatio, "system", "needs every node; " + first_failure);
			return;
		}
		snap.add_counter(series::kNumaLocal, "system", local_sum, "sysfs");
		snap.add_counter(series::kNumaOther, "system", other_sum, "sysfs");
	}

	static void collect_vmstat_numa(const KeyValues &vmstat, Snapshot &snap)
	{
		auto local = vmstat.values.find("numa_local");
		auto other = vmstat.values.find("numa_other");
		if (local == vmstat.values.end() || other == vmstat.values.end()) {
			snap.add_unavailable(kRemoteRatio, "system",
					     "no /sys/devices/system/node/node* and no numa_local/numa_other in "
					     "/proc/vmstat (kernel without CONFIG_NUMA)");
			return;
		}
		snap.add_counter(series::kNumaLocal, "system", static_cast<double>(local->second), "procfs");
		snap.add_counter(series::kNumaOther, "system", static_cast<double>(other->second), "procfs");
	}

	static void add_if_present(const KeyValues &vmstat, const char *key, const char *series_name,
				   const char *metric, const char *why_absent, Snapshot &snap)
	{
		auto it = vmstat.values.find(key);
		if (it == vmstat.values.end()) {
			snap.add_unavailable(metric, "system",
					     std::string("/proc/vmstat has no ") + key + " (" + why_absent + ")");
			return;
		}
		snap.add_counter(series_name, "system", static_cast<double>(it->second), "procfs");
	}
};

} // namespace

SourcePtr make_numa_source()
{
	return std::make_unique<NumaSource>();
}

} // namespace hwsig
