// Triggered dumps (SIGUSR1): written by a thread of their own into
// dump-dir, so that the loop keeps sampling while a large history is
// encoded; the oldest dumps go past dump-keep files or dump-max-mb.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config.h"
#include "history.h"
#include "hwsig/render_prometheus.h"

namespace hwsigd {

class Recorder {
public:
	Recorder(const Config &cfg, std::vector<std::string> claimed) : cfg_(cfg), claimed_(std::move(claimed)) {}
	~Recorder();
	Recorder(const Recorder &) = delete;
	Recorder &operator=(const Recorder &) = delete;

	// Starts a dump of `history` (a copy the recorder keeps) unless one is
	// still being written: then this trigger is counted as skipped.
	// triggered_mono_ns: the snapshot the trigger fired at (default: the
	// copy's newest), the dump's 'triggered' line.
	void trigger(History history, const std::string &why, std::optional<std::uint64_t> triggered_mono_ns = std::nullopt);
	// A trigger that writes no dump (a rule within dump-gap of the last).
	void skip(const std::string &why);
	// hwsig_dumps_total{trigger}, hwsig_dump_failures_total{trigger},
	// hwsig_dumps_skipped_total{trigger}.
	std::vector<hwsig::SelfMetric> self_metrics();
	// Waits for a dump being written (tests, shutdown).
	void wait();

private:
	void write(History history, std::string why, std::optional<std::uint64_t> triggered_mono_ns);
	void retain();

	const Config cfg_;
	const std::vector<std::string> claimed_;
	std::mutex mu_;
	std::thread worker_;
	bool busy_ = false;
	struct Counts {
		double written = 0, failed = 0, skipped = 0;
	};
	std::map<std::string, Counts> counts_;
};

} // namespace hwsigd
