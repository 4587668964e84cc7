// The last N snapshots, in memory and bounded: what the flight recorder
// dumps and replays. A snapshot is kept as it was taken (counters, gauges,
// histograms, unavailable notes), not as derived values: deriving costs
// more than keeping (hwsigd derives only when an answer needs it), and a
// replay derives exactly what live derivation did. Names, scopes and notes
// are interned, so that a kept value costs 24 bytes (a multiplexed PMU
// counter 32 more, for its raw count and times) and a histogram its
// non-empty slots, not maps of strings.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hwsig/derive.h"
#include "hwsig/snapshot.h"
#include "hwsig/vm.h"

namespace hwsigd {

class History {
public:
	// capacity: intervals, so capacity + 1 snapshots are kept.
	explicit History(std::size_t capacity) : capacity_(capacity) {}
	// keep_cpu: keep cpu:N scopes too (per-CPU export on). Without, a
	// 256-CPU host's per-CPU series would be most of the memory.
	void add(const hwsig::Snapshot &s, const std::vector<hwsig::Vm> &vms, bool keep_cpu);
	void set_capacity(std::size_t capacity);
	// Intervals held (snapshots - 1).
	std::size_t size() const { return entries_.empty() ? 0 : entries_.size() - 1; }
	std::size_t capacity() const { return capacity_; }
	std::size_t snapshots() const { return entries_.size(); }
	// The i-th kept snapshot, oldest first, rebuilt.
	hwsig::Snapshot snapshot(std::size_t i) const;
	const std::vector<hwsig::Vm> &vms(std::size_t i) const { return *entries_.at(i).vms; }
	// The VMs of the latest snapshot, shared with it (nullptr when empty).
	std::shared_ptr<const std::vector<hwsig::Vm>> latest_vms() const
	{
		return entries_.empty() ? nullptr : entries_.back().vms;
	}
	std::uint64_t mono_ns(std::size_t i) const { return entries_.at(i).mono_ns; }
	std::size_t key_count() const { return keys_.size(); }

private:
	// A value's key with kGaugeBit set for a gauge (keys stay far below
	// 2^31: compact_keys() renumbers them above kCompactAbove).
	static constexpr std::uint32_t kGaugeBit = 1u << 31;
	// The keys of an entry's values (or notes), in order: shared by the
	// entries whose snapshots had the same series (every entry of a steady
	// host), so that an entry holds 8 bytes per value, not 24.
	using Keys = std::vector<std::uint32_t>;
	using NoteKeys = std::vector<std::pair<std::uint32_t, hwsig::UnavailableCode>>;
	struct Hist {
		std::uint32_t key = 0;
		hwsig::Histogram::Layout layout = hwsig::Histogram::Layout::Log2;
		std::uint32_t slots = 0; // counts.size()
		// Its non-empty slots: Entry::used[first, first + used).
		std::uint32_t first = 0, used = 0;
	};
	struct Entry {
		std::uint64_t mono_ns = 0, realtime_ns = 0;
		std::shared_ptr<const Keys> keys; // of values, one each
		std::vector<double> values;
		// The few multiplexed (PMU) counters': (index in values, scaling).
		std::vector<std::pair<std::uint32_t, hwsig::Multiplexing>> muxes;
		std::vector<Hist> hists;
		// Every histogram's non-empty slots (slot, count), one after the
		// other: one vector per snapshot, not one per histogram.
		std::vector<std::pair<std::uint32_t, std::uint64_t>> used;
		// Keys of "id\0scope\0reason", with the note's code: shared as keys.
		std::shared_ptr<const NoteKeys> notes;
		std::vector<std::uint32_t> from_zero; // keys of series names
		// Each series' stamp (Snapshot::read_ns): a rate's time is its
		// own source's, which the snapshot's mono_ns is not.
		std::vector<std::pair<std::uint32_t, std::uint64_t>> read_ns; // series name key, stamp
		// The VMs seen with it: shared with the entry before while the
		// list does not change (it changes when a VM starts or stops).
		std::shared_ptr<const std::vector<hwsig::Vm>> vms;
	};

	// Strings joined with '\0': "name\0scope\0source", "id\0scope\0reason",
	// or a bare series name. Joined in one reused buffer and looked up as
	// a view: no allocation for a key already held.
	std::uint32_t intern(std::string_view name);
	std::uint32_t intern3(std::string_view a, std::string_view b, std::string_view c);
	std::uint32_t intern_scratch(); // the key in scratch_
	const std::string &text(std::uint32_t key) const { return keys_[key]; }
	void trim();
	void compact_keys();

	std::size_t capacity_;
	std::deque<Entry> entries_;
	struct ViewHash {
		using is_transparent = void;
		std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
	};
	// The key of each scope of one series, in the order the snapshot lists
	// them: snapshots have the same shape from one interval to the next, so
	// a scope found where it was last time is its key without joining and
	// hashing "name\0scope\0source" (10,000 of them beside 200 VMs).
	struct SeriesKeys {
		std::string source;
		bool keep_cpu = false;
		std::vector<std::pair<std::string, std::uint32_t>> scopes;
		// Snapshot shapes (Series::shape) known to have exactly these
		// scopes: a series of one of them takes its keys by position,
		// without comparing a scope (10,000 of them beside 200 VMs).
		// Four: the daemon's snapshots rotate among three storages (the
		// one filled, the previous one, a spare), and a scrape may hold one.
		static constexpr std::size_t kShapes = 4;
		std::uint64_t shapes[kShapes] = {};
		bool any_cpu = false; // per-CPU scopes among them (dropped without keep_cpu)
	};
	enum Kind { kCounter, kGauge, kHistogram, kKinds };
	// One series of a snapshot: begin_series(), series_key() for each of
	// its scopes kept (at counting from 0), end_series() with how many.
	void begin_series(Kind kind, const std::string &name, const std::string &source, std::uint64_t shape,
			  bool keep_cpu);
	std::uint32_t series_key(std::size_t at, const std::string &scope);
	bool drop_scope(const std::string &scope); // a per-CPU scope not kept
	void end_series(std::size_t count);

	std::vector<std::string> keys_;
	std::unordered_map<std::string, std::uint32_t, ViewHash, std::equal_to<>> index_;
	std::string scratch_;
	std::unordered_map<std::string, SeriesKeys> series_keys_[kKinds]; // cleared when keys are renumbered
	// The same for the notes, by their place in the snapshot's list: the
	// same notes come back every interval (1,900 beside 200 VMs on a host
	// without a PMU). Cleared when keys are renumbered.
	struct NoteKey {
		std::string id, scope, reason;
		std::uint32_t key = 0;
	};
	std::vector<NoteKey> note_keys_;
	std::uint32_t note_key(std::size_t at, const hwsig::UnavailableNote &n);
	Keys keys_scratch_;          // add()'s: shared when equal to the last entry's
	NoteKeys notes_scratch_;
	SeriesKeys *series_ = nullptr; // the series add() is at
	const std::string *series_name_ = nullptr;
	std::uint64_t series_shape_ = 0;
	bool shape_known_ = false;   // series_'s keys hold for series_shape_
	bool scopes_changed_ = false; // series_key() rewrote one of series_'s scopes
	bool keep_cpu_ = false;
	bool dropped_cpu_ = false; // drop_scope() dropped one of series_'s scopes
};

// The local socket's answer to "history": a version line, then per
// interval "I <TAB> realtime_ns <TAB> interval_s" and its "V <TAB> id <TAB>
// scope <TAB> value" lines, oldest first, then "end". Intervals are
// derived here, from consecutive kept snapshots; claimed: the sources'
// metric ids (as for derive()); keep_cpu as for add().
std::string encode_history(const History &h, const std::vector<std::string> &claimed, bool keep_cpu);

} // namespace hwsigd
