// /proc/stat: steal, busy and total CPU time per CPU and for the system.
#include "hwsig/procfs.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

constexpr const char *kStealRatio = metric_id::kSchedStealRatio;
constexpr const char *kBusyRatio = metric_id::kSchedCpuBusyRatio;

class StatSource final : public Source {
public:
	std::string_view name() const override { return "procfs.stat"; }
	std::vector<std::string> provides() const override { return {kStealRatio, kBusyRatio}; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (path_.empty() || root_ != ctx.root) {
			root_ = ctx.root;
			path_ = join_path(ctx.root, "/proc/stat");
		}
		auto r = files_.read(path_);
		if (!r.data) {
			for (const char *id : {kStealRatio, kBusyRatio})
				snap.add_unavailable(id, "system", errno_code(r.err), read_failure("/proc/stat", r.err));
			return;
		}
		auto stat = parse_proc_stat(*r.data);
		if (!stat.error.empty()) {
			for (const char *id : {kStealRatio, kBusyRatio})
				snap.add_unavailable(id, "system", UnavailableCode::malformed, "/proc/stat garbled: " + stat.error);
			return;
		}
		for (const auto &cpu : stat.cpus) {
			snap.add_counter(series::kCpuTotalTicks, cpu.scope, static_cast<double>(cpu.total), "procfs");
			snap.add_counter(series::kCpuBusyTicks, cpu.scope, static_cast<double>(cpu.total - cpu.idle),
					 "procfs");
		}
		// The parser guarantees one column count for every line, so a
		// missing steal column is missing everywhere: one note says it.
		if (!stat.cpus.front().steal) {
			snap.add_unavailable(kStealRatio, "system", UnavailableCode::unsupported,
					     "/proc/stat has no steal column (" +
						     std::to_string(stat.cpus.front().columns) +
						     " time columns: kernel older than 2.6.11)");
			return;
		}
		for (const auto &cpu : stat.cpus)
			snap.add_counter(series::kCpuStealTicks, cpu.scope, static_cast<double>(*cpu.steal), "procfs");
	}

private:
	std::string root_, path_;
	FileCache files_{1}; // /proc/stat kept open, re-read from offset 0
};

} // namespace

SourcePtr make_stat_source()
{
	return std::make_unique<StatSource>();
}

} // namespace hwsig
