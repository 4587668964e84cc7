// Block devices as the BPF block collector keys them (the kernel's dev_t)
// and as every output names them: the kernel's DEVNAME, or "MAJ:MIN" as the
// kernel prints a device it has no name for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "hwsig/fs.h"

namespace hwsig {

// The kernel's internal dev_t (MINORBITS = 20), as BPF programs read it.
constexpr unsigned kdev_major(std::uint32_t dev) { return dev >> 20; }
constexpr unsigned kdev_minor(std::uint32_t dev) { return dev & ((1u << 20) - 1); }

// "vda" from <root>/sys/dev/block/M:m/uevent DEVNAME; nullopt when missing,
// or when the name would make a "dev:NAME" scope ambiguous or unprintable.
std::optional<std::string> block_dev_name(const std::string &root, unsigned major, unsigned minor);

// block_dev_name, or "MAJ:MIN" when the device has no usable name.
std::string block_dev_label(const std::string &root, std::uint32_t kdev);

// block_dev_label() with the labels kept per dev_t, for a source that names
// the same disks on every snapshot: a dev_t not seen before is looked up when
// it first appears, and every label is looked up again once refresh_ns have
// passed since the last full lookup (a disk removed and another given its
// MAJ:MIN), or when the root changes. Each disk's uevent stays open
// between lookups.
class BlockDevNames {
public:
	explicit BlockDevNames(std::uint64_t refresh_ns = 5'000'000'000ull) : refresh_ns_(refresh_ns) {}
	// Call once per snapshot, before label(); now_ns is CLOCK_MONOTONIC.
	void begin(const std::string &root, std::uint64_t now_ns);
	const std::string &label(std::uint32_t kdev);
	// The device is no longer in sysfs (hot-unplug, a removed loop
	// device), as of the last refresh: its stale counts are not reported.
	bool gone(std::uint32_t kdev);
	// Looks kdev up again at its next label() or gone(), before the next
	// refresh: a new disk seen behind a dev_t (a new generation).
	void refresh(std::uint32_t kdev) { labels_.erase(kdev); }
	// Whether the disk generation `generation` (its diskseq; 0 before
	// 5.15) of kdev is over now, read now rather than at the refresh: the
	// device left sysfs, its diskseq moved on (a loop device detached or
	// attached to another file), or it has no media (size 0: a detached
	// loop device where the diskseq stays). For a disk idle in an
	// interval: one or two preads of kept fds.
	bool ended(std::uint32_t kdev, std::uint64_t generation);
	std::size_t size() const { return labels_.size(); }

private:
	std::string root_;
	std::uint64_t refresh_ns_;
	std::uint64_t filled_at_ns_ = 0;
	bool started_ = false;
	struct Entry {
		std::string label;
		bool gone = false;
	};
	const Entry &entry(std::uint32_t kdev);
	std::unordered_map<std::uint32_t, Entry> labels_;
	FileCache uevents_{256}; // each disk's uevent kept open: one pread a refresh
	FileCache media_{512};   // the idle disks' diskseq and size, kept open
};

} // namespace hwsig
