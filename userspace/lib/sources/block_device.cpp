#include "hwsig/block_device.h"

#include <algorithm>
#include <cerrno>
#include <string_view>

#include "hwsig/fs.h"
#include "hwsig/parse.h"

namespace hwsig {

namespace {

// DEVNAME of a uevent file's text, when usable as part of a scope.
std::optional<std::string> uevent_devname(std::string_view uevent)
{
	for (std::string_view line : split_lines(uevent)) {
		if (line.substr(0, 8) != "DEVNAME=")
			continue;
		std::string_view name = line.substr(8);
		// A name becomes part of a scope ("dev:NAME"): refuse what would
		// make it ambiguous or unprintable.
		bool ok = !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
				  return c > ' ' && c < 127 && c != ':';
			  });
		if (ok)
			return std::string(name);
		return std::nullopt;
	}
	return std::nullopt;
}

std::string majmin(unsigned major, unsigned minor)
{
	return std::to_string(major) + ":" + std::to_string(minor);
}

} // namespace

std::optional<std::string> block_dev_name(const std::string &root, unsigned major, unsigned minor)
{
	FileRead r = read_file(join_path(root, "sys/dev/block/" + majmin(major, minor) + "/uevent"), 64 << 10);
	if (!r.data)
		return std::nullopt;
	return uevent_devname(*r.data);
}

std::string block_dev_label(const std::string &root, std::uint32_t kdev)
{
	unsigned major = kdev_major(kdev), minor = kdev_minor(kdev);
	if (auto name = block_dev_name(root, major, minor))
		return *name;
	return majmin(major, minor);
}

void BlockDevNames::begin(const std::string &root, std::uint64_t now_ns)
{
	if (!started_ || root != root_ || now_ns - filled_at_ns_ >= refresh_ns_) {
		labels_.clear();
		// The uevents of disks not looked up since the last refresh are closed.
		uevents_.sweep();
		root_ = root;
		filled_at_ns_ = now_ns;
		started_ = true;
	}
}

const BlockDevNames::Entry &BlockDevNames::entry(std::uint32_t kdev)
{
	auto it = labels_.find(kdev);
	if (it == labels_.end()) {
		Entry e;
		const std::string dir = "sys/dev/block/" + majmin(kdev_major(kdev), kdev_minor(kdev));
		auto r = uevents_.read(join_path(root_, dir + "/uevent"), 64 << 10);
		std::optional<std::string> name;
		if (r.data)
			name = uevent_devname(*r.data);
		e.label = name ? *name : majmin(kdev_major(kdev), kdev_minor(kdev));
		// Gone: sysfs is there but the device's entry is not.
		e.gone = !r.data && path_exists(join_path(root_, "sys/dev/block")) && !path_exists(join_path(root_, dir));
		it = labels_.emplace(kdev, std::move(e)).first;
	}
	return it->second;
}

const std::string &BlockDevNames::label(std::uint32_t kdev)
{
	return entry(kdev).label;
}

bool BlockDevNames::gone(std::uint32_t kdev)
{
	return entry(kdev).gone;
}

bool BlockDevNames::ended(std::uint32_t kdev, std::uint64_t generation)
{
	const std::string dir = join_path(root_, "sys/dev/block/" + majmin(kdev_major(kdev), kdev_minor(kdev)));
	auto size = media_.read(dir + "/size", 64);
	if (!size.data) {
		// The device left sysfs (a kept fd of a removed device reads
		// ENODEV; a fresh open ENOENT), where sysfs itself is there.
		return (size.err == ENODEV || size.err == ENOENT) && path_exists(join_path(root_, "sys/dev/block"));
	}
	if (auto sectors = parse_u64(trim(*size.data)); sectors && *sectors == 0)
		return true;
	if (!generation)
		return false; // no diskseq on this kernel
	auto seq = media_.read(dir + "/diskseq", 64);
	auto now = seq.data ? parse_u64(trim(*seq.data)) : std::nullopt;
	return now && (*now & 0xffffffffull) != (generation & 0xffffffffull);
}

} // namespace hwsig
