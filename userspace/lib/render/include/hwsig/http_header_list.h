// The comma-separated lists of HTTP's content negotiation (Accept,
// Accept-Encoding: RFC 9110, 12.5): each element a token (a media range or
// a content coding) with ;name=value parameters and a weight q.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hwsig {

struct HeaderListItem {
	std::string token;                         // lower case: "text/plain", "gzip", "*/*"
	std::map<std::string, std::string> params; // names in lower case, values unquoted as sent
	double q = 1;                              // 0: "not acceptable"
};

// Elements without a token are dropped; a q that is not a number in [0, 1]
// counts as 0 (what cannot be read is not asked for).
std::vector<HeaderListItem> parse_header_list(std::string_view header);

} // namespace hwsig
