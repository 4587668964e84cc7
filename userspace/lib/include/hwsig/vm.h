// Discovery of QEMU/KVM guests on this host, from /proc.
#pragma once

#include <dirent.h>

#include <cstddef>
#include <string>
#include <vector>

#include "hwsig/fs.h"

namespace hwsig {

struct Vm {
	int pid = 0;
	std::string name;              // from -name guest=NAME (or -name NAME); "pid-<pid>" if absent
	std::vector<int> vcpu_tids;    // threads named "CPU n/KVM"
	std::vector<int> vhost_tids;   // kernel workers named "vhost-<pid>"
	std::vector<std::string> taps; // tap interfaces the process holds open
	std::string scope() const { return "vm:" + name; }
};

// Scans <root>/proc. Never throws for a process that vanishes mid-scan or an
// unreadable entry: such processes are skipped.
std::vector<Vm> discover_vms(const std::string &root);

// discover_vms() for a caller that scans again and again (the Sampler): the
// /proc/PID/comm (and task comm) files read by one scan are kept open and
// re-read with pread by the next (bounded by the fd limit); those of
// processes and threads a scan no longer sees are closed after it. Same
// results as discover_vms().
class VmScanner {
public:
	explicit VmScanner(std::string root);
	VmScanner(std::string root, std::size_t max_comm_fds);
	~VmScanner();
	VmScanner(const VmScanner &) = delete;
	VmScanner &operator=(const VmScanner &) = delete;
	std::vector<Vm> scan();
	std::size_t open_fds() const { return comms_.open_count(); }

private:
	std::string root_;
	FileCache comms_;
	DIR *proc_dir_ = nullptr; // <root>/proc, kept open
};

} // namespace hwsig
