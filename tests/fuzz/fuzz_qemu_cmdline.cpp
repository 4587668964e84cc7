// libFuzzer target: /proc/PID/cmdline and the other per-process texts of VM
// discovery. Never crashes; split_cmdline loses no bytes; a guest name is
// never empty; printable names hold no control characters; tap names obey
// the kernel's interface-name rules.
#include <cstdlib>
#include <string>
#include <string_view>

#include "hwsig/proc_alive.h"
#include "hwsig/vm_parse.h"

using namespace hwsig::vmparse;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view raw(reinterpret_cast<const char *>(data), size);

	auto argv = split_cmdline(raw);
	std::string joined;
	for (const auto &a : argv) {
		if (a.find('\0') != std::string::npos)
			std::abort();
		joined += a;
		joined += '\0';
	}
	// Re-joining gives the input back, up to the optional final NUL.
	std::string original(raw);
	if (!original.empty() && original.back() != '\0')
		original += '\0';
	if (joined != original)
		std::abort();

	if (auto name = parse_qemu_name(argv)) {
		if (name->empty())
			std::abort();
		for (unsigned char c : printable_name(*name))
			if (c < 0x20 || c == 0x7f)
				std::abort();
	}
	(void)parse_name_option(raw);
	(void)is_qemu_comm(raw);
	(void)parse_vcpu_comm(raw);
	if (auto owner = parse_vhost_comm(raw); owner && *owner <= 0)
		std::abort();
	(void)parse_vcpu_fd_target(raw);
	(void)hwsig::status_is_dead(raw);
	if (auto tap = parse_tun_fdinfo(raw)) {
		if (tap->empty() || tap->size() > 15)
			std::abort();
		for (unsigned char c : *tap)
			if (c <= ' ' || c == '/' || c == ':' || c == 0x7f)
				std::abort();
	}
	return 0;
}
