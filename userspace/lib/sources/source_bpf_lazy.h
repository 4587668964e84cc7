// What the BPF sources (source_bpf_*.cpp) share: a collector attached on
// first use, and every metric of a source unavailable for one reason.
#pragma once

#include <cerrno>
#include <exception>
#include <functional>
#include <unistd.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwsig/error.h"
#include "hwsig/snapshot.h"

namespace hwsig::bpf_source {

inline constexpr const char *kSource = "bpf";

// What a metric's row says when the collector could not load for lack of
// privilege: the one thing to do, not libbpf's probe text (which blames
// RLIMIT_MEMLOCK and CONFIG_BPF_SYSCALL).
inline constexpr const char *kNeedsRoot = "needs root (CAP_BPF and CAP_PERFMON)";

inline bool lacks_privilege(int err)
{
	return err == EPERM || (err == EACCES && ::geteuid() != 0);
}

// The code of a failed attach's errno. EACCES as root is the verifier
// refusing a program: a load failure, not a permission.
inline UnavailableCode attach_failure_code(int err)
{
	if (lacks_privilege(err))
		return UnavailableCode::permission;
	return err == EACCES ? UnavailableCode::read_error : errno_code(err);
}

inline void all_unavailable(Snapshot &snap, const std::vector<std::string> &ids, UnavailableCode code,
			    const std::string &why)
{
	for (const auto &id : ids)
		snap.add_unavailable(id, "system", code, why);
}

// Attaches on first use; a failure is remembered, not retried every
// interval (it would not change while we run).
template <typename Collector> class LazyCollector {
public:
	// How to attach: the collector's defaults, or attach(slot) emplacing it
	// with other arguments (hwsigctl hist -m: millisecond slots).
	using Attach = std::function<void(std::optional<Collector> &)>;
	LazyCollector() : attach_([](std::optional<Collector> &c) { c.emplace(); }) {}
	explicit LazyCollector(Attach attach) : attach_(std::move(attach)) {}

	// One collect of a source: emit(Collector &) when attached; when not,
	// or when emit throws, every one of ids is unavailable with the reason.
	template <typename Emit> void collect(Snapshot &snap, const std::vector<std::string> &ids, Emit &&emit)
	{
		Collector *collector = get();
		if (!collector) {
			all_unavailable(snap, ids, failure_code_, failure_);
			return;
		}
		try {
			emit(*collector);
		} catch (const std::exception &e) {
			all_unavailable(snap, ids, UnavailableCode::read_error, e.what());
		}
	}

private:
	// Attached (attaching now if never tried), or nullptr.
	Collector *get()
	{
		if (!collector_ && failure_.empty()) {
			try {
				attach_(collector_);
			} catch (const Error &e) {
				failure_ = lacks_privilege(e.err()) ? kNeedsRoot : e.what();
				failure_code_ = attach_failure_code(e.err());
			} catch (const std::exception &e) {
				failure_ = e.what();
				failure_code_ = UnavailableCode::read_error;
			}
		}
		return collector_ ? &*collector_ : nullptr;
	}

	Attach attach_;
	std::optional<Collector> collector_;
	std::string failure_;
	UnavailableCode failure_code_ = UnavailableCode::read_error;
};

} // namespace hwsig::bpf_source
