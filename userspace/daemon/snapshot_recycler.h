// Snapshots handed out as shared pointers come back here when the last
// holder (the loop's previous snapshot, a scrape rendering it, the local
// socket) drops them, so the next Sampler::take() fills one in their
// storage instead of allocating every series again (Snapshot::reuse_storage).
#pragma once

#include <memory>
#include <mutex>

#include "hwsig/snapshot.h"

namespace hwsigd {

class SnapshotRecycler : public std::enable_shared_from_this<SnapshotRecycler> {
public:
	static std::shared_ptr<SnapshotRecycler> make() { return std::shared_ptr<SnapshotRecycler>(new SnapshotRecycler); }

	// A snapshot to fill: the last one returned, or an empty one.
	hwsig::Snapshot spare()
	{
		std::unique_ptr<hwsig::Snapshot> s;
		{
			std::lock_guard lock(mu_);
			s = std::move(spare_);
		}
		return s ? std::move(*s) : hwsig::Snapshot{};
	}

	// Shares s; the last holder's drop returns it here, from whichever
	// thread that is. The deleter holds the recycler: a snapshot that
	// outlives its service returns to a recycler still alive.
	std::shared_ptr<const hwsig::Snapshot> share(hwsig::Snapshot &&s)
	{
		auto self = shared_from_this();
		return std::shared_ptr<const hwsig::Snapshot>(
			new hwsig::Snapshot(std::move(s)),
			[self](const hwsig::Snapshot *p) { self->give_back(const_cast<hwsig::Snapshot *>(p)); });
	}

private:
	SnapshotRecycler() = default;

	// One spare is enough: the loop takes it back within the interval.
	void give_back(hwsig::Snapshot *p)
	{
		std::unique_ptr<hwsig::Snapshot> s(p);
		std::lock_guard lock(mu_);
		if (!spare_)
			spare_ = std::move(s);
	}

	std::mutex mu_;
	std::unique_ptr<hwsig::Snapshot> spare_;
};

} // namespace hwsigd
