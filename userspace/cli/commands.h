// hwsigctl subcommands: each parses its own options (Boost.Program_options)
// and renders; the library does the work. Return value: process exit code.
#pragma once

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

} // namespace hwsigctl

using hwsigctl::cmd_stat;
