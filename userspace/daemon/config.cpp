// hwsigd's option table, read from the command line and the configuration
// file with Boost.Program_options. Every refusal is one line naming the key.
#include "config.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/stat.h>

#include "hwsig/docs.h"
#include "hwsig/dump_rule.h"

namespace po = boost::program_options;

namespace hwsigd {
namespace {

const char *kDescription =
	"hwsigd [options]\n\n"
	"The always-on hwsig service: samples every layer each interval, keeps the\n"
	"last intervals in memory, serves them as Prometheus/OpenMetrics on /metrics\n"
	"and to hwsigctl over a local socket (" HWSIG_DOC("hwsigd.rst") ").\n"
	"Options may also be set in the configuration file as 'key = value';\n"
	"the command line wins.\n\noptions";

const char *kExamples =
	"examples:\n"
	"  hwsigd                                  the configuration file's settings\n"
	"  hwsigd --listen 127.0.0.1:9863 --interval 1\n"
	"  hwsigd --config /dev/null --pmu perf --bpf sched,block\n"
	"  hwsigd --check-config /etc/hwsig/hwsigd.conf.new   validate it, print what it sets\n"
	"  curl -s 127.0.0.1:9863/metrics | grep hwsig_block_reads_total\n";

struct Table {
	po::options_description file{"configuration file keys"};
	po::options_description command_line{kDescription};
	po::options_description hidden;
	std::string bpf_list;
};

// One row per key; the command line adds --config, --help, --version.
void add_keys(po::options_description &d, Config &c, std::string &bpf_list)
{
	d.add_options()
		("interval", po::value<double>(&c.interval)->default_value(c.interval),
		 "seconds between snapshots (0.01 .. 3600)")
		("listen", po::value<std::string>(&c.listen)->default_value(c.listen),
		 "HOST:PORT serving /metrics, or 'none'")
		("per-cpu", po::value<bool>(&c.per_cpu)->default_value(c.per_cpu, c.per_cpu ? "true" : "false"),
		 "export cpu=\"N\" series (true | false)")
		("per-vcpu", po::value<bool>(&c.per_vcpu)->default_value(c.per_vcpu, c.per_vcpu ? "true" : "false"),
		 "export vcpu=\"N\" series, 2 per vCPU (true | false)")
		("vm-detail", po::value<bool>(&c.vm_detail)->default_value(c.vm_detail, c.vm_detail ? "true" : "false"),
		 "export the per-VM families beyond the default set (true | false)")
		("per-queue", po::value<bool>(&c.per_queue)->default_value(c.per_queue, c.per_queue ? "true" : "false"),
		 "export vhost series per virtqueue instead of per VM (true | false)")
		("culprit-top", po::value<unsigned>(&c.culprit_top)->default_value(c.culprit_top),
		 "named culprit VMs exported per victim VM (0 .. 64)")
		("culprit-matrix",
		 po::value<bool>(&c.culprit_matrix)->default_value(c.culprit_matrix, c.culprit_matrix ? "true" : "false"),
		 "export every victim x culprit VM pair, VMs squared (true | false)")
		("text-buckets", po::value<std::string>(&c.text_buckets)->default_value(c.text_buckets),
		 "per-VM, per-device and per-queue histograms in the text formats: coarse | full")
		("pmu", po::value<std::string>(&c.pmu)->default_value(c.pmu),
		 "hardware counters: kmod (falls back to perf) | perf | off")
		("bpf", po::value<std::string>(&bpf_list)->default_value("sched,block,vhost"),
		 "BPF collector sets: any of sched,block,vhost, or none")
		("resctrl", po::value<bool>(&c.resctrl)->default_value(c.resctrl, c.resctrl ? "true" : "false"),
		 "LLC occupancy and memory bandwidth per VM from a resctrl monitoring group each (true | false)")
		("history", po::value<unsigned>(&c.history)->default_value(c.history),
		 "intervals kept in memory (2 .. 86400)")
		("socket", po::value<std::string>(&c.socket)->default_value(c.socket),
		 "local socket hwsigctl reads through, or 'none'")
		("socket-group", po::value<std::string>(&c.socket_group)->default_value(c.socket_group),
		 "group whose members may read the socket without root")
		("log-level", po::value<std::string>(&c.log_level)->default_value(c.log_level),
		 "error | warning | info | debug")
		("dump-dir", po::value<std::string>(&c.dump_dir)->default_value(c.dump_dir),
		 "directory of the dumps SIGUSR1 writes, or 'none'")
		("dump-keep", po::value<unsigned>(&c.dump_keep)->default_value(c.dump_keep),
		 "dumps kept in dump-dir; older ones are deleted (1 .. 10000)")
		("dump-max-mb", po::value<unsigned>(&c.dump_max_mb)->default_value(c.dump_max_mb),
		 "MiB of dumps kept in dump-dir at most (1 .. 1048576)")
		("dump-rule", po::value<std::vector<std::string>>(&c.dump_rules)->default_value(c.dump_rules, "none")->composing(),
		 "a threshold rule that triggers a dump, e.g. 'psi.cpu_some_pct > 20 for 3' (repeat the key for more), or 'none'")
		("dump-gap", po::value<double>(&c.dump_gap)->default_value(c.dump_gap),
		 "seconds at least between two dumps triggered by rules (0 .. 86400)");
}

std::string split_bpf(const std::string &list, std::vector<std::string> &out)
{
	out.clear();
	std::stringstream ss(list);
	std::string item;
	while (std::getline(ss, item, ',')) {
		if (item.empty())
			continue;
		if (item != "sched" && item != "block" && item != "vhost" && item != "none")
			return "bpf: unknown collector set '" + item + "' (sched, block, vhost or none)";
		out.push_back(item);
	}
	if (out.empty())
		return "bpf: empty list (write 'none' for no BPF collectors)";
	if (out.size() > 1)
		for (const auto &s : out)
			if (s == "none")
				return "bpf: 'none' cannot be combined with collector sets";
	if (out.size() == 1 && out[0] == "none")
		out.clear();
	return {};
}

bool valid_listen(const std::string &s)
{
	if (s == "none")
		return true;
	auto colon = s.rfind(':');
	if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
		return false;
	std::string port = s.substr(colon + 1);
	if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5)
		return false;
	unsigned long p = std::stoul(port);
	return p >= 1 && p <= 65535;
}

std::string validate(Config &c, const std::string &bpf_list)
{
	if (!std::isfinite(c.interval) || c.interval < 0.01 || c.interval > 3600)
		return "interval: must be between 0.01 and 3600 seconds";
	if (!valid_listen(c.listen))
		return "listen: '" + c.listen + "' is not HOST:PORT (e.g. 127.0.0.1:9863, [::1]:9863) or 'none'";
	if (c.pmu != "kmod" && c.pmu != "perf" && c.pmu != "off")
		return "pmu: '" + c.pmu + "' is not kmod, perf or off";
	if (auto e = split_bpf(bpf_list, c.bpf); !e.empty())
		return e;
	if (c.culprit_top > 64)
		return "culprit-top: must be between 0 and 64";
	if (c.text_buckets != "coarse" && c.text_buckets != "full")
		return "text-buckets: '" + c.text_buckets + "' is not coarse or full";
	if (c.history < 2 || c.history > 86400)
		return "history: must be between 2 and 86400 intervals";
	if (c.socket != "none" && (c.socket.empty() || c.socket[0] != '/'))
		return "socket: must be an absolute path or 'none'";
	if (c.log_level != "error" && c.log_level != "warning" && c.log_level != "info" &&
	    c.log_level != "debug")
		return "log-level: '" + c.log_level + "' is not error, warning, info or debug";
	if (c.dump_dir != "none" && (c.dump_dir.empty() || c.dump_dir[0] != '/'))
		return "dump-dir: must be an absolute path or 'none'";
	if (c.dump_keep < 1 || c.dump_keep > 10000)
		return "dump-keep: must be between 1 and 10000 dumps";
	if (c.dump_max_mb < 1 || c.dump_max_mb > 1048576)
		return "dump-max-mb: must be between 1 and 1048576 MiB";
	if (!std::isfinite(c.dump_gap) || c.dump_gap < 0 || c.dump_gap > 86400)
		return "dump-gap: must be between 0 and 86400 seconds";
	if (!(c.dump_rules.size() == 1 && c.dump_rules[0] == "none")) {
		for (const auto &rule : c.dump_rules) {
			if (rule == "none")
				return "dump-rule: 'none' cannot stand beside rules";
			try {
				hwsig::DumpRule::parse(rule);
			} catch (const std::exception &e) {
				return "dump-rule '" + rule + "': " + e.what();
			}
		}
	}
	return {};
}

// Boost's messages name the option as "--key" or "key"; ours name the key
// and say where it came from.
std::string describe(const po::error &e, const char *where)
{
	return std::string(where) + ": " + e.what();
}

// The command line as given, for re-reading the file at SIGHUP.
std::vector<std::string> g_args;

// A key's value as the configuration file writes it (1, 0.25, true).
std::string value_text(const boost::any &v)
{
	std::string out;
	if (auto *s = boost::any_cast<std::string>(&v))
		out = *s;
	else if (auto *d = boost::any_cast<double>(&v))
		out = std::to_string(*d).substr(0, std::to_string(*d).find_last_not_of('0') + 1);
	else if (auto *u = boost::any_cast<unsigned>(&v))
		out = std::to_string(*u);
	else if (auto *b = boost::any_cast<bool>(&v))
		out = *b ? "true" : "false";
	else if (auto *l = boost::any_cast<std::vector<std::string>>(&v))
		for (const auto &item : *l)
			out += (out.empty() ? "" : ", ") + item;
	if (!out.empty() && out.back() == '.')
		out.pop_back();
	return out;
}

// Parses the file into c (over what is already there); empty on success.
std::string read_file(const std::string &path, bool must_exist, po::options_description &keys,
		      po::variables_map &vars)
{
	struct stat st;
	if (stat(path.c_str(), &st) != 0) {
		if (!must_exist && errno == ENOENT)
			return {};
		return "config " + path + ": " + std::strerror(errno);
	}
	// A directory opens as an empty stream: it would run with defaults.
	if (S_ISDIR(st.st_mode))
		return "config " + path + ": is a directory, not a configuration file";
	std::ifstream in(path);
	if (!in)
		return "config " + path + ": cannot read it";
	try {
		po::store(po::parse_config_file(in, keys, false), vars);
	} catch (const po::error &e) {
		return describe(e, ("config " + path).c_str());
	}
	return {};
}

// effective (when not null): on success, every key as "key = value", what
// the run would use; set (possibly empty) only with --check-config.
std::string parse_all(const std::vector<std::string> &args, Config &c, bool *help, bool *version,
		      bool *print_options, po::options_description *help_out,
		      std::optional<std::string> *effective = nullptr)
{
	std::string bpf_list;
	po::options_description keys;
	add_keys(keys, c, bpf_list);
	po::options_description cl(kDescription);
	cl.add_options()
		("help,h", "this help")
		("version", "print the version")
		("config", po::value<std::string>(&c.config_file)->default_value(c.config_file),
		 "configuration file (absent: defaults)")
		("check-config", po::value<std::string>()->implicit_value("")->value_name("[FILE]"),
		 "validate the configuration (of FILE, else --config's) as a start would, print every key's "
		 "effective value, exit 0 or 2")
		("print-intervals", po::bool_switch(&c.print_intervals),
		 "write each interval to standard output as a JSON line, as 'hwsigctl stat --format json' "
		 "prints it (costs a derivation per interval)");
	cl.add(keys);
	po::options_description hidden;
	hidden.add_options()
		("root", po::value<std::string>(&c.root), "prefix for /proc and /sys (tests)")
		("print-options", "the option table, one key per line (documentation test)");
	po::options_description all;
	all.add(cl).add(hidden);
	if (help_out)
		help_out->add(cl);

	po::variables_map vars;
	try {
		po::store(po::command_line_parser(args).options(all).run(), vars);
	} catch (const po::error &e) {
		return describe(e, "command line");
	}
	if (help)
		*help = vars.count("help");
	if (version)
		*version = vars.count("version");
	if (print_options)
		*print_options = vars.count("print-options");
	std::string file = vars.count("config") ? vars["config"].as<std::string>() : c.config_file;
	bool explicit_file = vars.count("config") && !vars["config"].defaulted();
	if (vars.count("check-config") && !vars["check-config"].as<std::string>().empty()) {
		file = vars["check-config"].as<std::string>();
		explicit_file = true;
	}
	// Values already stored win: the command line before the file.
	if (auto e = read_file(file, explicit_file, keys, vars); !e.empty())
		return e;
	try {
		po::notify(vars);
	} catch (const po::error &e) {
		return describe(e, "configuration");
	}
	c.config_file = file; // notify() stored --config's, --check-config FILE wins
	std::string err = validate(c, bpf_list);
	if (effective && vars.count("check-config")) {
		effective->emplace();
		for (const auto &opt : keys.options())
			**effective += opt->long_name() + " = " + value_text(vars[opt->long_name()].value()) + "\n";
	}
	return err;
}

} // namespace

std::optional<int> parse_config(int argc, char **argv, Config &cfg)
{
	g_args.assign(argv + 1, argv + argc);
	bool help = false, version = false, print_options = false;
	po::options_description shown;
	std::optional<std::string> effective; // --check-config
	std::string err = parse_all(g_args, cfg, &help, &version, &print_options, &shown, &effective);
	if (help) {
		std::ostringstream os;
		os << shown;
		std::printf("%s\n%s", os.str().c_str(), kExamples);
		return 0;
	}
	if (version) {
		std::printf("hwsigd %s\n", HWSIG_VERSION);
		return 0;
	}
	if (print_options) {
		std::printf("%s", option_table().c_str());
		return 0;
	}
	if (!err.empty()) {
		std::fprintf(stderr, "hwsigd: %s\n", err.c_str());
		return 2;
	}
	if (effective) {
		// The effective configuration is itself a valid file.
		std::printf("# hwsigd %s, configuration %s\n%s", HWSIG_VERSION, cfg.config_file.c_str(), effective->c_str());
		std::fprintf(stderr, "hwsigd: configuration %s is valid\n", cfg.config_file.c_str());
		return 0;
	}
	return std::nullopt;
}

std::string reload_config(const Config &running, Config &out)
{
	Config fresh;
	fresh.root = running.root;
	std::string err = parse_all(g_args, fresh, nullptr, nullptr, nullptr, nullptr);
	if (!err.empty())
		return err;
	out = fresh;
	return {};
}

std::string option_table()
{
	Config c;
	std::string bpf_list;
	po::options_description keys;
	add_keys(keys, c, bpf_list);
	std::string out;
	for (const auto &opt : keys.options()) {
		boost::any v;
		const std::string def = opt->semantic()->apply_default(v) ? value_text(v) : "";
		out += opt->long_name() + "\t" + def + "\t" + opt->description() + "\n";
	}
	return out;
}

} // namespace hwsigd
