// What hwsigd cannot measure, in the log: at start, and whenever it
// changes, one line per reason (code and words) naming the metrics it
// keeps from them, at warning for a layer the host lacks or refuses
// (journalctl -u hwsigd -p warning lists them) and at info for what the
// configuration turned off or has nothing to measure yet. When a reason
// goes, one info line says the metrics are measured again.
//
// Fed every snapshot with the sources' notes: the work per snapshot is a
// comparison with the last ones, and one hash over them when they differ
// (a transient note came or went); lines are built only when the hash
// changes.
// Transient notes (an idle disk) are left to NoteLog.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hwsig/snapshot.h"

namespace hwsigd {

class CannotMeasureLog {
public:
	// One snapshot's notes; the sampling thread only.
	void seen(const std::vector<hwsig::UnavailableNote> &notes);

	// The lines a set of notes gives, as logged (for the tests): each
	// reason with its level, "cannot measure ...".
	struct Line {
		bool warning = false;
		std::string text;
	};
	using Reason = std::pair<hwsig::UnavailableCode, std::string>;
	struct Kept {
		std::set<std::string> ids;
		std::set<std::string> scopes;
	};
	static std::map<Reason, Kept> group(const std::vector<hwsig::UnavailableNote> &notes);
	static Line line(const Reason &reason, const Kept &kept);

private:
	bool started_ = false;
	std::vector<hwsig::UnavailableNote> last_; // the notes seen last
	std::size_t hash_ = 0;
	std::map<Reason, Kept> said_;
};

} // namespace hwsigd
