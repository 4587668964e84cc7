// libFuzzer target: parse_pressure never crashes and only returns
// percentages in 0..100.
#include <cstdlib>
#include <string_view>

#include "hwsig/procfs.h"

namespace {

void check(const std::optional<hwsig::PressureLine> &line)
{
	if (!line)
		return;
	for (double v : {line->avg10, line->avg60, line->avg300})
		if (!(v >= 0.0 && v <= 100.0))
			std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	auto p = hwsig::parse_pressure(std::string_view(reinterpret_cast<const char *>(data), size));
	if (p.error.empty() != p.some.has_value())
		std::abort();
	if (!p.error.empty() && p.full)
		std::abort();
	check(p.some);
	check(p.full);
	return 0;
}
