// Block devices as the BPF block collector keys them (the kernel's dev_t)
// and as every output names them: the kernel's DEVNAME, or "MAJ:MIN" as the
// kernel prints a device it has no name for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hwsig {

// The kernel's internal dev_t (MINORBITS = 20), as BPF programs read it.
constexpr unsigned kdev_major(std::uint32_t dev) { return dev >> 20; }
constexpr unsigned kdev_minor(std::uint32_t dev) { return dev & ((1u << 20) - 1); }

// "vda" from <root>/sys/dev/block/M:m/uevent DEVNAME; nullopt when missing,
// or when the name would make a "dev:NAME" scope ambiguous or unprintable.
std::optional<std::string> block_dev_name(const std::string &root, unsigned major, unsigned minor);

// block_dev_name, or "MAJ:MIN" when the device has no usable name.
std::string block_dev_label(const std::string &root, std::uint32_t kdev);

} // namespace hwsig
