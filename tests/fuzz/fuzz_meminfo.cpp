// libFuzzer target: parse_meminfo and the hugetlb/THP name parsers never
// crash and never accept what their contracts exclude.
#include <cstdlib>
#include <string_view>

#include "hwsig/procfs.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto mi = hwsig::parse_meminfo(text);
	if (mi.error.empty() == mi.values.empty())
		std::abort();
	if (auto kb = hwsig::parse_hugepage_dir_kb(text); kb && *kb == 0)
		std::abort();
	if (auto mode = hwsig::parse_thp_mode(text); mode && (mode->empty() || text.find('[' + *mode + ']') == std::string_view::npos))
		std::abort();
	return 0;
}
