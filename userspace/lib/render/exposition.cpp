// The exposition as data, and its text encoders (0.0.4 and OpenMetrics
// 1.0): escaping, ordering, and the coarse buckets of per-VM, per-device
// and per-queue histograms (Documentation/prometheus.rst, "Histograms").
#include "exposition.h"

#include <charconv>
#include <cmath>

namespace hwsig::expo {

namespace {

// --- formatting ------------------------------------------------------------

std::string number(double v)
{
	if (std::isnan(v))
		return "NaN";
	if (std::isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	char buf[64];
	// Whole numbers (counters, bucket counts) in full, not as 1e+06.
	if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
		auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(v));
		return std::string(buf, r.ptr);
	}
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return std::string(buf, r.ptr);
}

// Length of the valid UTF-8 sequence at s[i], 0 if invalid (overlong,
// surrogate, above U+10FFFF or truncated).
std::size_t utf8_length(std::string_view s, std::size_t i)
{
	const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
	const unsigned char c = b(i);
	if (c < 0x80)
		return 1;
	std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
	if (n == 0 || c > 0xF4 || i + n > s.size())
		return 0;
	for (std::size_t k = 1; k < n; ++k)
		if ((b(i + k) & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0) || (c == 0xF0 && b(i + 1) < 0x90) ||
	    (c == 0xF4 && b(i + 1) >= 0x90))
		return 0;
	return n;
}

// Label values and HELP text: the escapes of the format, and every byte
// that is not valid UTF-8 (a VM name from a command line, a sensor label)
// as U+FFFD, because both formats require UTF-8 and Prometheus rejects the
// whole scrape otherwise.
void escape_into(std::string &out, std::string_view s, bool quote)
{
	for (std::size_t i = 0; i < s.size(); ++i) {
		const char c = s[i];
		if (static_cast<unsigned char>(c) >= 0x80) {
			std::size_t n = utf8_length(s, i);
			if (n == 0) {
				out += "\xEF\xBF\xBD";
			} else {
				out.append(s, i, n);
				i += n - 1;
			}
			continue;
		}
		switch (c) {
		case '\\': out += "\\\\"; break;
		case '\n': out += "\\n"; break;
		case '"':
			if (quote) {
				out += "\\\"";
				break;
			}
			[[fallthrough]];
		default: out.push_back(c);
		}
	}
}

std::string label_text(const Labels &labels)
{
	std::string out;
	for (const auto &[k, v] : labels) {
		if (!out.empty())
			out += ',';
		out += k;
		out += "=\"";
		escape_into(out, v, true);
		out += '"';
	}
	return out;
}

// Sort key of a series: its label text with every run of digits left-padded,
// so cpu="2" sorts before cpu="10".
std::string sort_key(const std::string &text)
{
	// The padded text, then the text itself: cpu="07" and cpu="7" stay apart.
	std::string key;
	for (std::size_t i = 0; i < text.size();) {
		if (text[i] >= '0' && text[i] <= '9') {
			std::size_t j = i;
			while (j < text.size() && text[j] >= '0' && text[j] <= '9')
				++j;
			if (j - i < 12)
				key.append(12 - (j - i), '0');
			key.append(text, i, j - i);
			i = j;
		} else {
			key.push_back(text[i++]);
		}
	}
	key.push_back('\0');
	key += text;
	return key;
}

} // namespace

std::string number_text(double v)
{
	return number(v);
}

std::string valid_utf8(std::string_view s)
{
	std::string out;
	out.reserve(s.size());
	for (std::size_t i = 0; i < s.size();) {
		if (std::size_t n = utf8_length(s, i)) {
			out.append(s, i, n);
			i += n;
		} else {
			out += "\xEF\xBF\xBD";
			++i;
		}
	}
	return out;
}

bool valid_name(std::string_view n, bool metric)
{
	if (n.empty())
		return false;
	for (std::size_t i = 0; i < n.size(); ++i) {
		char c = n[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (metric && c == ':') ||
			  (i > 0 && c >= '0' && c <= '9');
		if (!ok)
			return false;
	}
	return true;
}

bool ends_with(std::string_view s, std::string_view suffix)
{
	return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::uint64_t Series::count() const
{
	std::uint64_t n = 0;
	for (std::uint64_t c : counts)
		n += c;
	return n;
}

Series *Exposition::add(const std::string &name, Type type, std::string_view help, Labels labels)
{
	auto [fit, inserted] = families_.try_emplace(name);
	Family &f = fit->second;
	if (inserted) {
		f.type = type;
		f.help = help;
	} else if (f.type != type) {
		return nullptr; // one name, two types: the first one wins
	}
	std::string text = label_text(labels);
	auto [sit, added] = f.series.try_emplace(sort_key(text));
	if (!added)
		return nullptr; // no duplicate series
	sit->second.labels = std::move(labels);
	sit->second.label_text = std::move(text);
	return &sit->second;
}

void Exposition::sample(const std::string &name, Type type, std::string_view help, Labels labels, double value)
{
	if (Series *s = add(name, type, help, std::move(labels)))
		s->value = value;
}

void Exposition::histogram(const std::string &name, std::string_view help, Labels labels,
			   const std::shared_ptr<const HistogramBounds> &bounds, const std::vector<std::uint64_t> &counts,
			   bool coarse)
{
	Series *s = add(name, Type::Histogram, help, std::move(labels));
	if (!s)
		return;
	s->bounds = bounds;
	s->counts.assign(bounds->lower.size(), 0);
	for (std::size_t i = 0; i < s->counts.size() && i < counts.size(); ++i) {
		s->counts[i] = counts[i];
		s->sum += static_cast<double>(counts[i]) * bounds->mid[i];
	}
	s->coarse = coarse;
}

namespace {

void histogram_text(std::string &out, const std::string &name, const Series &s)
{
	const HistogramBounds &b = *s.bounds;
	const std::string &lt = s.label_text;
	const std::string prefix = name + "_bucket{" + lt + (lt.empty() ? "" : ",") + "le=\"";
	std::uint64_t cum = 0;
	for (std::size_t i = 0; i < s.counts.size(); ++i) {
		cum += s.counts[i];
		if (i < b.le_text.size() && (!s.coarse || b.coarse[i])) {
			out += prefix;
			out += b.le_text[i];
			out += "\"} ";
			out += std::to_string(cum);
			out += '\n';
		}
	}
	const std::string braces = lt.empty() ? "" : "{" + lt + "}";
	out += prefix + "+Inf\"} " + std::to_string(cum) + "\n";
	out += name + "_sum" + braces + " " + number(s.sum) + "\n";
	out += name + "_count" + braces + " " + std::to_string(cum) + "\n";
}

} // namespace

std::string encode_text(const Exposition &ex, ExpositionFormat fmt)
{
	const bool om = fmt == ExpositionFormat::OpenMetrics100;
	std::string out;
	std::size_t size = 0;
	for (const auto &[name, f] : ex.families())
		for (const auto &[k, s] : f.series)
			size += (name.size() + s.label_text.size() + 24) * (s.bounds ? s.counts.size() + 3 : 1);
	out.reserve(size + ex.families().size() * 160 + 16);
	for (const auto &[name, f] : ex.families()) {
		if (f.series.empty())
			continue;
		std::string fam = name;
		if (om && f.type == Type::Counter && ends_with(fam, "_total"))
			fam.resize(fam.size() - 6);
		if (om && f.type == Type::Info && ends_with(fam, "_info"))
			fam.resize(fam.size() - 5);
		const char *type = "gauge";
		switch (f.type) {
		case Type::Counter: type = "counter"; break;
		case Type::Histogram: type = "histogram"; break;
		case Type::Info: type = om ? "info" : "gauge"; break;
		case Type::Gauge: break;
		}
		out += "# HELP " + fam + " ";
		escape_into(out, f.help, om);
		out += "\n# TYPE " + fam + " " + type + "\n";
		if (om) {
			for (const char *unit : {"seconds", "bytes", "celsius", "ratio"})
				if (ends_with(fam, std::string("_") + unit)) {
					out += "# UNIT " + fam + " " + unit + "\n";
					break;
				}
		}
		for (const auto &[k, s] : f.series) {
			if (s.bounds) {
				histogram_text(out, name, s);
				continue;
			}
			out += name;
			if (!s.label_text.empty())
				out += "{" + s.label_text + "}";
			out += ' ';
			out += number(s.value);
			out += '\n';
		}
	}
	if (om)
		out += "# EOF\n";
	return out;
}

} // namespace hwsig::expo
