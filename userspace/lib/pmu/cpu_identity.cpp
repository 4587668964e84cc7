// Which CPU this is, from /proc/cpuinfo, and which socket a CPU sits in, from
// sysfs topology (cpu_identity.h).

#include "hwsig/cpu_identity.h"

#include "hwsig/fs.h"
#include "hwsig/parse.h"

namespace hwsig {

CpuIdentity read_cpu_identity(const std::string &root)
{
	CpuIdentity id;
	auto r = read_file(join_path(root, "/proc/cpuinfo"));
	if (!r.data)
		return id;
	for (std::string_view line : split_lines(*r.data)) {
		auto colon = line.find(':');
		if (colon == std::string_view::npos) {
			if (trim(line).empty() && id.vendor != CpuVendor::Unknown)
				break; // end of the first processor
			continue;
		}
		std::string_view key = trim(line.substr(0, colon));
		std::string_view val = trim(line.substr(colon + 1));
		if (key == "vendor_id")
			id.vendor = val == "GenuineIntel" ? CpuVendor::Intel
				    : val == "AuthenticAMD" || val == "HygonGenuine" ? CpuVendor::Amd
										      : CpuVendor::Unknown;
		else if (key == "cpu family")
			id.family = static_cast<unsigned>(parse_u64(val).value_or(0));
		else if (key == "model")
			id.model = static_cast<unsigned>(parse_u64(val).value_or(0));
		else if (key == "flags") {
			for (auto flag : split_ws(val))
				if (flag == "hypervisor")
					id.hypervisor = true;
		}
	}
	return id;
}

std::optional<unsigned> cpu_socket(const std::string &root, unsigned cpu)
{
	auto s = read_trimmed(join_path(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
						      "/topology/physical_package_id"));
	if (!s)
		return std::nullopt;
	auto v = parse_u64(*s);
	if (!v || *v > 1u << 20)
		return std::nullopt;
	return static_cast<unsigned>(*v);
}

} // namespace hwsig
