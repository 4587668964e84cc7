// The exposition in Prometheus's protobuf format (prometheus_metrics.proto,
// length-delimited MetricFamily messages), where every histogram is native
// too: Documentation/prometheus.rst, "Formats" and "Native histograms".
#include <algorithm>
#include <cmath>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <map>

#include "exposition.h"
#include "prometheus_metrics.pb.h"

namespace hwsig::expo {

namespace {

namespace pb = io::prometheus::client;

// Prometheus 2.42 takes a histogram without native buckets, zero count or
// zero threshold for a classic one (its isNativeHistogram() predates the
// no-op span): a zero bucket that holds exactly 0 (a queue depth) gets the
// Go client's default threshold, 2^-128, below anything hwsig counts, so
// that an empty histogram is native from its first scrape on, not classic
// until it fills.
constexpr double kLeastZeroThreshold = 0x1p-128;

// The schema-0 bucket of x > 0: bucket i holds (2^(i-1), 2^i], so
// i = ceil(log2(x)), computed exactly.
//
// A slot [L, 2L) goes where its lower bound L lands. In the byte
// histograms L is a power of two: the values at L, the common ones, land
// exactly (4096-byte requests: bucket 12), the rest of the slot one bucket
// low. A depth slot below 64 holds one whole value, which lands exactly.
// In the µs histograms exported in seconds, L = 2^k µs = 2^(k - 19.93) s
// lands in bucket k-19, (0.954·2^k, 1.907·2^k] µs: more than 95% of that
// bucket lies in the slot (and 91% of the slot in the bucket), so a
// quantile read from the native buckets is off by less than one bucket (a
// factor of 2), as one read from the log2 slots already is.
int native_index(double x)
{
	int e = 0;
	const double m = std::frexp(x, &e); // x = m * 2^e, 0.5 <= m < 1
	return m == 0.5 ? e - 1 : e;
}

// Spans and deltas of the positive buckets (index -> count): gaps of up to
// two empty buckets are spelled as zero deltas, which is shorter than a
// new span; no bucket at all is the no-op span that marks the histogram
// as native for the scrapers that look for one.
void put_positive(pb::Histogram &h, const std::map<int, std::uint64_t> &buckets)
{
	pb::BucketSpan *span = nullptr;
	int next = 0;          // the index after the last bucket put
	std::int64_t last = 0; // the count of the last bucket put
	for (const auto &[i, n] : buckets) {
		if (n == 0)
			continue;
		const int gap = i - next;
		if (!span || gap > 2) {
			const bool first = !span;
			span = h.add_positive_span();
			span->set_offset(first ? i : gap);
			span->set_length(0);
		} else {
			for (int k = 0; k < gap; ++k) {
				h.add_positive_delta(-last);
				last = 0;
			}
			span->set_length(span->length() + gap);
		}
		h.add_positive_delta(static_cast<std::int64_t>(n) - last);
		last = static_cast<std::int64_t>(n);
		span->set_length(span->length() + 1);
		next = i + 1;
	}
	if (!span) {
		span = h.add_positive_span();
		span->set_offset(0);
		span->set_length(0);
	}
}

void put_histogram(pb::Histogram &h, const Series &s)
{
	const HistogramBounds &b = *s.bounds;
	h.set_sample_count(s.count());
	h.set_sample_sum(s.sum);
	std::uint64_t cum = 0;
	for (std::size_t i = 0; i < s.counts.size(); ++i) {
		cum += s.counts[i];
		pb::Bucket *bucket = h.add_bucket();
		bucket->set_cumulative_count(cum);
		bucket->set_upper_bound(b.le[i]);
	}
	h.set_schema(0);
	double zero_threshold = kLeastZeroThreshold;
	std::uint64_t zero_count = 0;
	std::map<int, std::uint64_t> positive;
	for (std::size_t i = 0; i < s.counts.size(); ++i) {
		if (b.lower[i] > 0) {
			positive[native_index(b.lower[i])] += s.counts[i];
		} else {
			zero_threshold = std::max(zero_threshold, b.le[i]);
			zero_count += s.counts[i];
		}
	}
	h.set_zero_threshold(zero_threshold);
	h.set_zero_count(zero_count);
	put_positive(h, positive);
}

void put_family(pb::MetricFamily &mf, const std::string &name, const Family &f)
{
	mf.set_name(name);
	mf.set_help(valid_utf8(f.help));
	switch (f.type) {
	case Type::Counter: mf.set_type(pb::COUNTER); break;
	case Type::Histogram: mf.set_type(pb::HISTOGRAM); break;
	case Type::Gauge:
	case Type::Info: mf.set_type(pb::GAUGE); break;
	}
	for (const auto &[key, s] : f.series) {
		pb::Metric *m = mf.add_metric();
		for (const auto &[k, v] : s.labels) {
			pb::LabelPair *l = m->add_label();
			l->set_name(k);
			l->set_value(valid_utf8(v));
		}
		switch (f.type) {
		case Type::Counter: m->mutable_counter()->set_value(s.value); break;
		case Type::Histogram: put_histogram(*m->mutable_histogram(), s); break;
		case Type::Gauge:
		case Type::Info: m->mutable_gauge()->set_value(s.value); break;
		}
	}
}

} // namespace

std::string encode_protobuf(const Exposition &ex)
{
	std::string out;
	{
		google::protobuf::io::StringOutputStream stream(&out);
		pb::MetricFamily mf;
		for (const auto &[name, f] : ex.families()) {
			if (f.series.empty())
				continue;
			mf.Clear();
			put_family(mf, name, f);
			google::protobuf::util::SerializeDelimitedToZeroCopyStream(mf, &stream);
		}
	} // the stream gives back what it reserved beyond the last message
	return out;
}

} // namespace hwsig::expo
