// Whether a VM's writes through the page cache can be told apart: the
// flusher submits them long after QEMU wrote, so only the cgroup cgroup v2
// writeback charged the dirty pages to says whose they were (bpf.vmio).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hwsig {

struct VmWriteback {
	std::string cgroup;          // the VM's domain cgroup, "/machine.slice/..."; empty if none
	std::uint64_t cgroup_id = 0; // its id (the directory's inode) when its writeback is its own
	std::string not_attributed;  // why not, when cgroup_id is 0
};

// Under <root>: the cgroup v2 path of `pid` (/proc/PID/cgroup, "0::"), up to
// its threaded domain (libvirt puts vCPU threads in threaded children; the
// memory and io controllers act at the domain), and whether that cgroup has
// the memory and io controllers writeback needs to charge pages to it.
VmWriteback vm_writeback(const std::string &root, int pid);

// The files and block devices `pid` holds open for writing through the page
// cache (read-write, no O_DIRECT): QEMU's images with cache=writeback (its
// default) or writethrough. Sorted paths.
std::vector<std::string> buffered_images(const std::string &root, int pid);

} // namespace hwsig
