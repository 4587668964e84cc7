#include <cstdio>

#include "commands.h"
#include "hwsig/thresholds_file.h"

namespace hwsigctl {

std::optional<int> load_thresholds(const char *cmd, const std::string &path, bool absent_ok, hwsig::Thresholds &out)
{
	try {
		out = hwsig::load_thresholds_file(path, absent_ok);
	} catch (const hwsig::ThresholdError &e) {
		std::fprintf(stderr, "hwsigctl %s: %s\n", cmd, e.what());
		return 2;
	}
	return std::nullopt;
}

} // namespace hwsigctl
