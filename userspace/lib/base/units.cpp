#include "hwsig/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hwsig {

namespace {

// v rounded to three significant digits, as printf rounds it (so the
// digits shown and the value the prefix choice sees are the same).
double round3(double v)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.2e", v);
	return std::strtod(buf, nullptr);
}

// Decimal exponent of the already rounded, non-zero |v|.
int exponent10(double rounded)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.2e", std::fabs(rounded));
	const char *e = std::strchr(buf, 'e');
	return e ? std::atoi(e + 1) : 0;
}

} // namespace

std::string sig3(double v)
{
	if (!std::isfinite(v))
		return "-";
	const double r = round3(v);
	if (r == 0)
		return "0"; // also -0 and values that round to nothing
	const int e = exponent10(r);
	char buf[64];
	if (e < -5) {
		// Below 0.00001 the leading zeros would outnumber the digits.
		std::snprintf(buf, sizeof(buf), "%.2e", r);
		return buf;
	}
	std::snprintf(buf, sizeof(buf), "%.*f", e >= 2 ? 0 : 2 - e, r);
	return buf;
}

std::string sig3_grouped(double v)
{
	std::string s = sig3(v);
	if (s == "-" || s.find('e') != std::string::npos)
		return s;
	const std::size_t start = s[0] == '-' ? 1 : 0;
	std::size_t int_end = s.find('.');
	if (int_end == std::string::npos)
		int_end = s.size();
	for (std::size_t at = int_end; at > start + 3; at -= 3)
		s.insert(at - 3, ",");
	return s;
}

HumanValue human_bytes(double bytes, const std::string &suffix)
{
	static const char *const kPrefix[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (!std::isfinite(bytes))
		return {"-", std::string("B") + suffix};
	double x = bytes;
	std::size_t p = 0;
	// The prefix is chosen after rounding: never a four-digit number.
	while (std::fabs(round3(x)) >= 1000 && p + 1 < sizeof(kPrefix) / sizeof(kPrefix[0])) {
		x /= 1024;
		++p;
	}
	return {sig3(x), std::string(kPrefix[p]) + suffix};
}

HumanValue human_time_us(double us)
{
	if (!std::isfinite(us))
		return {"-", "µs"};
	static const char *const kUnit[] = {"ns", "µs", "ms", "s"};
	double x = us * 1000; // from ns up
	std::size_t u = 0;
	while (std::fabs(round3(x)) >= 1000 && u + 1 < 4) {
		x /= 1000;
		++u;
	}
	return {sig3(x), kUnit[u]};
}

HumanValue humanize(double value, const std::string &unit)
{
	// A share of time (seconds per second, e.g. the wait a VM spends
	// behind a culprit) reads as a percentage, like a ratio.
	if (unit == "ratio" || unit == "s/s")
		return {sig3(value * 100), "%"};
	if (unit == "%")
		return {sig3(value), "%"};
	if (unit == "B/s")
		return human_bytes(value, "/s");
	if (unit == "B")
		return human_bytes(value);
	if (unit == "us")
		return human_time_us(value);
	if (unit == "degC")
		return {sig3(value), "°C"};
	if (unit == "0..1")
		return {sig3(value), ""};
	if (unit == "descriptors")
		return {sig3(value), "desc"};
	if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0)
		return {sig3_grouped(value), unit};
	return {sig3(value), unit};
}

std::string human_text(double value, const std::string &unit)
{
	HumanValue h = humanize(value, unit);
	if (h.number == "-" || h.unit.empty())
		return h.number;
	return h.number + " " + h.unit;
}

std::size_t display_width(const std::string &s)
{
	std::size_t n = 0;
	for (unsigned char c : s)
		n += (c & 0xC0) != 0x80; // count lead bytes, not continuation bytes
	return n;
}

std::string pad(const std::string &s, std::size_t width, bool left)
{
	const std::size_t w = display_width(s);
	if (w >= width)
		return s;
	return left ? s + std::string(width - w, ' ') : std::string(width - w, ' ') + s;
}

} // namespace hwsig
