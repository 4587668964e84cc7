// libFuzzer target: parse_vmstat never crashes; an error comes with no values.
#include <cstdlib>
#include <string_view>

#include "hwsig/procfs.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	auto kv = hwsig::parse_vmstat(std::string_view(reinterpret_cast<const char *>(data), size));
	if (kv.error.empty() == kv.values.empty())
		std::abort();
	return 0;
}
