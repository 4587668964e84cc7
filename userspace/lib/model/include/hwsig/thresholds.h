// The verdicts' thresholds: built-in defaults (each with where it comes
// from, Documentation/thresholds.rst) that a file can change.
//
// File format, one setting a line:   key = value   # comment
// Values are in the unit the key names (cpu.runq_p99_ms: milliseconds);
// blank lines and '#' comments are ignored. An unknown key, a value that
// is not a number or is out of the key's range, a key given twice, or a
// line without '=' is refused with the file, line and key in the message.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace hwsig {

struct ThresholdDef {
	const char *key;
	double value;   // default, in the key's unit
	double min, max; // accepted range, inclusive
	const char *unit;   // the key's unit, for the documentation and errors
	double to_base;     // key's unit -> the metric's base unit (ms -> us: 1000)
	const char *source; // where the default comes from (one line)
};

// Every key, in documentation order.
const std::vector<ThresholdDef> &threshold_defs();

class ThresholdError : public std::runtime_error {
public:
	using std::runtime_error::runtime_error;
};

class Thresholds {
public:
	Thresholds(); // the defaults
	// In the metric's base unit (ratio, us, B/s, ...). Throws
	// std::out_of_range for a key not in threshold_defs() (a bug).
	double base(const std::string &key) const;
	// As the user wrote it (or the default), in the key's unit.
	double user(const std::string &key) const;
	void set(const std::string &key, double user_value);

private:
	std::map<std::string, double> user_;
};

// Parses a thresholds file's text over the defaults. origin names the file
// in errors ("/etc/hwsig/thresholds.conf:7: ..."). Throws ThresholdError.
Thresholds parse_thresholds(const std::string &text, const std::string &origin);

} // namespace hwsig
