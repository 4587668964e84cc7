// sysfs format/ terms and event strings, parsed strictly, and the bits they
// set in perf_event_attr's config words (pmu_format.h).

#include "hwsig/pmu_format.h"

#include <algorithm>
#include <charconv>

#include "hwsig/parse.h"

namespace hwsig {

namespace {

void set_why(std::string *why, std::string text)
{
	if (why)
		*why = std::move(text);
}

std::optional<unsigned> parse_bit(std::string_view s)
{
	if (s.empty() || s.size() > 2 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
		return std::nullopt;
	unsigned v = 0;
	std::from_chars(s.data(), s.data() + s.size(), v);
	if (v > 63)
		return std::nullopt;
	return v;
}

bool valid_term_name(std::string_view s)
{
	return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
	});
}

// Comma-separated fields, empty ones kept (so that "a,,b" is refused by the
// field's own parser rather than silently skipped).
std::vector<std::string_view> split_commas(std::string_view s)
{
	std::vector<std::string_view> out;
	for (;;) {
		auto pos = s.find(',');
		out.push_back(s.substr(0, pos));
		if (pos == std::string_view::npos)
			return out;
		s.remove_prefix(pos + 1);
	}
}

} // namespace

std::optional<std::uint64_t> parse_term_value(std::string_view s)
{
	if (s.empty())
		return std::nullopt;
	int base = 10;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s.remove_prefix(2);
	}
	std::uint64_t v = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return v;
}

unsigned FormatField::width() const
{
	unsigned w = 0;
	for (auto [lo, hi] : ranges)
		w += hi - lo + 1;
	return w;
}

std::optional<FormatField> parse_format_spec(std::string_view spec, std::string *why)
{
	spec = trim(spec);
	auto colon = spec.find(':');
	if (colon == std::string_view::npos) {
		set_why(why, "no ':' in format \"" + std::string(spec) + "\"");
		return std::nullopt;
	}
	FormatField f;
	std::string_view word = spec.substr(0, colon);
	if (word == "config")
		f.word = 0;
	else if (word == "config1")
		f.word = 1;
	else if (word == "config2")
		f.word = 2;
	else {
		set_why(why, "unknown config word \"" + std::string(word) + "\"");
		return std::nullopt;
	}
	std::uint64_t used = 0;
	for (std::string_view part : split_commas(spec.substr(colon + 1))) {
		auto dash = part.find('-');
		auto lo = parse_bit(part.substr(0, dash));
		auto hi = dash == std::string_view::npos ? lo : parse_bit(part.substr(dash + 1));
		if (!lo || !hi || *lo > *hi) {
			set_why(why, "bad bit range \"" + std::string(part) + "\" (bits are 0..63, low-high)");
			return std::nullopt;
		}
		const std::uint64_t mask = (*hi == 63 ? ~0ull : ((1ull << (*hi + 1)) - 1)) & ~((1ull << *lo) - 1);
		if (used & mask) {
			set_why(why, "overlapping bit range \"" + std::string(part) + "\"");
			return std::nullopt;
		}
		used |= mask;
		f.ranges.emplace_back(*lo, *hi);
	}
	return f;
}

std::optional<std::vector<EventTerm>> parse_event_terms(std::string_view s, std::string *why)
{
	s = trim(s);
	std::vector<EventTerm> terms;
	if (s.empty()) {
		set_why(why, "empty event");
		return std::nullopt;
	}
	for (std::string_view part : split_commas(s)) {
		part = trim(part);
		auto eq = part.find('=');
		EventTerm t;
		std::string_view name = part.substr(0, eq);
		if (!valid_term_name(name)) {
			set_why(why, "bad term name \"" + std::string(name) + "\"");
			return std::nullopt;
		}
		t.name = std::string(name);
		if (eq != std::string_view::npos) {
			std::string_view value = part.substr(eq + 1);
			auto v = parse_term_value(value);
			if (!v) {
				set_why(why, "bad value \"" + std::string(value) + "\" for term " + t.name);
				return std::nullopt;
			}
			t.value = *v;
		}
		terms.push_back(std::move(t));
	}
	return terms;
}

bool apply_format(const FormatField &f, std::uint64_t value, PerfEventSpec &spec)
{
	const unsigned w = f.width();
	if (w < 64 && (value >> w) != 0)
		return false;
	std::uint64_t *word = f.word == 0 ? &spec.config : f.word == 1 ? &spec.config1 : &spec.config2;
	for (auto [lo, hi] : f.ranges) {
		const unsigned n = hi - lo + 1;
		const std::uint64_t part = n == 64 ? value : value & ((1ull << n) - 1);
		*word |= part << lo;
		value = n == 64 ? 0 : value >> n;
	}
	return true;
}

} // namespace hwsig
