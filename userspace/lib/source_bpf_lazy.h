// What the BPF sources (source_bpf_*.cpp) share: a collector attached on
// first use, and every metric of a source unavailable for one reason.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/snapshot.h"

namespace hwsig::bpf_source {

inline constexpr const char *kSource = "bpf";

inline void all_unavailable(Snapshot &snap, const std::vector<std::string> &ids, const std::string &why)
{
	for (const auto &id : ids)
		snap.add_unavailable(id, "system", why);
}

// Attaches on first use; a failure is remembered, not retried every
// interval (it would not change while we run).
template <typename Collector> class LazyCollector {
public:
	Collector *get()
	{
		if (!collector_ && failure_.empty()) {
			try {
				collector_.emplace();
			} catch (const std::exception &e) {
				failure_ = e.what();
			}
		}
		return collector_ ? &*collector_ : nullptr;
	}
	const std::string &failure() const { return failure_; }

private:
	std::optional<Collector> collector_;
	std::string failure_;
};

} // namespace hwsig::bpf_source
