// Pressure stall information of /proc/pressure/{cpu,memory,io}: the total
// stall time (us, cumulative; the catalog derives the interval's share from
// it) and the kernel's avg10 (exported as it is).
#include <cerrno>
#include <iterator>

#include "hwsig/procfs.h"
#include "hwsig/series.h"

namespace hwsig {

namespace {

constexpr const char *kNoPsi = "PSI not available (kernel without CONFIG_PSI or booted with psi=0)";

struct Resource {
	const char *file;
	const char *some_metric;
	const char *some_series; // avg10
	const char *some_total;  // total us
	const char *full_metric; // nullptr: "full" is not reported for this resource
	const char *full_series;
	const char *full_total;
};

// cpu's "full" line (Linux 5.13+) is all zeros at system level: not reported.
constexpr Resource kResources[] = {
	{"/proc/pressure/cpu", metric_id::kPsiCpuSomePct, series::kPsiCpuSome, series::kPsiCpuSomeUs, nullptr, nullptr,
	 nullptr},
	{"/proc/pressure/memory", metric_id::kPsiMemorySomePct, series::kPsiMemorySome, series::kPsiMemorySomeUs,
	 metric_id::kPsiMemoryFullPct, series::kPsiMemoryFull, series::kPsiMemoryFullUs},
	{"/proc/pressure/io", metric_id::kPsiIoSomePct, series::kPsiIoSome, series::kPsiIoSomeUs, metric_id::kPsiIoFullPct,
	 series::kPsiIoFull, series::kPsiIoFullUs},
};

class PsiSource final : public Source {
public:
	std::string_view name() const override { return "procfs.psi"; }
	std::vector<std::string> provides() const override
	{
		std::vector<std::string> ids;
		for (const auto &res : kResources) {
			ids.emplace_back(res.some_metric);
			if (res.full_metric)
				ids.emplace_back(res.full_metric);
		}
		return ids;
	}

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		if (paths_.empty() || root_ != ctx.root) {
			root_ = ctx.root;
			dir_path_ = join_path(ctx.root, "/proc/pressure");
			paths_.clear();
			for (const auto &res : kResources)
				paths_.push_back(join_path(ctx.root, res.file));
		}
		// The files are read first (through kept fds); only when one is
		// missing is the directory looked at, to tell "no PSI" apart.
		Read reads[std::size(kResources)];
		bool any_missing = false;
		for (std::size_t i = 0; i < std::size(kResources); ++i) {
			// Each file's totals are stamped with its own read: a rate is
			// the total's delta over the time between two reads of it.
			reads[i].at_ns = monotonic_ns();
			auto r = files_.read(paths_[i]);
			if (!r.data) {
				reads[i].err = r.err;
				any_missing |= r.err == ENOENT;
				continue;
			}
			reads[i].pressure = parse_pressure(*r.data);
		}
		if (any_missing && !path_exists(dir_path_)) {
			for (const auto &id : provides())
				snap.add_unavailable(id, "system", UnavailableCode::unsupported, kNoPsi);
			return;
		}
		for (std::size_t i = 0; i < std::size(kResources); ++i) {
			if (snap.stamping())
				snap.stamp_readings(reads[i].at_ns);
			emit(kResources[i], reads[i], snap);
		}
	}

private:
	struct Read {
		int err = 0; // the read failed with this errno
		Pressure pressure;
		std::uint64_t at_ns = 0; // CLOCK_MONOTONIC right before the read
	};

	static void unavailable(const Resource &res, UnavailableCode code, const std::string &reason, Snapshot &snap)
	{
		snap.add_unavailable(res.some_metric, "system", code, reason);
		if (res.full_metric)
			snap.add_unavailable(res.full_metric, "system", code, reason);
	}

	static void emit(const Resource &res, const Read &r, Snapshot &snap)
	{
		if (r.err) {
			// Kernels before 5.x keep the files but refuse reads when psi=0.
			if (r.err == EOPNOTSUPP)
				unavailable(res, UnavailableCode::unsupported, kNoPsi, snap);
			else
				unavailable(res, errno_code(r.err), read_failure(res.file, r.err), snap);
			return;
		}
		const Pressure &p = r.pressure;
		if (!p.error.empty()) {
			unavailable(res, UnavailableCode::malformed, std::string(res.file) + " garbled: " + p.error, snap);
			return;
		}
		snap.add_gauge(res.some_series, "system", p.some->avg10, "procfs");
		snap.add_counter(res.some_total, "system", static_cast<double>(p.some->total_us), "procfs");
		if (!res.full_metric)
			return;
		if (!p.full) {
			snap.add_unavailable(res.full_metric, "system", UnavailableCode::unsupported,
					     std::string(res.file) + " has no 'full' line");
			return;
		}
		snap.add_gauge(res.full_series, "system", p.full->avg10, "procfs");
		snap.add_counter(res.full_total, "system", static_cast<double>(p.full->total_us), "procfs");
	}

	std::string root_, dir_path_;
	std::vector<std::string> paths_;
	FileCache files_{std::size(kResources)}; // the three pressure files, kept open
};

} // namespace

SourcePtr make_psi_source()
{
	return std::make_unique<PsiSource>();
}

} // namespace hwsig
