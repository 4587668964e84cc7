#include "hwsig/docs.h"
#include "hwsig/dump_rule.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "hwsig/catalog.h"
#include "hwsig/error.h"

namespace hwsig {

namespace {

class Cursor {
public:
	explicit Cursor(std::string_view s) : s_(s) {}
	void skip_space()
	{
		while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t'))
			++pos_;
	}
	bool done()
	{
		skip_space();
		return pos_ >= s_.size();
	}
	char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
	bool take(char c)
	{
		if (peek() != c)
			return false;
		++pos_;
		return true;
	}
	[[noreturn]] void fail(const std::string &what) const
	{
		throw Error("column " + std::to_string(pos_ + 1) + ": " + what);
	}
	// [a-z0-9_.]+
	std::string id()
	{
		skip_space();
		std::size_t start = pos_;
		while (pos_ < s_.size() && (std::islower(static_cast<unsigned char>(s_[pos_])) ||
					    std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' ||
					    s_[pos_] == '.'))
			++pos_;
		if (pos_ == start)
			fail("expected a metric id (e.g. psi.cpu_some_pct)");
		return std::string(s_.substr(start, pos_ - start));
	}
	std::string until(char end)
	{
		std::size_t start = pos_;
		while (pos_ < s_.size() && s_[pos_] != end)
			++pos_;
		if (pos_ >= s_.size())
			fail(std::string("expected '") + end + "'");
		std::string out(s_.substr(start, pos_ - start));
		++pos_;
		return out;
	}
	double number()
	{
		skip_space();
		double v = 0;
		std::size_t end = pos_;
		while (end < s_.size() && s_[end] != ' ' && s_[end] != '\t')
			++end;
		auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + end, v);
		if (ec != std::errc() || p != s_.data() + end || end == pos_ || !std::isfinite(v))
			fail("expected a number");
		pos_ = end;
		return v;
	}
	std::string_view word()
	{
		skip_space();
		std::size_t start = pos_;
		while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_])))
			++pos_;
		return s_.substr(start, pos_ - start);
	}
	std::size_t pos() const { return pos_; }
	void seek(std::size_t p) { pos_ = p; }

private:
	std::string_view s_;
	std::size_t pos_ = 0;
};

bool scope_matches(const std::string &pattern, const std::string &scope)
{
	if (!pattern.empty() && pattern.back() == '*')
		return scope.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
	return scope == pattern;
}

} // namespace

DumpRule DumpRule::parse(std::string_view text)
{
	DumpRule r;
	r.text_ = std::string(text);
	Cursor c(text);
	const std::size_t id_at = (c.skip_space(), c.pos());
	r.id_ = c.id();
	bool known = false;
	for (const auto &def : catalog())
		known = known || def.id == r.id_;
	if (!known) {
		c.seek(id_at);
		c.fail("'" + r.id_ + "' is not a metric id of the catalog (" HWSIG_DOC("metrics.rst") ")");
	}
	if (c.take('{')) {
		r.scope_ = c.until('}');
		if (r.scope_.empty() || r.scope_.find('*') < r.scope_.size() - 1)
			c.fail("a scope is 'system', 'vm:NAME', 'dev:*'...: '*' only at its end");
	}
	c.skip_space();
	if (c.take('>'))
		r.greater_ = true;
	else if (c.take('<'))
		r.greater_ = false;
	else
		c.fail("expected '>', '>=', '<' or '<='");
	r.or_equal_ = c.take('=');
	r.threshold_ = c.number();
	if (!c.done()) {
		const std::size_t at = c.pos();
		if (c.word() != "for") {
			c.seek(at);
			c.fail("expected 'for N' or the end of the rule");
		}
		const std::size_t n_at = (c.skip_space(), c.pos());
		double n = c.number();
		if (n < 1 || n > 100000 || n != std::floor(n)) {
			c.seek(n_at);
			c.fail("'for' takes a whole number of intervals, 1 .. 100000");
		}
		r.for_ = static_cast<unsigned>(n);
		c.word(); // an optional "intervals"
		if (!c.done())
			c.fail("nothing may follow 'for N [intervals]'");
	}
	return r;
}

bool DumpRule::holds(const Interval &iv) const
{
	for (const auto &m : iv.metrics) {
		if (m.id != id_ || !scope_matches(scope_, m.scope))
			continue;
		const bool pass = greater_ ? (or_equal_ ? m.value >= threshold_ : m.value > threshold_)
					   : (or_equal_ ? m.value <= threshold_ : m.value < threshold_);
		if (pass)
			return true;
	}
	return false;
}

bool DumpRule::observe(const Interval &iv)
{
	const bool h = holds(iv);
	if (armed_) {
		run_ = h ? run_ + 1 : 0;
		if (run_ >= for_) {
			armed_ = false;
			run_ = 0;
			return true;
		}
		return false;
	}
	run_ = h ? 0 : run_ + 1;
	if (run_ >= for_) {
		armed_ = true;
		run_ = 0;
	}
	return false;
}

} // namespace hwsig
