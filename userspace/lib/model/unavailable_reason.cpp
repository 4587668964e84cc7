#include "hwsig/unavailable_reason.h"

#include <array>
#include <cerrno>
#include <utility>

namespace hwsig {

namespace {

using enum UnavailableCode;

constexpr std::array<std::pair<UnavailableCode, std::string_view>, 10> kNames = {{
	{disabled, "disabled"},
	{unsupported, "unsupported"},
	{permission, "permission"},
	{read_error, "read_error"},
	{malformed, "malformed"},
	{capacity, "capacity"},
	{no_target, "no_target"},
	{no_events, "no_events"},
	{incomplete, "incomplete"},
	{unknown, "unknown"},
}};

} // namespace

std::string_view code_name(UnavailableCode code)
{
	for (const auto &[c, name] : kNames)
		if (c == code)
			return name;
	return "unknown";
}

std::optional<UnavailableCode> parse_unavailable_code(std::string_view name)
{
	for (const auto &[c, n] : kNames)
		if (n == name)
			return c;
	return std::nullopt;
}

bool transient(UnavailableCode code)
{
	return code == no_events || code == incomplete;
}

bool alertable(UnavailableCode code)
{
	return !transient(code) && code != unknown;
}

UnavailableCode errno_code(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return permission;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return unsupported;
	default:
		return read_error;
	}
}

} // namespace hwsig
