// PLACEHOLDER until the real renderer lands (issue 11 work in progress):
// raw counter lines as comments and the self-metrics, so that hwsigd links.
#include "hwsig/render_prometheus.h"
namespace hwsig {
std::string render_prometheus(const ExportInput &in, ExpositionFormat fmt)
{
	std::string out;
	for (const auto &[name, s] : in.snapshot->counters())
		for (const auto &[scope, p] : s.by_scope)
			out += "# " + name + " " + scope + " " + std::to_string(p.value) + "\n";
	for (const auto &m : in.self)
		out += m.name + " " + std::to_string(m.value) + "\n";
	if (fmt == ExpositionFormat::OpenMetrics100)
		out += "# EOF\n";
	return out;
}
std::string_view content_type(ExpositionFormat fmt)
{
	return fmt == ExpositionFormat::OpenMetrics100 ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
						       : "text/plain; version=0.0.4; charset=utf-8";
}
ExpositionFormat negotiate_format(std::string_view accept)
{
	return accept.find("application/openmetrics-text") != std::string_view::npos ? ExpositionFormat::OpenMetrics100
										     : ExpositionFormat::Prometheus004;
}
}
