// Discovery of QEMU/KVM guests on this host, from /proc.
#pragma once

#include <string>
#include <vector>

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

} // namespace hwsig
