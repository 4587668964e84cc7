// NUMA placement and page migration: per-node numastat (falling back to the
// system-wide /proc/vmstat numa_* counters) and the /proc/vmstat migration
// and THP fault counters.
#include <chrono>
#include <cstdint>
#include <iterator>

#include "hwsig/parse.h"
#include "hwsig/procfs.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

constexpr const char *kRemoteRatio = metric_id::kMemNumaRemoteRatio;
constexpr const char *kFallbackRatio = metric_id::kMemNumaFallbackRatio;
constexpr const char *kNumaStatOff =
	"vm.numa_stat = 0: the kernel does not count NUMA allocations (sysctl vm.numa_stat=1 counts them)";
constexpr const char *kNoPreferredCounters = "numastat has no numa_hit/numa_foreign";
constexpr const char *kMigrations = metric_id::kMemPageMigrationsPs;
constexpr const char *kNumaMigrations = metric_id::kMemNumaPagesMigratedPs;
constexpr const char *kThpFallback = metric_id::kMemThpFallbackRatio;

// The /proc/vmstat counters this source reads.
constexpr std::string_view kPicked[] = {"numa_local",          "numa_other",      "numa_hit",
					"numa_foreign",        "pgmigrate_success", "numa_pages_migrated",
					"thp_fault_alloc",     "thp_fault_fallback"};

// parse_vmstat() of a file with the layout of the last text parse_vmstat()
// accepted (a kernel's vmstat never changes its lines): as many lines, and
// each picked counter's line at the same index under the same name. Then
// only the picked lines are parsed, without building the map of ~190 names
// or parsing the values no metric uses (the first parse checked them all).
// Anything else (another line count, a picked line moved or renamed, a
// picked value that is not a kernel number, no final newline) goes to
// parse_vmstat(), and its answer is returned. The result holds the kPicked
// counters only.
class VmstatParser {
public:
	KeyValues parse(std::string_view text)
	{
		KeyValues out;
		if (fast(text, out))
			return out;
		out = parse_vmstat(text);
		lines_ = 0;
		picked_lines_.clear();
		if (out.error.empty()) {
			for (auto line : split_lines(text)) {
				auto f = split_ws(line);
				if (f.empty())
					continue;
				for (std::size_t i = 0; i < std::size(kPicked); ++i)
					if (f[0] == kPicked[i])
						picked_lines_.push_back({lines_, i});
				++lines_;
			}
		}
		return out;
	}

private:
	bool fast(std::string_view text, KeyValues &out) const
	{
		if (lines_ == 0 || text.empty() || text.back() != '\n')
			return false;
		std::uint64_t picked[std::size(kPicked)];
		std::size_t pos = 0, line = 0, next = 0;
		while (pos < text.size()) {
			const std::size_t end = text.find('\n', pos);
			if (next < picked_lines_.size() && picked_lines_[next].line == line) {
				// "<name> <kernel number>"
				const std::string_view name = kPicked[picked_lines_[next].pick];
				const std::string_view l = text.substr(pos, end - pos);
				if (l.size() < name.size() + 2 || l.compare(0, name.size(), name) != 0 ||
				    l[name.size()] != ' ')
					return false;
				auto value = parse_kernel_u64(l.substr(name.size() + 1));
				if (!value)
					return false;
				picked[picked_lines_[next].pick] = *value;
				++next;
			}
			++line;
			pos = end + 1;
		}
		if (line != lines_ || next != picked_lines_.size())
			return false;
		for (const auto &p : picked_lines_)
			out.values.emplace(std::string(kPicked[p.pick]), picked[p.pick]);
		return true;
	}

	struct PickedLine {
		std::size_t line; // index among the file's lines
		std::size_t pick; // index in kPicked
	};
	std::size_t lines_ = 0;                // of the last accepted file
	std::vector<PickedLine> picked_lines_; // in file order
};

class NumaSource final : public Source {
public:
	std::string_view name() const override { return "procfs.numa"; }
	std::vector<std::string> provides() const override
	{
		return {kRemoteRatio, kFallbackRatio, kMigrations, kNumaMigrations, kThpFallback};
	}

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		bool rescanned = refresh_layout(ctx, false);
		std::string vmstat_problem;
		UnavailableCode vmstat_code = UnavailableCode::malformed;
		KeyValues vmstat;
		auto r = files_.read(vmstat_path_);
		if (!r.data) {
			vmstat_problem = read_failure("/proc/vmstat", r.err);
			vmstat_code = errno_code(r.err);
		} else {
			vmstat = vmstat_.parse(*r.data);
			if (!vmstat.error.empty())
				vmstat_problem = "/proc/vmstat garbled: " + vmstat.error;
		}

		std::vector<NodeRead> reads;
		if (!nodes_.empty()) {
			reads = read_nodes();
			// A node that went away since the last scan fails to read:
			// look again, as a fresh listing would not have it.
			if (!rescanned && any_failed(reads)) {
				refresh_layout(ctx, true);
				reads = read_nodes();
			}
		}
		if (numa_stat_off(ctx)) {
			// The kernel zeroed the counters and no longer counts:
			// "no allocations" would be a wrong answer.
			for (const char *id : {kRemoteRatio, kFallbackRatio}) {
				snap.add_unavailable(id, "system", UnavailableCode::unsupported, kNumaStatOff);
				if (!nodes_.empty())
					snap.add_unavailable(id, Scope::all(Scope::Kind::Node).str(), UnavailableCode::unsupported,
							     kNumaStatOff);
			}
		} else if (!nodes_.empty())
			emit_nodes(reads, snap);
		else if (!vmstat_problem.empty())
			for (const char *id : {kRemoteRatio, kFallbackRatio})
				snap.add_unavailable(id, "system", vmstat_code,
						     "no /sys/devices/system/node/node*, and " + vmstat_problem);
		else
			collect_vmstat_numa(vmstat, snap);

		if (!vmstat_problem.empty()) {
			for (const char *id : {kMigrations, kNumaMigrations, kThpFallback})
				snap.add_unavailable(id, "system", vmstat_code, vmstat_problem);
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
			snap.add_unavailable(kThpFallback, "system", UnavailableCode::unsupported,
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
	// Where the node files are: listed when clock_ says so, not on
	// every snapshot. What the files say is read on every snapshot.
	struct NodeFile {
		std::string path, rel, scope;
	};
	struct NodeRead {
		bool failed = false; // could not be read (garbled is not a failure)
		std::string problem;
		UnavailableCode code = UnavailableCode::malformed;
		NumaStat stat;
	};


	// Lists the nodes again when forced, when the root changed or when
	// clock_ says the nodes may have changed. True when it listed them.
	bool refresh_layout(const SourceContext &ctx, bool force)
	{
		if (!clock_.due(ctx.root, force))
			return false;
		root_ = ctx.root;
		vmstat_path_ = join_path(ctx.root, "/proc/vmstat");
		nodes_.clear();
		for (unsigned node : list_numa_nodes(ctx.root)) {
			NodeFile f;
			f.rel = "/sys/devices/system/node/node" + std::to_string(node) + "/numastat";
			f.path = join_path(ctx.root, f.rel);
			f.scope = Scope::node(node).str();
			nodes_.push_back(std::move(f));
		}
		files_.revalidate();
		return true;
	}

	std::vector<NodeRead> read_nodes()
	{
		std::vector<NodeRead> reads(nodes_.size());
		for (std::size_t i = 0; i < nodes_.size(); ++i) {
			auto r = files_.read(nodes_[i].path);
			if (!r.data) {
				reads[i].failed = true;
				reads[i].problem = read_failure(nodes_[i].rel, r.err);
				reads[i].code = errno_code(r.err);
				continue;
			}
			reads[i].stat = parse_numastat(*r.data);
			if (!reads[i].stat.error.empty())
				reads[i].problem = nodes_[i].rel + " garbled: " + reads[i].stat.error;
		}
		return reads;
	}

	static bool any_failed(const std::vector<NodeRead> &reads)
	{
		for (const auto &r : reads)
			if (r.failed)
				return true;
		return false;
	}

	void emit_nodes(const std::vector<NodeRead> &reads, Snapshot &snap) const
	{
		double local_sum = 0, other_sum = 0, hit_sum = 0, foreign_sum = 0;
		std::string first_failure, first_without_preferred;
		UnavailableCode first_failure_code = UnavailableCode::read_error;
		for (std::size_t i = 0; i < nodes_.size(); ++i) {
			const std::string &scope = nodes_[i].scope;
			const NodeRead &r = reads[i];
			if (!r.problem.empty()) {
				snap.add_unavailable(kRemoteRatio, scope, r.code, r.problem);
				snap.add_unavailable(kFallbackRatio, scope, r.code, r.problem);
				if (first_failure.empty()) {
					first_failure = scope + ": " + r.problem;
					first_failure_code = r.code;
				}
				continue;
			}
			snap.add_counter(series::kNumaLocal, scope, static_cast<double>(r.stat.local_node), "sysfs");
			snap.add_counter(series::kNumaOther, scope, static_cast<double>(r.stat.other_node), "sysfs");
			local_sum += static_cast<double>(r.stat.local_node);
			other_sum += static_cast<double>(r.stat.other_node);
			if (r.stat.numa_hit && r.stat.numa_foreign) {
				snap.add_counter(series::kNumaHit, scope, static_cast<double>(*r.stat.numa_hit), "sysfs");
				snap.add_counter(series::kNumaForeign, scope, static_cast<double>(*r.stat.numa_foreign),
						 "sysfs");
				hit_sum += static_cast<double>(*r.stat.numa_hit);
				foreign_sum += static_cast<double>(*r.stat.numa_foreign);
			} else {
				snap.add_unavailable(kFallbackRatio, scope, UnavailableCode::unsupported, kNoPreferredCounters);
				if (first_without_preferred.empty())
					first_without_preferred = scope + ": " + kNoPreferredCounters;
			}
		}
		// A sum over fewer nodes than last time would look like a counter
		// going backwards (or a burst): no system value rather than that.
		if (!first_failure.empty()) {
			snap.add_unavailable(kRemoteRatio, "system", first_failure_code, "needs every node; " + first_failure);
			snap.add_unavailable(kFallbackRatio, "system", first_failure_code, "needs every node; " + first_failure);
			return;
		}
		snap.add_counter(series::kNumaLocal, "system", local_sum, "sysfs");
		snap.add_counter(series::kNumaOther, "system", other_sum, "sysfs");
		if (!first_without_preferred.empty()) {
			snap.add_unavailable(kFallbackRatio, "system", UnavailableCode::unsupported,
					     "needs every node; " + first_without_preferred);
			return;
		}
		snap.add_counter(series::kNumaHit, "system", hit_sum, "sysfs");
		snap.add_counter(series::kNumaForeign, "system", foreign_sum, "sysfs");
	}

	static void collect_vmstat_numa(const KeyValues &vmstat, Snapshot &snap)
	{
		auto local = vmstat.values.find("numa_local");
		auto other = vmstat.values.find("numa_other");
		if (local == vmstat.values.end() || other == vmstat.values.end()) {
			for (const char *id : {kRemoteRatio, kFallbackRatio})
				snap.add_unavailable(id, "system", UnavailableCode::unsupported,
						     "no /sys/devices/system/node/node* and no numa_local/numa_other in "
						     "/proc/vmstat (kernel without CONFIG_NUMA)");
			return;
		}
		snap.add_counter(series::kNumaLocal, "system", static_cast<double>(local->second), "procfs");
		snap.add_counter(series::kNumaOther, "system", static_cast<double>(other->second), "procfs");
		auto hit = vmstat.values.find("numa_hit");
		auto foreign = vmstat.values.find("numa_foreign");
		if (hit == vmstat.values.end() || foreign == vmstat.values.end()) {
			snap.add_unavailable(kFallbackRatio, "system", UnavailableCode::unsupported,
					     "no /sys/devices/system/node/node* and no numa_hit/numa_foreign in /proc/vmstat");
			return;
		}
		snap.add_counter(series::kNumaHit, "system", static_cast<double>(hit->second), "procfs");
		snap.add_counter(series::kNumaForeign, "system", static_cast<double>(foreign->second), "procfs");
	}

	static void add_if_present(const KeyValues &vmstat, const char *key, const char *series_name,
				   const char *metric, const char *why_absent, Snapshot &snap)
	{
		auto it = vmstat.values.find(key);
		if (it == vmstat.values.end()) {
			snap.add_unavailable(metric, "system", UnavailableCode::unsupported,
					     std::string("/proc/vmstat has no ") + key + " (" + why_absent + ")");
			return;
		}
		snap.add_counter(series_name, "system", static_cast<double>(it->second), "procfs");
	}

	// vm.numa_stat (Linux 4.16+): 0 when an administrator turned NUMA
	// allocation counting off. Read every time (one pread of a kept fd):
	// the switch zeroes the counters, which must not read as a reset, and
	// a switch back on must not be reported off for a few more intervals.
	bool numa_stat_off(const SourceContext &ctx)
	{
		if (numa_stat_path_.empty() || numa_stat_root_ != ctx.root) {
			numa_stat_root_ = ctx.root;
			numa_stat_path_ = join_path(ctx.root, "/proc/sys/vm/numa_stat");
		}
		auto t = files_.read(numa_stat_path_);
		return t.data && trim(*t.data) == "0";
	}

	std::string root_, vmstat_path_;
	std::vector<NodeFile> nodes_;
	NodeLayoutClock clock_;
	std::string numa_stat_root_, numa_stat_path_;
	FileCache files_{64}; // /proc/vmstat, vm.numa_stat and every numastat, kept open
	VmstatParser vmstat_;
};

} // namespace

SourcePtr make_numa_source()
{
	return std::make_unique<NumaSource>();
}

} // namespace hwsig
