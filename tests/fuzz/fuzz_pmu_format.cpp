// libFuzzer: the sysfs format-spec and event-string parsers, and their
// composition through apply_format. Input: "<format spec>\n<event terms>".
// Checks invariants rather than only surviving: a parsed spec's ranges are
// within 0..63, and an applied value only sets bits inside the spec's ranges.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hwsig/pmu_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::string_view in(reinterpret_cast<const char *>(data), size);
	auto nl = in.find('\n');
	std::string_view spec = in.substr(0, nl);
	std::string_view terms = nl == std::string_view::npos ? std::string_view{} : in.substr(nl + 1);

	std::string why;
	auto f = hwsig::parse_format_spec(spec, &why);
	if (!f && why.empty())
		std::abort(); // every refusal says why
	std::uint64_t allowed = 0;
	if (f) {
		if (f->word < 0 || f->word > 2 || f->ranges.empty())
			std::abort();
		for (auto [lo, hi] : f->ranges) {
			if (lo > hi || hi > 63)
				std::abort();
			for (unsigned b = lo; b <= hi; b++)
				allowed |= 1ull << b;
		}
	}
	auto t = hwsig::parse_event_terms(terms, &why);
	if (t && f) {
		for (const auto &term : *t) {
			hwsig::PerfEventSpec s;
			if (hwsig::apply_format(*f, term.value, s)) {
				std::uint64_t word = f->word == 0 ? s.config : f->word == 1 ? s.config1 : s.config2;
				if (word & ~allowed)
					std::abort();
				if (__builtin_popcountll(word) != __builtin_popcountll(term.value))
					std::abort(); // every bit of the value lands somewhere, once
			}
		}
	}
	return 0;
}
