// Whether a process is still there: the one answer for VM discovery, the
// BPF scheduler source and `hwsigctl stat --vm`, which must agree on when a
// QEMU has exited.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hwsig/fd.h"

namespace hwsig {

// The State: line of a /proc/PID/status text says zombie (Z) or dead (X,
// or x: TASK_DEAD as older kernels printed it). A text without a State: line
// is not ours to judge: not dead.
bool status_is_dead(std::string_view status);

// <root>/proc/PID exists and its status says neither zombie nor dead. A
// zombie QEMU's guest is gone although its pid is still listed.
bool process_alive(const std::string &root, int pid);

// process_alive() asked every interval of the same processes (the BPF
// scheduler source's VMs): on the live /proc, a pidfd per process, kept,
// which becomes readable once the process has exited (a zombie included),
// instead of /proc/PID/status, which the kernel composes anew at each read
// (the largest part of that source's cost beside 200 VMs). The pidfds sit
// in one epoll set, which names the exited ones: a question costs the
// exits since the last one, not a poll of every process. Under another
// root (a fixture tree) or without pidfd_open (before 5.3) or epoll,
// process_alive() itself.
class AliveWatch {
public:
	bool alive(const std::string &root, int pid);
	// The same answer for each of pids, in their order.
	std::vector<bool> alive(const std::string &root, const std::vector<int> &pids);
	// Closes the pidfds of processes not asked about since the last sweep().
	void sweep();
	std::size_t open_count() const { return watched_.size(); }

private:
	struct Watched {
		Fd pidfd;
		std::uint64_t round = 0;
		bool exited = false; // the epoll set said so; answered, then dropped
	};
	// Marks the watched processes that exited since the last call; false
	// when the set cannot be asked (the status files answer then).
	bool collect_exits();
	// Keeps pid's new pidfd in watched_ and in the epoll set; closes it
	// when the set refuses it (the next question opens it again).
	void watch(int pid, Fd pidfd);

	std::unordered_map<int, Watched> watched_;
	Fd epoll_;
	std::uint64_t round_ = 1;
	bool pidfds_ = true; // false after ENOSYS (or a sandbox's EPERM)
};

} // namespace hwsig
