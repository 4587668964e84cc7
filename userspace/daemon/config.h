// hwsigd's configuration: one option table for the command line, the
// configuration file (/etc/hwsig/hwsigd.conf, "key = value") and --help;
// Documentation/hwsigd.rst and the shipped hwsigd.conf list the same keys
// (a test compares them).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hwsigd {

struct Config {
	std::string config_file = "/etc/hwsig/hwsigd.conf";
	double interval = 1.0;                  // seconds between snapshots
	std::string listen = "127.0.0.1:9863";  // /metrics; "none" serves no HTTP
	bool per_cpu = false;                   // cpu="N" series in /metrics
	// The other switches of /metrics' detail (prometheus.rst, "Series budget").
	bool per_vcpu = false;                  // vcpu="N" series
	bool vm_detail = false;                 // per-VM families beyond the default set
	bool per_queue = false;                 // vhost series per virtqueue
	unsigned culprit_top = 2;               // named culprit VMs per victim
	bool culprit_matrix = false;            // every victim x culprit VM pair
	std::string text_buckets = "coarse";    // coarse | full: per-VM/device/queue histograms in text
	std::string pmu = "kmod";               // kmod (perf fallback) | perf | off
	std::vector<std::string> bpf = {"sched", "block", "vhost"}; // or {"none"}
	bool resctrl = false;                   // resctrl monitoring groups per VM (opt-in)
	unsigned history = 900;                 // intervals kept in memory (15 min at 1 s)
	std::string socket = "/run/hwsig/hwsigd.sock"; // hwsigctl's local socket
	std::string socket_group = "hwsig";     // may read the socket without root
	std::string log_level = "info";         // error | warning | info | debug
	std::string dump_dir = "/var/lib/hwsig/dumps"; // where triggered dumps go, or "none"
	unsigned dump_keep = 20;                // dumps kept there (the oldest go)
	unsigned dump_max_mb = 1024;            // and at most this many MiB of them
	std::vector<std::string> dump_rules = {"none"}; // threshold rules that trigger a dump
	double dump_gap = 300;                  // seconds between two rule-triggered dumps
	std::string root = "/";                 // prefix for /proc and /sys (tests)
	bool print_intervals = false;           // each interval as a JSON line on stdout
};

// Parses argv, then the configuration file it names (or the default one,
// which may be absent); the command line wins. Returns the exit code when
// the program ends here (--help, --version, a bad option or value: one line
// on stderr naming the key and the problem, exit code 2).
std::optional<int> parse_config(int argc, char **argv, Config &cfg);

// Re-reads cfg.config_file over a copy of the command line's values, for
// SIGHUP. Empty on success (out holds the new configuration), else the one
// line that says why the file was refused.
std::string reload_config(const Config &running, Config &out);

// The option table as "key\tdefault\thelp" lines (--print-options): what
// the documentation test compares with hwsigd.rst and hwsigd.conf.
std::string option_table();

} // namespace hwsigd
