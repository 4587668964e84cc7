// hwsigctl vms: the QEMU/KVM guests on this host, as hwsigctl stat scopes
// them (vm:NAME). Discovery rules: Documentation/vms.rst.
#include <boost/program_options.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "columns.h"
#include "commands.h"
#include "hwsig/render.h"
#include "hwsig/vm_parse.h"

namespace po = boost::program_options;

namespace {

const char *kExamples =
	"output:\n"
	"  table: NAME PID VCPUS VHOST TAPS, one guest per row, sorted by name.\n"
	"    VCPUS counts threads named \"CPU n/KVM\"; \"2*\" means the threads are\n"
	"    unnamed (QEMU without -name ...,debug-threads=on) and 2 vCPUs were\n"
	"    counted from the process's kvm-vcpu fds. VHOST counts vhost workers.\n"
	"    \"?\" means /proc/PID/fd could not be read (run as root).\n"
	"  json: one JSON object per guest per line (JSON Lines, no array):\n"
	"    {\"name\":\"web01\",\"scope\":\"vm:web01\",\"pid\":2101,\"vcpu_tids\":[...],\n"
	"     \"vcpu_fds\":4,\"vhost_tids\":[...],\"taps\":[\"vnet0\"],\"fds_readable\":true}\n"
	"  No guests: the table prints \"no QEMU/KVM guests found\"; json prints nothing\n"
	"  on stdout and that message on stderr. Both exit 0.\n\n"
	"examples:\n"
	"  hwsigctl vms                   the guests, as a table\n"
	"  hwsigctl vms --format json     one JSON line per guest\n"
	"  hwsigctl stat --vm web01       then watch one of them\n";

std::string join(const std::vector<std::string> &items, const char *sep)
{
	std::string out;
	for (const auto &s : items)
		out += (out.empty() ? "" : sep) + s;
	return out;
}

std::string json_ints(const std::vector<int> &v)
{
	std::string out = "[";
	for (std::size_t i = 0; i < v.size(); i++)
		out += (i ? "," : "") + std::to_string(v[i]);
	return out + "]";
}

std::string vcpu_cell(const hwsig::vmparse::VmDetails &d)
{
	if (!d.vm.vcpu_tids.empty())
		return std::to_string(d.vm.vcpu_tids.size());
	if (d.vcpu_fds > 0)
		return std::to_string(d.vcpu_fds) + "*";
	return d.fds_readable ? "0" : "?";
}

std::string taps_cell(const hwsig::vmparse::VmDetails &d)
{
	if (!d.fds_readable)
		return "?";
	return d.vm.taps.empty() ? "-" : join(d.vm.taps, ",");
}

void print_table(const std::vector<hwsig::vmparse::VmDetails> &vms)
{
	std::vector<std::vector<std::string>> rows = {{"NAME", "PID", "VCPUS", "VHOST", "TAPS"}};
	bool unnamed = false;
	for (const auto &d : vms) {
		rows.push_back({d.vm.name, std::to_string(d.vm.pid), vcpu_cell(d),
				std::to_string(d.vm.vhost_tids.size()), taps_cell(d)});
		unnamed |= d.vm.vcpu_tids.empty() && d.vcpu_fds > 0;
	}
	std::fputs(hwsigctl::format_columns(rows, {1, 2, 3}).c_str(), stdout);
	if (unnamed)
		std::printf("* vCPU threads unnamed (start QEMU with -name NAME,debug-threads=on):\n"
			    "  counted from kvm-vcpu fds; per-vCPU scheduling metrics are unavailable\n");
}

void print_json(const std::vector<hwsig::vmparse::VmDetails> &vms)
{
	for (const auto &d : vms) {
		std::printf("{\"name\":\"%s\",\"scope\":\"%s\",\"pid\":%d,\"vcpu_tids\":%s,\"vcpu_fds\":%u,"
			    "\"vhost_tids\":%s,\"taps\":%s,\"fds_readable\":%s}\n",
			    hwsig::json_escape(d.vm.name).c_str(), hwsig::json_escape(d.vm.scope()).c_str(), d.vm.pid,
			    json_ints(d.vm.vcpu_tids).c_str(), d.vcpu_fds, json_ints(d.vm.vhost_tids).c_str(),
			    hwsig::json_strings(d.vm.taps).c_str(), d.fds_readable ? "true" : "false");
	}
}

} // namespace

namespace hwsigctl {

int cmd_vms(const std::vector<std::string> &args)
{
	std::string format = "table", root = "/";
	po::options_description visible("hwsigctl vms [options]\n\n"
					"Lists the QEMU/KVM guests on this host: their names (the vm:NAME\n"
					"scopes of 'hwsigctl stat'), vCPU threads, vhost workers and taps.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("format,f", po::value<std::string>(&format)->default_value("table"),
		 "table | json (one JSON object per guest per line)");
	po::options_description hidden;
	hidden.add_options()("root", po::value<std::string>(&root), "prefix for /proc (tests)");
	po::variables_map vars;
	if (auto done = parse_command_line({"vms", visible, hidden, kExamples}, args, vars))
		return *done;
	if (format != "table" && format != "json")
		return usage_error("vms", "--format must be 'table' or 'json', not '" + format + "'");

	auto vms = hwsig::vmparse::discover_vm_details(root);
	if (vms.empty()) {
		std::fprintf(format == "json" ? stderr : stdout, "no QEMU/KVM guests found\n");
		return 0;
	}
	if (format == "json")
		print_json(vms);
	else
		print_table(vms);
	return 0;
}

} // namespace hwsigctl
