#include "hwsig/http_header_list.h"

#include <cstdlib>

namespace hwsig {

namespace {

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
		s.remove_suffix(1);
	return s;
}

std::string lower(std::string_view s)
{
	std::string o(s);
	for (char &c : o)
		if (c >= 'A' && c <= 'Z')
			c = static_cast<char>(c - 'A' + 'a');
	return o;
}

// The part of s before sep (all of s without one), and s past it.
std::string_view take(std::string_view &s, char sep)
{
	const std::size_t at = s.find(sep);
	std::string_view head = s.substr(0, at);
	s = at == std::string_view::npos ? std::string_view() : s.substr(at + 1);
	return head;
}

double weight(const std::string &text)
{
	char *end = nullptr;
	const double q = std::strtod(text.c_str(), &end);
	if (text.empty() || *end != '\0' || !(q >= 0 && q <= 1))
		return 0;
	return q;
}

} // namespace

std::vector<HeaderListItem> parse_header_list(std::string_view header)
{
	std::vector<HeaderListItem> out;
	while (!header.empty()) {
		std::string_view element = take(header, ',');
		HeaderListItem item;
		item.token = lower(trim(take(element, ';')));
		if (item.token.empty())
			continue;
		while (!element.empty()) {
			std::string_view param = take(element, ';');
			const std::size_t eq = param.find('=');
			if (eq == std::string_view::npos)
				continue;
			std::string name = lower(trim(param.substr(0, eq)));
			std::string_view value = trim(param.substr(eq + 1));
			if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
				value = value.substr(1, value.size() - 2);
			if (name == "q")
				item.q = weight(std::string(value));
			else
				item.params[std::move(name)] = std::string(value);
		}
		out.push_back(std::move(item));
	}
	return out;
}

} // namespace hwsig
