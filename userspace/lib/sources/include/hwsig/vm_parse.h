// The pure pieces of VM discovery (vm.h): what /proc says about one process,
// parsed without I/O so that tests and fuzzers can drive them directly.
// Documentation/vms.rst explains the rules.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/vm.h"

namespace hwsig::vmparse {

// /proc/PID/cmdline: argv elements separated by NUL, the last one
// NUL-terminated. A missing final NUL (a process that rewrote its argv) still
// ends the last element; an empty file (kernel thread, zombie) is no argv.
std::vector<std::string> split_cmdline(std::string_view raw);

// comm (at most 15 characters) of a QEMU process: starting with
// "qemu-system-" (the kernel truncates "qemu-system-x86_64" to
// "qemu-system-x86"), "qemu-kvm" (RHEL) or "kvm" (old Debian/Ubuntu
// binary name). Discovery decides on comm alone: reading every process's
// cmdline is slow (it takes the target's mmap lock).
bool is_qemu_comm(std::string_view comm);

// The value of "guest" in one -name argument, by QEMU's QemuOpts rules: the
// first element may omit "guest=" (implied option), later elements are
// key=value, ",," is a literal comma, the last "guest" wins. nullopt when the
// argument sets no guest name.
std::optional<std::string> parse_name_option(std::string_view optarg);

// The guest name of a QEMU argv: every "-name"/"--name" option's argument
// (QEMU merges repeated -name options, so the last guest= wins). The option
// must be a separate argv element: QEMU has no "-name=X" form. nullopt when
// no name is set or it is empty.
std::optional<std::string> parse_qemu_name(const std::vector<std::string> &argv);

// "CPU 3/KVM" -> 3: a vCPU thread of a KVM guest (QEMU names threads only
// with -name ...,debug-threads=on).
std::optional<unsigned> parse_vcpu_comm(std::string_view comm);
// "vhost-1234" -> 1234: a vhost worker created for the thread 1234.
std::optional<int> parse_vhost_comm(std::string_view comm);
// /proc/PID/fdinfo/FD of a /dev/net/tun fd: the "iff:\t<name>" line's name.
// nullopt when the fd is not attached to an interface.
std::optional<std::string> parse_tun_fdinfo(std::string_view fdinfo);
// "anon_inode:kvm-vcpu:3" -> 3 (the target of a vCPU fd).
std::optional<unsigned> parse_vcpu_fd_target(std::string_view link_target);

// Replaces control characters so that a name is safe in a table row.
std::string printable_name(std::string_view name);

// One discovered VM plus what `hwsigctl vms` shows beyond vm.h's Vm.
struct VmDetails {
	Vm vm;
	// "anon_inode:kvm-vcpu:N" fds held: how many vCPUs exist even when the
	// threads are unnamed (QEMU without debug-threads=on).
	unsigned vcpu_fds = 0;
	// false when /proc/PID/fd could not be listed (no permission): taps and
	// vcpu_fds are then unknown rather than zero.
	bool fds_readable = true;
};

// discover_vms() with the details; same order (by name, then pid).
std::vector<VmDetails> discover_vm_details(const std::string &root);

} // namespace hwsig::vmparse
