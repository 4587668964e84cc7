#include "hwsig/thresholds_file.h"

#include <cerrno>
#include <cstring>

#include "hwsig/fs.h"

namespace hwsig {

Thresholds load_thresholds_file(const std::string &path, bool absent_ok)
{
	// A thresholds file is a few dozen lines: anything past 1 MiB is not one.
	auto file = read_file(path, 1u << 20);
	if (!file.data) {
		if (absent_ok && file.err == ENOENT)
			return {};
		throw ThresholdError("cannot read thresholds file " + path + ": " + std::strerror(file.err));
	}
	return parse_thresholds(*file.data, path);
}

} // namespace hwsig
