// The unavailable notes' details in the log: /metrics carries only their
// codes (hwsig_unavailable{reason}), the words with live counts are here.
// A (metric, scope, code) is logged at info the first time hwsigd sees it,
// later at debug only when its words change: a disk that goes idle every
// other second says so once, not every second.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "hwsig/snapshot.h"

namespace hwsigd {

class NoteLog {
public:
	// Keys kept at most: past it the memory is dropped and notes are
	// logged at info again (VMs and disks come and go for months).
	static constexpr std::size_t kMaxKeys = 20000;

	// Logs the notes of one interval; any thread.
	void seen(const std::vector<hwsig::UnavailableNote> &notes);

private:
	std::mutex mu_;
	// "id\0scope\0code" -> a hash of the words last logged for it.
	std::unordered_map<std::string, std::size_t> logged_;
	std::string key_; // scratch
};

} // namespace hwsigd
