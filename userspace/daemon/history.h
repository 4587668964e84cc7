// The last N intervals, in memory and bounded: what the flight recorder
// dumps and replays. Values are kept against an interned (id, scope) table
// so that an interval costs 12 bytes a metric, not a map of strings.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hwsig/derive.h"

namespace hwsigd {

class History {
public:
	struct Key {
		std::string id, scope;
	};
	struct Entry {
		std::uint64_t realtime_ns = 0; // end of the interval
		double interval_s = 0;
		std::vector<std::pair<std::uint32_t, double>> values; // key index, value
	};

	explicit History(std::size_t capacity) : capacity_(capacity) {}
	// keep_cpu: keep cpu:N scopes too (per-CPU export on).
	void add(const hwsig::Interval &iv, bool keep_cpu);
	void set_capacity(std::size_t capacity);
	std::size_t size() const { return entries_.size(); }
	std::size_t capacity() const { return capacity_; }
	const std::deque<Entry> &entries() const { return entries_; }
	const Key &key(std::uint32_t index) const { return keys_[index]; }
	std::size_t key_count() const { return keys_.size(); }

private:
	std::uint32_t intern(const std::string &id, const std::string &scope);
	void compact_keys();

	std::size_t capacity_;
	std::deque<Entry> entries_;
	std::vector<Key> keys_;
	std::unordered_map<std::string, std::uint32_t> index_; // id + '\0' + scope
};

// The local socket's answer to "history": a version line, then per
// interval "I <TAB> realtime_ns <TAB> interval_s" and its "V <TAB> id <TAB>
// scope <TAB> value" lines, oldest first, then "end".
std::string encode_history(const History &h);

} // namespace hwsigd
