// hwsigctl: option parsing and subcommand dispatch only.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

namespace {

struct Command {
	const char *name;
	int (*run)(const std::vector<std::string> &args);
	const char *summary;
};

const Command kCommands[] = {
	{"stat", hwsigctl::cmd_stat, "live metrics from every layer, per interval (default command)"},
	{"top", hwsigctl::cmd_top, "live view of the VMs: who waits behind whom, per-VM figures, verdicts"},
	{"vms", hwsigctl::cmd_vms, "the QEMU/KVM guests: names, vCPU threads, vhost workers, taps"},
	{"kmod", hwsigctl::cmd_kmod, "hwsig.ko: info|status|start|stop|records"},
	{"hist", hwsigctl::cmd_hist, "full BPF histograms like runqlat/biolatency: hist runq|bio|vhost"},
	{"dump", hwsigctl::cmd_dump, "write hwsigd's last minutes to a file (the flight recorder)"},
	{"replay", hwsigctl::cmd_replay, "show a dump's intervals as 'stat' would"},
	{"plot", hwsigctl::cmd_plot, "draw a dump's intervals as an SVG timeline for a browser"},
	{"metrics", hwsigctl::cmd_metrics, "every metric id, or every Prometheus family, with its definition"},
};

void print_help()
{
	std::printf("usage: hwsigctl [--version] [--help] <command> [options]\n\n"
		    "Always-on hardware + kernel signal monitor for KVM hosts.\n\ncommands:\n");
	for (const auto &c : kCommands)
		std::printf("  %-8s %s\n", c.name, c.summary);
	std::printf("\n'hwsigctl <command> --help' describes a command's options.\n"
		    "examples:\n"
		    "  hwsigctl stat                       one table per second until Ctrl-C\n"
		    "  hwsigctl stat -d 10 --format json   ten JSON lines\n");
}

} // namespace

namespace hwsigctl {

int usage_error(const std::string &cmd, const std::string &msg)
{
	std::fprintf(stderr, "hwsigctl %s: %s\nTry 'hwsigctl %s --help'.\n", cmd.c_str(), msg.c_str(),
		     cmd.c_str());
	return 2;
}

namespace {

// Whether the option spelt arg ("-c", "--count") takes a value.
bool takes_value(const boost::program_options::options_description &all, const std::string &arg)
{
	// Boost keys long options by name ("count") and short ones as typed ("-c").
	const bool long_name = arg.rfind("--", 0) == 0;
	const std::string name = long_name ? arg.substr(2) : arg.substr(0, 2);
	const auto *opt = all.find_nothrow(name, false);
	return opt && opt->semantic()->max_tokens() > 0;
}

} // namespace

std::optional<int> parse_command_line(const CommandLine &cl, const std::vector<std::string> &args,
				      boost::program_options::variables_map &vars)
{
	namespace po = boost::program_options;
	po::options_description all;
	all.add(cl.visible).add(cl.hidden);
	try {
		po::command_line_parser parser(args);
		parser.options(all);
		// No positional arguments unless the command declares them: a
		// stray word is refused, not silently ignored.
		const po::positional_options_description none;
		parser.positional(cl.positional ? *cl.positional : none);
		po::store(parser.run(), vars);
		po::notify(vars);
	} catch (const po::too_many_positional_options_error &) {
		// Boost's text names no word: name the first one it had no place for.
		std::size_t allowed = cl.positional ? cl.positional->max_total_count() : 0;
		std::size_t seen = 0;
		for (std::size_t i = 0; i < args.size(); ++i) {
			if (args[i].rfind("-", 0) == 0) {
				// An option's value (--count 2) is not a positional word.
				const bool bare = args[i].rfind("--", 0) == 0 ? args[i].find('=') == std::string::npos
									     : args[i].size() == 2;
				if (bare && i + 1 < args.size() && takes_value(all, args[i]))
					++i;
				continue;
			}
			if (++seen > allowed)
				return usage_error(cl.cmd, "unexpected argument '" + args[i] + "'");
		}
		return usage_error(cl.cmd, "too many arguments");
	} catch (const po::error &e) {
		return usage_error(cl.cmd, e.what());
	}
	if (vars.count("help")) {
		std::cout << cl.visible << "\n" << cl.examples;
		return 0;
	}
	return std::nullopt;
}

} // namespace hwsigctl

int main(int argc, char **argv)
{
	std::vector<std::string> args(argv + 1, argv + argc);
	if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
		print_help();
		return 0;
	}
	if (!args.empty() && args[0] == "--version") {
		std::printf("hwsigctl %s\n", HWSIG_VERSION);
		return 0;
	}
	std::string name = "stat";
	if (!args.empty() && args[0].rfind("-", 0) != 0) {
		name = args[0];
		args.erase(args.begin());
	}
	for (const auto &c : kCommands) {
		if (name != c.name)
			continue;
		try {
			return c.run(args);
		} catch (const std::exception &e) {
			std::fprintf(stderr, "hwsigctl %s: %s\n", c.name, e.what());
			return 1;
		}
	}
	std::fprintf(stderr, "hwsigctl: unknown command '%s'\n", name.c_str());
	print_help();
	return 2;
}
