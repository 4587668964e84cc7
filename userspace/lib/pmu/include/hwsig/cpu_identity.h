// Which CPU this host has (vendor, family, model, under a hypervisor or not)
// and which socket a CPU sits in: what the event plans choose by.
#pragma once

#include <optional>
#include <string>

namespace hwsig {

enum class CpuVendor { Unknown, Intel, Amd };

struct CpuIdentity {
	CpuVendor vendor = CpuVendor::Unknown;
	unsigned family = 0;
	unsigned model = 0;
	bool hypervisor = false; // "hypervisor" in the cpuinfo flags
};
// From <root>/proc/cpuinfo (first processor).
CpuIdentity read_cpu_identity(const std::string &root);

// physical_package_id of a CPU, from <root>/sys/devices/system/cpu/cpuN/topology.
std::optional<unsigned> cpu_socket(const std::string &root, unsigned cpu);

} // namespace hwsig
