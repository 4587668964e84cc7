// The exposition of one snapshot as data: families of series, each a value
// or a histogram's slots, before any wire format. render_prometheus.cpp
// decides what is exported (Documentation/prometheus.rst); the encoders
// (text 0.0.4 and OpenMetrics here) only spell it, so every format carries
// the same series with the same counts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/render_prometheus.h"

namespace hwsig::expo {

enum class Type { Counter, Gauge, Histogram, Info };

using Labels = std::vector<std::pair<std::string, std::string>>;

// The slots of every histogram of one family, in the exported unit.
struct HistogramBounds {
	std::vector<double> lower;        // per slot: the smallest value it holds
	std::vector<double> le;           // per slot: its classic bucket bound; +Inf for an open last slot
	std::vector<std::string> le_text; // the finite bounds as printed
	std::vector<double> mid;          // per slot: the value its counts weigh in the _sum estimate
	std::vector<bool> coarse;         // per slot: its bound is one of the few a coarse histogram keeps
};

struct Series {
	Labels labels;
	std::string label_text; // labels as the text formats print them
	double value = 0;       // counters, gauges, infos
	// Histograms: per-slot counts over bounds, and the _sum estimate.
	std::shared_ptr<const HistogramBounds> bounds;
	std::vector<std::uint64_t> counts;
	double sum = 0;
	bool coarse = false; // the text formats print only the coarse bounds
	std::uint64_t count() const;
};

struct Family {
	Type type = Type::Gauge;
	std::string help;
	std::map<std::string, Series> series; // by sort key: labels in numeric order
};

class Exposition {
public:
	// name: the 0.0.4 name (a counter's ends in _total, an info's in _info).
	// The first type given to a name wins; a sample of another type, or a
	// second sample with the same labels, is dropped.
	void sample(const std::string &name, Type type, std::string_view help, Labels labels, double value);
	void histogram(const std::string &name, std::string_view help, Labels labels,
		       const std::shared_ptr<const HistogramBounds> &bounds, const std::vector<std::uint64_t> &counts,
		       bool coarse);
	const std::map<std::string, Family> &families() const { return families_; }

private:
	Series *add(const std::string &name, Type type, std::string_view help, Labels labels);
	std::map<std::string, Family> families_;
};

// The text formats: 0.0.4 or OpenMetrics 1.0.
std::string encode_text(const Exposition &ex, ExpositionFormat fmt);

// Prometheus's protobuf format: length-delimited io.prometheus.client
// MetricFamily messages, every histogram both classic (every slot) and
// native (schema 0). exposition_protobuf.cpp.
std::string encode_protobuf(const Exposition &ex);

// s with every byte that is not valid UTF-8 replaced by U+FFFD, as the text
// formats print label values and HELP.
std::string valid_utf8(std::string_view s);

// A metric or label name the formats accept ([a-zA-Z_:][a-zA-Z0-9_:]*, no
// colon in a label name).
bool valid_name(std::string_view n, bool metric);

bool ends_with(std::string_view s, std::string_view suffix);

// A sample value as the text formats print it: whole numbers in full (not
// 1e+06), NaN, +Inf, -Inf.
std::string number_text(double v);

} // namespace hwsig::expo
