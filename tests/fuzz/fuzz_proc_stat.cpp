// libFuzzer target: parse_proc_stat never crashes and never returns numbers
// together with an error or an impossible steal.
#include <cstdlib>
#include <string_view>

#include "hwsig/procfs.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	auto st = hwsig::parse_proc_stat(std::string_view(reinterpret_cast<const char *>(data), size));
	if (!st.error.empty() && !st.cpus.empty())
		std::abort();
	if (st.error.empty()) {
		if (st.cpus.empty())
			std::abort();
		for (const auto &cpu : st.cpus)
			if (cpu.columns < 4 || (cpu.steal && *cpu.steal > cpu.total) ||
			    cpu.steal.has_value() != (cpu.columns >= 8))
				std::abort();
	}
	return 0;
}
