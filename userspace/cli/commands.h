// hwsigctl subcommands: each parses its own options (Boost.Program_options)
// and renders; the library does the work. Return value: process exit code.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace hwsigctl {

int cmd_stat(const std::vector<std::string> &args);
int cmd_vms(const std::vector<std::string> &args);
int cmd_kmod(const std::vector<std::string> &args);
int cmd_hist(const std::vector<std::string> &args);

// Shared helpers for subcommands.
// Prints "hwsigctl <cmd>: <msg>" and a hint to --help; returns 2.
int usage_error(const std::string &cmd, const std::string &msg);

// Parses args into vars; on a bad command line prints usage_error() and
// returns false (the caller returns 2).
bool parse_command_line(const std::string &cmd, const std::vector<std::string> &args,
			const boost::program_options::options_description &options,
			boost::program_options::variables_map &vars,
			const boost::program_options::positional_options_description *positional = nullptr);

} // namespace hwsigctl

using hwsigctl::cmd_stat;
