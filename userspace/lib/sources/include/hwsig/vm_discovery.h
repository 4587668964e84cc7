// Discovery of QEMU/KVM guests on this host, from /proc.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hwsig/fd.h"

#include "hwsig/fs.h"
#include "hwsig/vm.h"

namespace hwsig {

// Scans <root>/proc. Never throws for a process that vanishes mid-scan or an
// unreadable entry: such processes are skipped.
std::vector<Vm> discover_vms(const std::string &root);

// What a VmScanner remembers of processes that are not QEMU, so that a
// scan need not read every process's comm again (a host runs thousands).
// A process is known by its pid and the inode of its /proc/PID entry: a
// reused pid is a new entry, a new inode. Only exec (or a rename) changes
// a known process's comm: a process is read at the two scans after it
// first appears (a QEMU forked by libvirt execs within that window), then
// again only at every full_every-th scan, which bounds how late a process
// that becomes QEMU later is seen.
class NonVmMemo {
public:
	static constexpr unsigned kFullEvery = 12;
	// Whether pid (with this /proc inode) may be skipped in this scan;
	// owner: the QEMU pid a 6.1-style vhost kthread is named after, or 0.
	bool known(int pid, std::uint64_t ino, int &owner) const;
	// pid's comm said QEMU, or could not be read: never skip it.
	void forget(int pid);
	// The scan read pid's comm: it is not a QEMU (owner as above).
	void note(int pid, std::uint64_t ino, int owner);
	// pid was seen in this scan (known or not).
	void seen(int pid, std::uint64_t ino);
	void begin_scan();
	// This scan reads every process (known() is false for all).
	bool full() const { return scan_ % kFullEvery == 0; }
	// Forgets what this scan did not see.
	void end_scan();
	std::size_t size() const { return entries_.size(); }

private:
	struct Entry {
		std::uint64_t ino = 0;
		int owner = 0;
		unsigned reads = 0;     // comm reads that said "not QEMU"
		unsigned seen_scan = 0; // last scan that listed it
	};
	std::unordered_map<int, Entry> entries_;
	unsigned scan_ = 0;
};

namespace vmparse {

struct Candidate;

// What a VmScanner remembers of each QEMU it read in full (its vCPU and
// vhost threads, taps and vCPU fds: some forty system calls), so that a
// listing of /proc need not read them again. A QEMU is known by its pid,
// the inode of its /proc/PID entry and the link count of its
// /proc/PID/task, which moves with every thread that comes or goes. It is
// read in full at the first two listings that see it with that count (a
// thread is named just after it starts), then again only at every
// kDeepEvery-th listing (staggered by pid), which bounds how late a tap
// handed to a running QEMU without a new thread is seen.
class QemuMemo {
public:
	static constexpr unsigned kDeepEvery = 5;
	struct Entry;
	QemuMemo();
	~QemuMemo();
	QemuMemo(const QemuMemo &) = delete;
	QemuMemo &operator=(const QemuMemo &) = delete;
	// What pid had at its last full read, if it may stand for now.
	const Entry *reuse(int pid, std::uint64_t ino, nlink_t links);
	// pid was read in full now (tids: every tid it had, as keys).
	void note(int pid, std::uint64_t ino, nlink_t links, const Candidate &c, const std::map<int, std::size_t> &tids);
	void begin_listing();
	// Forgets the QEMUs this listing did not see.
	void end_listing();
	std::size_t size() const { return entries_.size(); }

private:
	std::unordered_map<int, std::unique_ptr<Entry>> entries_;
	unsigned listing_ = 0;
};

} // namespace vmparse

// discover_vms() for a caller that scans again and again (the Sampler): the
// /proc/PID/comm (and task comm) files read by one scan are kept open and
// re-read with pread by the next (bounded by the fd limit); those of
// processes and threads a scan no longer sees are closed after it; settled
// non-QEMU processes are not read again (NonVmMemo). Same results as
// discover_vms(), but for a process that turns into a QEMU long after it
// started: seen within NonVmMemo::kFullEvery scans.
//
// /proc is not even listed when nothing could have changed: no pid
// allocated since the last listing (the last field of /proc/loadavg; a
// QEMU, its threads and 6.1-style vhost kthreads all take pids), and every
// listed QEMU still there with as many threads (the link count of its
// /proc/PID/task). What this misses until the next full scan (at most
// NonVmMemo::kFullEvery scans): a 6.1 vhost kthread that exits while its
// QEMU runs (a NIC unplugged), a tap handed to a running QEMU without a
// new thread (a hot-plugged NIC without vhost), and a QEMU that is a
// zombie not yet reaped. Without /proc/loadavg (a test tree), every scan
// lists. When pids were allocated but every process started since the
// last listing is neither a QEMU nor a vhost kthread by its comm, /proc is
// not listed either: on procfs only those newcomers are read (a seek to
// the first pid above the last listing); see newcomers_are_not_vms().
class VmScanner {
public:
	explicit VmScanner(std::string root);
	VmScanner(std::string root, std::size_t max_comm_fds);
	~VmScanner();
	VmScanner(const VmScanner &) = delete;
	VmScanner &operator=(const VmScanner &) = delete;
	std::vector<Vm> scan();
	std::size_t open_fds() const { return comms_.open_count(); }
	// Scans that listed /proc (for tests: the others returned the last list).
	std::uint64_t listings() const { return listings_; }
	// Scans answered by reading only the processes started since the last
	// listing (for tests and the daemon's self metrics).
	std::uint64_t quick_checks() const { return quick_checks_; }
	// Processes whose comm those quick checks read (for tests).
	std::uint64_t newcomer_reads() const { return newcomer_reads_; }

private:
	std::optional<std::uint64_t> last_pid();
	bool listed_vms_unchanged() const;
	bool newcomers_are_not_vms(std::uint64_t listed_last, std::uint64_t allocated);

	std::string root_;
	FileCache comms_;
	FileCache loadavg_{1};
	NonVmMemo memo_;
	std::unique_ptr<vmparse::QemuMemo> qemus_;
	DIR *proc_dir_ = nullptr; // <root>/proc, kept open
	bool proc_seeks_by_pid_ = false; // proc_dir_ is procfs: seekdir() to a pid works
	std::uint64_t listings_ = 0;
	std::uint64_t quick_checks_ = 0;
	std::uint64_t newcomer_reads_ = 0;
	std::optional<std::uint64_t> listed_last_pid_; // read before the last listing
	std::vector<Vm> listed_;
	// Each QEMU's /proc/PID/task, kept open, and its link count when
	// listed: an fstat() of the kept directory is the check, no path
	// walk (a stat of the path each was most of a quick check).
	struct ListedTasks {
		int pid = 0;
		Fd dir;
		nlink_t links = 0;
	};
	std::vector<ListedTasks> listed_tasks_;
};

} // namespace hwsig
