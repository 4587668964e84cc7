#include "hwsig/parse.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace hwsig {

std::string_view trim(std::string_view s)
{
	const char *ws = " \t\r\n\v\f";
	std::size_t b = s.find_first_not_of(ws);
	if (b == std::string_view::npos)
		return {};
	std::size_t e = s.find_last_not_of(ws);
	return s.substr(b, e - b + 1);
}

std::optional<std::uint64_t> parse_u64(std::string_view s)
{
	s = trim(s);
	if (s.empty() || s.front() == '-' || s.front() == '+')
		return std::nullopt;
	std::uint64_t v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
	if (ec != std::errc() || p != s.data() + s.size())
		return std::nullopt;
	return v;
}

std::optional<std::uint64_t> parse_kernel_u64(std::string_view s)
{
	if (s.empty() || (s.size() > 1 && s.front() == '0') || s.front() < '0' || s.front() > '9')
		return std::nullopt;
	std::uint64_t v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
	if (ec != std::errc() || p != s.data() + s.size())
		return std::nullopt;
	return v;
}

std::optional<std::int64_t> parse_i64(std::string_view s)
{
	s = trim(s);
	if (s.empty() || s.front() == '+')
		return std::nullopt;
	std::int64_t v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
	if (ec != std::errc() || p != s.data() + s.size())
		return std::nullopt;
	return v;
}

std::optional<double> parse_double(std::string_view s)
{
	s = trim(s);
	if (s.empty() || s.size() > 64)
		return std::nullopt;
	// Only plain decimal notation: digits, one '.', optional leading '-'.
	std::size_t i = 0, digits = 0, dots = 0;
	if (s[0] == '-')
		i = 1;
	for (; i < s.size(); ++i) {
		if (s[i] >= '0' && s[i] <= '9')
			++digits;
		else if (s[i] == '.' && ++dots == 1)
			continue;
		else
			return std::nullopt;
	}
	if (digits == 0)
		return std::nullopt;
	double v = 0;
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
	if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
		return std::nullopt;
	return v;
}

std::vector<std::string_view> split_ws(std::string_view s)
{
	std::vector<std::string_view> out;
	out.reserve(8); // the lines split here have a handful of fields
	split_ws(s, out);
	return out;
}

void split_ws(std::string_view s, std::vector<std::string_view> &out)
{
	out.clear();
	std::size_t i = 0;
	while (i < s.size()) {
		while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
			++i;
		std::size_t b = i;
		while (i < s.size() && s[i] != ' ' && s[i] != '\t')
			++i;
		if (i > b)
			out.push_back(s.substr(b, i - b));
	}
}

std::vector<std::string_view> split_lines(std::string_view s)
{
	std::vector<std::string_view> out;
	out.reserve(static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) + 1);
	std::size_t b = 0;
	while (b < s.size()) {
		std::size_t e = s.find('\n', b);
		if (e == std::string_view::npos) {
			out.push_back(s.substr(b));
			break;
		}
		out.push_back(s.substr(b, e - b));
		b = e + 1;
	}
	return out;
}

std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view s)
{
	constexpr std::uint64_t kMaxCpu = 1u << 16;
	std::vector<unsigned> cpus;
	s = trim(s);
	if (s.empty())
		return cpus;
	std::size_t b = 0;
	while (b <= s.size()) {
		std::size_t e = s.find(',', b);
		if (e == std::string_view::npos)
			e = s.size();
		std::string_view part = s.substr(b, e - b);
		std::size_t dash = part.find('-');
		auto lo = parse_u64(part.substr(0, dash));
		auto hi = dash == std::string_view::npos ? lo : parse_u64(part.substr(dash + 1));
		if (!lo || !hi || *lo > *hi || *hi >= kMaxCpu)
			return std::nullopt;
		for (std::uint64_t c = *lo; c <= *hi; ++c)
			cpus.push_back(static_cast<unsigned>(c));
		b = e + 1;
	}
	return cpus;
}

std::string format_cpu_list(const std::vector<unsigned> &sorted_cpus)
{
	std::string out;
	for (std::size_t i = 0; i < sorted_cpus.size();) {
		std::size_t j = i;
		while (j + 1 < sorted_cpus.size() && sorted_cpus[j + 1] == sorted_cpus[j] + 1)
			++j;
		if (!out.empty())
			out += ',';
		out += std::to_string(sorted_cpus[i]);
		if (j > i)
			out += (j == i + 1 ? "," : "-") + std::to_string(sorted_cpus[j]);
		i = j + 1;
	}
	return out;
}

} // namespace hwsig
