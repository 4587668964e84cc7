// A QEMU/KVM guest on this host: what every layer above knows of it. Found
// by sources/vm_discovery (hwsig/vm_discovery.h).
#pragma once

#include <string>
#include <vector>

#include "hwsig/scope.h"

namespace hwsig {

struct Vm {
	int pid = 0;
	std::string name;              // from -name guest=NAME (or -name NAME); "pid-<pid>" if absent
	std::vector<int> vcpu_tids;    // threads named "CPU n/KVM"
	std::vector<int> vhost_tids;   // kernel workers named "vhost-<pid>"
	std::vector<std::string> taps; // tap interfaces the process holds open
	std::string scope() const { return Scope::vm(name).str(); }
};

} // namespace hwsig
