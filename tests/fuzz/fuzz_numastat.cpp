// libFuzzer target: parse_numastat never crashes; an error leaves zeros.
#include <cstdlib>
#include <string_view>

#include "hwsig/procfs.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	auto st = hwsig::parse_numastat(std::string_view(reinterpret_cast<const char *>(data), size));
	if (!st.error.empty() && (st.local_node != 0 || st.other_node != 0))
		std::abort();
	return 0;
}
