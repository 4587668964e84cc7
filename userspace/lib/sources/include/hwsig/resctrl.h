// Source "resctrl.vm": LLC occupancy and MBM memory bandwidth per VM from
// resctrl monitoring groups (Intel RDT, AMD PQoS), and host-wide from the
// default group. Opt-in (SourceOptions::resctrl): it creates directories in
// /sys/fs/resctrl and moves the VMs' threads into them.
// Documentation/resctrl.rst describes what it does to the kernel's state.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/source.h"

namespace hwsig::resctrl {

// The operations that change resctrl. On the kernel's file system mkdir
// makes the group's files and rmdir removes a group with its files; a
// fixture tree does neither, so tests substitute these and play the
// kernel's part. Reads go through the ordinary file functions either way.
class FsOps {
public:
	virtual ~FsOps() = default;
	// 0 or the errno.
	virtual int make_dir(const std::string &path) = 0;
	virtual int remove_dir(const std::string &path) = 0;
	// Writes each tid to the tasks file with a write() of its own (the
	// kernel takes one task per write on older kernels); the errno of
	// each write, 0 when it succeeded. Opening the file failing gives
	// that errno for every tid.
	virtual std::vector<int> write_tasks(const std::string &tasks_path, const std::vector<int> &tids) = 0;
};

// mkdir(2), rmdir(2), open(2) + write(2).
std::unique_ptr<FsOps> kernel_ops();

// A VM name as the last part of a group name: [A-Za-z0-9._-] kept, every
// other byte '_', at most 64 bytes (names come from command lines).
std::string sanitize(std::string_view vm_name);

// "hwsig-<owner pid>-<sanitized name>".
std::string group_name(int owner_pid, std::string_view vm_name);

// The owner pid of a group name this source made, or 0 for any other name.
int owner_of(std::string_view group);

} // namespace hwsig::resctrl

namespace hwsig {

// owner_pid: the pid in the group names (this process's); ops: how
// resctrl is changed (the kernel's file system).
SourcePtr make_resctrl_source();
SourcePtr make_resctrl_source(std::unique_ptr<resctrl::FsOps> ops, int owner_pid);

} // namespace hwsig
