#include "duration.h"

#include <charconv>
#include <cmath>

namespace hwsigctl {

std::optional<double> parse_duration(const std::string &text)
{
	if (text.empty())
		return std::nullopt;
	double unit = 1;
	std::size_t len = text.size();
	switch (text.back()) {
	case 's':
		--len;
		break;
	case 'm':
		unit = 60;
		--len;
		break;
	case 'h':
		unit = 3600;
		--len;
		break;
	default:
		break;
	}
	double v = 0;
	auto [p, ec] = std::from_chars(text.data(), text.data() + len, v);
	if (len == 0 || ec != std::errc() || p != text.data() + len || !std::isfinite(v) || v < 0)
		return std::nullopt;
	return v * unit;
}

} // namespace hwsigctl
