// /metrics in Prometheus's protobuf format (exposition_protobuf.cpp), decoded
// with the classes generated from the same .proto: the same families and
// series as the text, native histograms at the expected indices, the
// content negotiation of real Prometheus scrapes, and gzip.
#include <catch2/catch.hpp>

#include <cmath>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <map>
#include <set>
#include <sstream>
#include <zlib.h>

#include "fixture_exposition.h"
#include "gzip.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/series.h"
#include "prometheus_metrics.pb.h"

using namespace hwsig;
namespace pb = io::prometheus::client;

namespace {

std::vector<pb::MetricFamily> decode(const std::string &body)
{
	google::protobuf::io::ArrayInputStream in(body.data(), static_cast<int>(body.size()));
	std::vector<pb::MetricFamily> out;
	for (;;) {
		pb::MetricFamily mf;
		bool clean_eof = false;
		if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&mf, &in, &clean_eof)) {
			REQUIRE(clean_eof); // the stream ends between two messages
			return out;
		}
		out.push_back(std::move(mf));
	}
}

const pb::MetricFamily &family(const std::vector<pb::MetricFamily> &fams, const std::string &name)
{
	for (const auto &f : fams)
		if (f.name() == name)
			return f;
	FAIL("no family " << name);
	static pb::MetricFamily none;
	return none;
}

// The native buckets as index -> count, from the spans and deltas.
std::map<int, std::uint64_t> native_buckets(const pb::Histogram &h)
{
	std::map<int, std::uint64_t> out;
	int index = 0, d = 0;
	std::int64_t count = 0;
	for (int s = 0; s < h.positive_span_size(); ++s) {
		index += h.positive_span(s).offset();
		for (unsigned k = 0; k < h.positive_span(s).length(); ++k, ++index) {
			REQUIRE(d < h.positive_delta_size());
			count += h.positive_delta(d++);
			REQUIRE(count >= 0);
			if (count > 0)
				out[index] = static_cast<std::uint64_t>(count);
		}
	}
	CHECK(d == h.positive_delta_size()); // every delta belongs to a span
	return out;
}

// Labels as the text formats print them.
std::string label_text(const pb::Metric &m)
{
	std::string out;
	for (const auto &l : m.label()) {
		if (!out.empty())
			out += ',';
		out += l.name() + "=\"";
		for (char c : l.value()) {
			if (c == '\\' || c == '"')
				out += '\\';
			if (c == '\n')
				out += "\\n";
			else
				out += c;
		}
		out += '"';
	}
	return out;
}

// The protobuf histogram of one series, alone in a snapshot: raw series id
// at scope, n slots in layout, the counts given by slot (the others 0).
pb::Histogram exported(const char *id, const char *scope, Histogram::Layout layout, std::size_t n,
		       const std::map<std::size_t, std::uint64_t> &counts, const std::string &family_name)
{
	Histogram h;
	h.layout = layout;
	h.counts.assign(n, 0);
	for (const auto &[slot, count] : counts)
		h.counts.at(slot) = count;
	Snapshot snap;
	snap.add_histogram(id, scope, h, "bpf");
	ExportInput in;
	in.snapshot = &snap;
	const auto fams = decode(render_prometheus(in, ExpositionFormat::PrometheusProtobuf));
	const pb::MetricFamily &f = family(fams, family_name);
	CHECK(f.type() == pb::HISTOGRAM);
	REQUIRE(f.metric_size() == 1);
	REQUIRE(f.metric(0).has_histogram());
	return f.metric(0).histogram();
}

// A histogram's _bucket lines are kept by series and bound instead.
struct Text {
	std::map<std::string, std::string> types;
	std::map<std::string, double> samples;
	std::map<std::string, std::map<double, double>> buckets; // name_bucket{labels} -> le -> count
};

Text parse_text(const std::string &text)
{
	Text t;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);) {
		if (l.rfind("# TYPE ", 0) == 0) {
			std::istringstream w(l.substr(7));
			std::string name, type;
			w >> name >> type;
			t.types[name] = type;
		} else if (!l.empty() && l[0] != '#') {
			const std::size_t sp = l.rfind(' ');
			const double v = std::strtod(l.c_str() + sp + 1, nullptr);
			const std::size_t le = l.rfind("le=\"");
			if (l.find("_bucket{") == std::string::npos || le == std::string::npos) {
				t.samples[l.substr(0, sp)] = v;
				continue;
			}
			// name_bucket{a="1",le="2"} -> name_bucket{a="1"}; name_bucket{le="2"} -> name_bucket
			std::string series = l.substr(0, le - 1);
			if (l[le - 1] == ',')
				series += '}';
			t.buckets[series][std::strtod(l.c_str() + le + 4, nullptr)] = v;
		}
	}
	return t;
}

std::string sample_name(const std::string &name, const std::string &labels)
{
	return labels.empty() ? name : name + "{" + labels + "}";
}

std::string inflate_gzip(const std::string &packed)
{
	z_stream z{};
	REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
	std::string out;
	char buf[16384];
	z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(packed.data()));
	z.avail_in = static_cast<uInt>(packed.size());
	int rc = Z_OK;
	while (rc == Z_OK) {
		z.next_out = reinterpret_cast<Bytef *>(buf);
		z.avail_out = sizeof(buf);
		rc = inflate(&z, Z_NO_FLUSH);
		out.append(buf, sizeof(buf) - z.avail_out);
	}
	inflateEnd(&z);
	CHECK(rc == Z_STREAM_END);
	CHECK(z.avail_in == 0);
	return out;
}

} // namespace

TEST_CASE("protobuf: every family and series of the text, with the same values", "[render_protobuf][fixture]")
{
	const auto fx = hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/kvm-host", true);
	const ExportInput in = fx.input(true);
	const Text text = parse_text(render_prometheus(in, ExpositionFormat::Prometheus004));
	const auto fams = decode(render_prometheus(in, ExpositionFormat::PrometheusProtobuf));
	REQUIRE(text.types.size() > 25);
	std::set<std::string> names;
	std::size_t histograms = 0, checked_buckets = 0;
	std::map<std::string, double> pb_samples; // the text's sample names, from the protobuf
	for (const auto &f : fams) {
		INFO(f.name());
		CHECK(names.insert(f.name()).second);
		const std::string type = f.type() == pb::COUNTER ? "counter" : f.type() == pb::GAUGE ? "gauge"
								     : f.type() == pb::HISTOGRAM ? "histogram" : "?";
		CHECK(text.types.count(f.name()) == 1);
		CHECK(type == text.types.at(f.name()));
		CHECK(!f.help().empty());
		for (const auto &m : f.metric()) {
			const std::string labels = label_text(m);
			if (f.type() != pb::HISTOGRAM) {
				pb_samples[sample_name(f.name(), labels)] = f.type() == pb::COUNTER ? m.counter().value()
												    : m.gauge().value();
				continue;
			}
			++histograms;
			const pb::Histogram &h = m.histogram();
			pb_samples[sample_name(f.name() + "_count", labels)] = static_cast<double>(h.sample_count());
			pb_samples[sample_name(f.name() + "_sum", labels)] = h.sample_sum();
			// Every classic bucket the text prints (a coarse one keeps
			// fewer) has the same cumulative count in the protobuf.
			const auto printed = text.buckets.find(sample_name(f.name() + "_bucket", labels));
			REQUIRE(printed != text.buckets.end());
			for (const auto &b : h.bucket()) {
				if (auto it = printed->second.find(b.upper_bound()); it != printed->second.end()) {
					CHECK(it->second == static_cast<double>(b.cumulative_count()));
					++checked_buckets;
				}
			}
			CHECK(h.bucket(h.bucket_size() - 1).cumulative_count() == h.sample_count());
		}
	}
	CHECK(names.size() == text.types.size());
	CHECK(histograms > 10);
	CHECK(checked_buckets > 100);
	// Every text sample but the histograms' _bucket lines, with its value.
	std::size_t compared = 0;
	for (const auto &[name, value] : text.samples) {
		INFO(name);
		auto it = pb_samples.find(name);
		REQUIRE(it != pb_samples.end());
		CHECK(it->second == value);
		++compared;
	}
	CHECK(compared == pb_samples.size());
}

TEST_CASE("protobuf: native buckets hold every count, and agree with the classic ones where the bounds meet",
	  "[render_protobuf][fixture]")
{
	const auto fx = hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/kvm-host", true);
	const auto fams = decode(render_prometheus(fx.input(true), ExpositionFormat::PrometheusProtobuf));
	std::size_t meeting = 0;
	for (const auto &f : fams) {
		if (f.type() != pb::HISTOGRAM)
			continue;
		for (const auto &m : f.metric()) {
			INFO(f.name() << "{" << label_text(m) << "}");
			const pb::Histogram &h = m.histogram();
			CHECK(h.schema() == 0);
			CHECK(h.zero_threshold() > 0);
			const auto native = native_buckets(h);
			std::uint64_t total = h.zero_count();
			for (const auto &[i, n] : native)
				total += n;
			CHECK(total == h.sample_count());
			// Where a classic bound is a power of two 2^i, the native
			// buckets up to i hold what the classic one does.
			for (const auto &b : h.bucket()) {
				int e = 0;
				if (!std::isfinite(b.upper_bound()) || b.upper_bound() < h.zero_threshold() ||
				    std::frexp(b.upper_bound(), &e) != 0.5)
					continue;
				std::uint64_t cum = h.zero_count();
				for (const auto &[i, n] : native)
					if (i <= e - 1)
						cum += n;
				CHECK(cum == b.cumulative_count());
				++meeting;
			}
		}
	}
	CHECK(meeting >= 6); // the depth histogram's 1, 2, 4, 8, 16, 32
}

TEST_CASE("protobuf: µs slots land in the native bucket of their lower bound in seconds", "[render_protobuf]")
{
	const pb::Histogram n = exported(series::kRunqWaitUs, "system", Histogram::Layout::Log2, 27,
					 {
						 {0, 5},  // 0..1 µs: the zero bucket
						 {10, 7}, // [1024, 2048) µs -> (2^-10, 2^-9] s
						 {11, 3},
						 {13, 4}, // after an empty bucket: the same span
						 {17, 6}, // after three: a new span
						 {20, 2}, // [~1.05, ~2.1) s -> (1, 2] s, after two empty buckets: the same span
						 {26, 1}, // the open last slot, from 2^26 µs
					 },
					 "hwsig_runq_wait_seconds");
	CHECK(n.sample_count() == 28);
	CHECK(n.zero_count() == 5);
	CHECK(n.zero_threshold() == 2e-6);
	CHECK(native_buckets(n) ==
	      std::map<int, std::uint64_t>{{-9, 7}, {-8, 3}, {-6, 4}, {-2, 6}, {1, 2}, {7, 1}});
	// Spelled out: gaps of up to two empty buckets stay in their span
	// (as zero counts), longer ones start a new span.
	REQUIRE(n.positive_span_size() == 3);
	CHECK(n.positive_span(0).offset() == -9);
	CHECK(n.positive_span(0).length() == 4);
	CHECK(n.positive_span(1).offset() == 3);
	CHECK(n.positive_span(1).length() == 4);
	CHECK(n.positive_span(2).offset() == 5);
	CHECK(n.positive_span(2).length() == 1);
	CHECK(std::vector<std::int64_t>(n.positive_delta().begin(), n.positive_delta().end()) ==
	      std::vector<std::int64_t>{7, -4, -3, 4, 2, -6, 0, 2, -1});
	// Each slot's lower bound lies in its native bucket (2^(i-1), 2^i].
	for (auto [slot, index] : {std::pair{10, -9}, {11, -8}, {13, -6}, {17, -2}, {20, 1}, {26, 7}}) {
		const double lower = std::ldexp(1.0, slot) / 1e6;
		CHECK(std::ldexp(1.0, index - 1) < lower);
		CHECK(lower <= std::ldexp(1.0, index));
	}
	// The classic buckets are all there too: 26 bounded slots and +Inf.
	REQUIRE(n.bucket_size() == 27);
	CHECK(n.bucket(0).upper_bound() == 2e-6);
	CHECK(n.bucket(0).cumulative_count() == 5);
	CHECK(n.bucket(10).upper_bound() == 0.002048);
	CHECK(n.bucket(10).cumulative_count() == 12);
	CHECK(std::isinf(n.bucket(26).upper_bound()));
	CHECK(n.bucket(26).cumulative_count() == 28);
}

TEST_CASE("protobuf: 4 KiB requests in bucket 12 of the request sizes", "[render_protobuf]")
{
	const pb::Histogram n = exported(series::kIoSizeKib, "dev:sda", Histogram::Layout::Log2, 20,
					 {
						 {0, 1},   // 0..1 KiB
						 {1, 2},   // 2 KiB: (1024, 2048]
						 {2, 100}, // 4 KiB
						 {7, 3},   // 128 KiB: 2^17
					 },
					 "hwsig_block_request_size_bytes");
	CHECK(native_buckets(n) == std::map<int, std::uint64_t>{{11, 2}, {12, 100}, {17, 3}});
	CHECK(n.zero_count() == 1);
	CHECK(n.zero_threshold() == 2047); // the first slot's inclusive bound: 2 KiB - 1 B
}

TEST_CASE("protobuf: the depth histogram's exact-zero slot is the zero bucket, and slots sharing a bucket add up",
	  "[render_protobuf]")
{
	const pb::Histogram n = exported(series::kVhostDepth, "system", Histogram::Layout::LinearLog2, 74,
					 {
						 {0, 4},  // empty ring
						 {1, 2},  // (0.5, 1]: bucket 0
						 {3, 1},  // (2, 4]: bucket 2
						 {4, 6},  // (2, 4]: bucket 2 too
						 {5, 1},  // (4, 8]: bucket 3
						 {64, 5}, // [64, 128): from 64, bucket 6
					 },
					 "hwsig_vhost_queue_depth");
	CHECK(n.zero_count() == 4);
	// Exactly 0 in the zero bucket: a threshold far below 1, yet not 0
	// (Prometheus 2.42 would take an empty histogram for a classic one).
	CHECK(n.zero_threshold() > 0);
	CHECK(n.zero_threshold() < 1e-30);
	CHECK(native_buckets(n) == std::map<int, std::uint64_t>{{0, 2}, {2, 7}, {3, 1}, {6, 5}});
	CHECK(n.sample_count() == 19);
	// The last slot is bounded (16-bit rings): no +Inf bucket.
	REQUIRE(n.bucket_size() == 74);
	CHECK(n.bucket(73).upper_bound() == 65535);
}

TEST_CASE("protobuf: an empty histogram is native from the start", "[render_protobuf]")
{
	const pb::Histogram n =
		exported(series::kRunqWaitUs, "system", Histogram::Layout::Log2, 27, {}, "hwsig_runq_wait_seconds");
	CHECK(n.sample_count() == 0);
	CHECK(n.zero_threshold() > 0);
	REQUIRE(n.positive_span_size() == 1); // the no-op span
	CHECK(n.positive_span(0).offset() == 0);
	CHECK(n.positive_span(0).length() == 0);
	CHECK(n.positive_delta_size() == 0);
}

TEST_CASE("protobuf: counters, gauges and infos, and labels in valid UTF-8", "[render_protobuf]")
{
	ExportInput in;
	in.version = "1.2\xff";
	in.self.push_back({"hwsig_x_total", "Things.", true, {{"kind", "a\"b"}}, 3});
	in.self.push_back({"hwsig_y", "Level.", false, {}, 0.5});
	const auto fams = decode(render_prometheus(in, ExpositionFormat::PrometheusProtobuf));
	const auto &x = family(fams, "hwsig_x_total");
	CHECK(x.type() == pb::COUNTER);
	CHECK(x.help() == "Things.");
	REQUIRE(x.metric_size() == 1);
	CHECK(x.metric(0).counter().value() == 3);
	CHECK(label_text(x.metric(0)) == "kind=\"a\\\"b\"");
	CHECK(family(fams, "hwsig_y").type() == pb::GAUGE);
	CHECK(family(fams, "hwsig_y").metric(0).gauge().value() == 0.5);
	const auto &info = family(fams, "hwsig_build_info");
	CHECK(info.type() == pb::GAUGE);
	REQUIRE(info.metric_size() == 1);
	CHECK(info.metric(0).gauge().value() == 1);
	CHECK(info.metric(0).label(0).value() == "1.2\xEF\xBF\xBD");
}

TEST_CASE("negotiate_format: protobuf when asked for, q values against the text types", "[render_protobuf]")
{
	using F = ExpositionFormat;
	struct Accept {
		const char *header;
		F format;
	};
	for (const Accept a : {
		     // Prometheus 2.42 (scrape/scrape.go): without, then with
		     // --enable-feature=native-histograms.
		     Accept{"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
			    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
			    F::OpenMetrics100},
		     Accept{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,"
			    "application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;"
			    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
			    F::PrometheusProtobuf},
		     Accept{"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited",
			    F::PrometheusProtobuf},
		     // The highest q wins, whatever the order.
		     Accept{"text/plain;version=0.0.4;q=0.9,application/vnd.google.protobuf;"
			    "proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5",
			    F::Prometheus004},
		     Accept{"application/openmetrics-text;q=0.3,application/vnd.google.protobuf;"
			    "proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.4",
			    F::PrometheusProtobuf},
		     Accept{"text/plain;version=0.0.4,application/openmetrics-text;version=1.0.0;q=0.5", F::Prometheus004},
		     Accept{"*/*;q=0.9,application/openmetrics-text;q=0.8", F::Prometheus004},
		     // On a tie, the first listed.
		     Accept{"application/openmetrics-text,application/vnd.google.protobuf;"
			    "proto=io.prometheus.client.MetricFamily;encoding=delimited",
			    F::OpenMetrics100},
		     // Not the delimited MetricFamily stream: not served.
		     Accept{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
			    F::Prometheus004},
		     Accept{"application/vnd.google.protobuf;proto=io.prometheus.client.Metric;encoding=delimited",
			    F::Prometheus004},
		     Accept{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0,"
			    "application/openmetrics-text;q=0.1",
			    F::OpenMetrics100},
		     Accept{"application/openmetrics-text;q=x", F::Prometheus004},
	     }) {
		INFO("Accept: " << a.header);
		CHECK(negotiate_format(a.header) == a.format);
	}
	CHECK(content_type(F::PrometheusProtobuf) ==
	      "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited");
}

TEST_CASE("gzip: a round trip through zlib, and Accept-Encoding", "[render_protobuf]")
{
	const auto fx = hwsig_test::fixture_export(std::string(HWSIG_FIXTURES) + "/kvm-host", true);
	const ExportInput in = fx.input(false);
	for (auto fmt : {ExpositionFormat::Prometheus004, ExpositionFormat::PrometheusProtobuf}) {
		const std::string plain = render_prometheus(in, fmt);
		const std::string packed = hwsigd::gzip(plain);
		REQUIRE(packed.size() > 18);
		CHECK(static_cast<unsigned char>(packed[0]) == 0x1f);
		CHECK(static_cast<unsigned char>(packed[1]) == 0x8b);
		CHECK(packed.size() * 4 < plain.size());
		CHECK(inflate_gzip(packed) == plain);
	}
	CHECK(inflate_gzip(hwsigd::gzip("")).empty());
	using hwsigd::accepts_gzip;
	CHECK(accepts_gzip("gzip"));
	CHECK(accepts_gzip("deflate, gzip, br, zstd")); // curl --compressed
	CHECK(accepts_gzip("GZIP;q=0.5"));
	CHECK(accepts_gzip("x-gzip"));
	CHECK(accepts_gzip("*"));
	CHECK(accepts_gzip("br;q=1, *;q=0.1"));
	CHECK_FALSE(accepts_gzip(""));
	CHECK_FALSE(accepts_gzip("identity"));
	CHECK_FALSE(accepts_gzip("gzip;q=0"));
	CHECK_FALSE(accepts_gzip("gzip;q=0, *"));
	CHECK_FALSE(accepts_gzip("*;q=0"));
	CHECK_FALSE(accepts_gzip("deflate, br"));
}
