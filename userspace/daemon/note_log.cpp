#include "note_log.h"

#include <functional>
#include <string_view>

#include "log.h"

namespace hwsigd {

void NoteLog::seen(const std::vector<hwsig::UnavailableNote> &notes)
{
	std::lock_guard lock(mu_);
	for (const auto &n : notes) {
		const std::string_view code = hwsig::code_name(n.code);
		key_.assign(n.id);
		key_ += '\0';
		key_ += n.scope;
		key_ += '\0';
		key_ += code;
		const std::size_t words = std::hash<std::string>{}(n.reason);
		Level level = Level::Debug;
		auto it = logged_.find(key_);
		if (it == logged_.end()) {
			if (logged_.size() >= kMaxKeys)
				logged_.clear();
			logged_.emplace(key_, words);
			level = Level::Info;
		} else if (it->second != words) {
			it->second = words;
		} else {
			continue; // said already, in these words
		}
		log(level, "unavailable: %s at %s (%.*s): %s", n.id.c_str(), n.scope.c_str(), static_cast<int>(code.size()),
		    code.data(), n.reason.c_str());
	}
}

} // namespace hwsigd
