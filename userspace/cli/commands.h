// hwsigctl subcommands: each parses its own options (Boost.Program_options)
// and renders; the library does the work. Return value: process exit code.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hwsig/thresholds.h"

namespace hwsigctl {

int cmd_stat(const std::vector<std::string> &args);
int cmd_vms(const std::vector<std::string> &args);
int cmd_kmod(const std::vector<std::string> &args);
int cmd_hist(const std::vector<std::string> &args);
int cmd_dump(const std::vector<std::string> &args);
int cmd_replay(const std::vector<std::string> &args);
int cmd_plot(const std::vector<std::string> &args);
int cmd_top(const std::vector<std::string> &args);
int cmd_metrics(const std::vector<std::string> &args);

// Shared helpers for subcommands.
// Prints "hwsigctl <cmd>: <msg>" and a hint to --help; returns 2.
int usage_error(const std::string &cmd, const std::string &msg);

// The thresholds of the file at path (--thresholds; when absent_ok, a
// default path that may not exist). Returns 2 after printing "hwsigctl
// <cmd>: <why>" when it cannot be read or parsed; nullopt when out is set.
std::optional<int> load_thresholds(const char *cmd, const std::string &path, bool absent_ok,
				   hwsig::Thresholds &out);

// What a subcommand accepts: the options --help shows, the ones it does
// not (--root, positional arguments), and the examples after the options.
struct CommandLine {
	const char *cmd;
	const boost::program_options::options_description &visible;
	const boost::program_options::options_description &hidden;
	const char *examples;
	const boost::program_options::positional_options_description *positional = nullptr;
};

// Parses args into vars. Returns the exit code when the command is done
// here: 0 after printing --help (needs a "help" option), 2 after
// usage_error() on a bad command line; nullopt when the command runs.
std::optional<int> parse_command_line(const CommandLine &cl, const std::vector<std::string> &args,
				      boost::program_options::variables_map &vars);

} // namespace hwsigctl
