// libFuzzer target: the Prometheus / OpenMetrics exposition with hostile
// names (a VM name from a command line, device and sensor names, reasons,
// self-metric names and labels) and the Accept header of negotiate_format().
// The input is split at NUL bytes into those strings. Never crashes; both
// texts are valid UTF-8; every line is a HELP/TYPE/UNIT comment or a
// well-formed sample (name, labels with only the format's escapes, a value);
// the OpenMetrics text ends in exactly one "# EOF". The protobuf stream
// decodes to the end, in valid UTF-8, each native histogram holding its count.
#include <cstdlib>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <string>
#include <string_view>
#include <vector>

#include "hwsig/render_prometheus.h"
#include "hwsig/series.h"
#include "prometheus_metrics.pb.h"

using namespace hwsig;

namespace {

bool valid_utf8(std::string_view s)
{
	for (std::size_t i = 0; i < s.size();) {
		unsigned char c = static_cast<unsigned char>(s[i]);
		std::size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
		if (n == 0 || c > 0xF4 || i + n > s.size())
			return false;
		for (std::size_t k = 1; k < n; ++k)
			if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
				return false;
		i += n;
	}
	return true;
}

bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

// name{k="v",...} value
bool sample_line(std::string_view l)
{
	std::size_t i = 0;
	if (l.empty() || !name_char(l[0], true))
		return false;
	while (i < l.size() && name_char(l[i], i == 0))
		++i;
	if (i < l.size() && l[i] == '{') {
		++i;
		while (true) {
			std::size_t start = i;
			while (i < l.size() && name_char(l[i], i == start) && l[i] != ':')
				++i;
			if (i == start || i + 1 >= l.size() || l[i] != '=' || l[i + 1] != '"')
				return false;
			i += 2;
			while (i < l.size() && l[i] != '"') {
				if (l[i] == '\\') {
					if (i + 1 >= l.size() || (l[i + 1] != '\\' && l[i + 1] != '"' && l[i + 1] != 'n'))
						return false;
					++i;
				}
				++i;
			}
			if (i >= l.size())
				return false;
			++i; // closing quote
			if (i < l.size() && l[i] == ',') {
				++i;
				continue;
			}
			if (i < l.size() && l[i] == '}') {
				++i;
				break;
			}
			return false;
		}
	}
	if (i >= l.size() || l[i] != ' ')
		return false;
	std::string value(l.substr(i + 1));
	if (value == "+Inf" || value == "-Inf" || value == "NaN")
		return true;
	char *end = nullptr;
	std::strtod(value.c_str(), &end);
	return !value.empty() && *end == '\0';
}

void check(const std::string &text, bool om)
{
	if (!valid_utf8(text))
		std::abort();
	if (!text.empty() && text.back() != '\n')
		std::abort();
	std::size_t eofs = 0;
	for (std::size_t pos = 0; pos < text.size();) {
		std::size_t nl = text.find('\n', pos);
		std::string_view l(text.data() + pos, nl - pos);
		pos = nl + 1;
		if (l == "# EOF") {
			++eofs;
			if (!om || pos != text.size())
				std::abort();
		} else if (l.rfind("# HELP ", 0) == 0 || l.rfind("# TYPE ", 0) == 0 || l.rfind("# UNIT ", 0) == 0) {
			continue;
		} else if (!sample_line(l)) {
			std::abort();
		}
	}
	if (om != (eofs == 1))
		std::abort();
}

void check_protobuf(const std::string &body)
{
	google::protobuf::io::ArrayInputStream in(body.data(), static_cast<int>(body.size()));
	io::prometheus::client::MetricFamily mf;
	bool eof = false;
	while (google::protobuf::util::ParseDelimitedFromZeroCopyStream(&mf, &in, &eof)) {
		if (!valid_utf8(mf.name()) || !valid_utf8(mf.help()))
			std::abort();
		for (const auto &m : mf.metric()) {
			for (const auto &l : m.label())
				if (!valid_utf8(l.name()) || !valid_utf8(l.value()))
					std::abort();
			if (!m.has_histogram())
				continue;
			std::int64_t bucket = 0;
			std::uint64_t total = m.histogram().zero_count();
			for (std::int64_t delta : m.histogram().positive_delta())
				total += static_cast<std::uint64_t>(bucket += delta);
			if (total != m.histogram().sample_count())
				std::abort();
		}
	}
	if (!eof)
		std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view raw(reinterpret_cast<const char *>(data), size);
	std::vector<std::string> f;
	for (std::size_t pos = 0; f.size() < 8;) {
		std::size_t nul = raw.find('\0', pos);
		f.emplace_back(raw.substr(pos, nul == std::string_view::npos ? std::string_view::npos : nul - pos));
		if (nul == std::string_view::npos)
			break;
		pos = nul + 1;
	}
	f.resize(8);
	const std::string &accept = f[0], &vm = f[1], &dev = f[2], &zone = f[3], &reason = f[4], &self_name = f[5],
			  &label = f[6], &value = f[7];

	ExpositionFormat fmt = negotiate_format(accept);
	if (fmt != ExpositionFormat::Prometheus004 && fmt != ExpositionFormat::OpenMetrics100 &&
	    fmt != ExpositionFormat::PrometheusProtobuf)
		std::abort();

	Snapshot snap;
	snap.add_counter(series::kIoReads, "dev:" + dev, 1, "bpf");
	snap.add_gauge(series::kThermalHeadroom, "zone:" + zone, 12.5, "sysfs");
	// Multiplexed: counted half the time it was enabled.
	CounterPoint cycles;
	cycles.value = 1e12;
	cycles.mux = {5e11, 2e9, 1e9, 0};
	snap.add_counter(series::kPmuCycles, "vm:" + vm, cycles, "kmod");
	snap.add_counter(series::kVhostStalls, "vq:" + value + ":0:rx", 3, "bpf");
	Histogram h;
	h.layout = Histogram::Layout::LinearLog2;
	for (unsigned char c : value)
		h.counts.push_back(c);
	snap.add_histogram(series::kVhostDepth, "vq:7:" + label + ":tx", h, "bpf");
	h.layout = Histogram::Layout::Log2;
	snap.add_histogram(series::kRunqWaitUs, vm, h, "bpf"); // any scope string at all
	std::vector<UnavailableNote> notes = {{"cpu.ipc", vm, UnavailableCode::unsupported, reason},
					      {"io.iops_read", "vq:" + dev, UnavailableCode::read_error, reason}};
	std::vector<Vm> vms(1);
	vms[0].pid = 7;
	vms[0].name = vm;
	ExportInput in;
	in.snapshot = &snap;
	in.unavailable = &notes;
	in.vms = &vms;
	in.switches.per_cpu = !value.empty() && (value[0] & 1);
	in.version = reason;
	in.self.push_back({self_name, reason, false, {{label, value}}, 1});
	in.self.push_back({self_name + "_total", reason, true, {}, 2});
	check(render_prometheus(in, ExpositionFormat::Prometheus004), false);
	check(render_prometheus(in, ExpositionFormat::OpenMetrics100), true);
	check_protobuf(render_prometheus(in, ExpositionFormat::PrometheusProtobuf));
	return 0;
}
