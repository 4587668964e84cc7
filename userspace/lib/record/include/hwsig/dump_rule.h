// Threshold rules that trigger a dump (hwsigd's dump-rule key):
//   psi.cpu_some_pct > 20 for 3
//   sched.runq_wait_p99_us{vm:*} > 5000
//   thermal.headroom_c{zone:x86_pkg_temp} < 5 for 2
// A rule holds when some matching (id, scope) value of an interval passes
// the threshold; it fires after `for` consecutive intervals that hold, and
// fires again only after as many consecutive intervals that do not
// (hysteresis). The grammar is in Documentation/hwsigd.rst.
#pragma once

#include <string>
#include <string_view>

#include "hwsig/derive.h"

namespace hwsig {

class DumpRule {
public:
	// Throws Error: "column N: what was expected" (1-based, into text).
	static DumpRule parse(std::string_view text);

	// Feeds one interval; true when the rule fires on it.
	bool observe(const Interval &iv);
	const std::string &text() const { return text_; }
	bool armed() const { return armed_; }

private:
	bool holds(const Interval &iv) const;

	std::string text_;
	std::string id_;
	std::string scope_ = "system"; // exact, or a prefix ending in '*'
	bool greater_ = true;
	bool or_equal_ = false;
	double threshold_ = 0;
	unsigned for_ = 1;
	unsigned run_ = 0;  // consecutive intervals that held (armed) or did not (disarmed)
	bool armed_ = true; // may fire; after firing, re-armed by `for` quiet intervals
};

} // namespace hwsig
