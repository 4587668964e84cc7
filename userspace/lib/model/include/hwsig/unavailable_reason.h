// Why a metric cannot be measured, as a code from a short fixed set: the
// label hwsig_unavailable{reason} carries (Documentation/prometheus.rst,
// "Unavailable metrics"). The words with live counts stay in the note's
// detail, for the log, JSON and the tables; a label that changed with them
// would make a new series every interval and every alert on it flap.
#pragma once

#include <optional>
#include <string_view>

namespace hwsig {

// Stable: the names are a user-visible contract, in exports and dumps.
enum class UnavailableCode {
	disabled,    // turned off by configuration
	unsupported, // the kernel or hardware lacks it
	permission,  // EACCES/EPERM
	read_error,  // a read, open, perf_event_open or BPF load failed otherwise
	malformed,   // a file's contents could not be parsed
	capacity,    // a table or limit is full
	no_target,   // nothing to measure (no VMs, no vCPU threads, no such queue)
	no_events,   // too few events in the interval: transient
	incomplete,  // data missing or inconsistent for the interval: transient
	// A note read from a dump written before notes had codes; never made
	// by a source.
	unknown,
};

std::string_view code_name(UnavailableCode code);
// The code whose code_name is `name`; nullopt for any other word.
std::optional<UnavailableCode> parse_unavailable_code(std::string_view name);
// Comes and goes with the workload from one interval to the next (an idle
// disk): not a layer this host lacks, so not exported as an alertable series.
bool transient(UnavailableCode code);
// Exported as hwsig_unavailable: neither transient nor unknown. A series
// there says this host lacks a layer until something changes on it.
bool alertable(UnavailableCode code);
// What a failed system call's errno says: permission for EACCES/EPERM,
// unsupported where it means the kernel lacks the file, event or feature
// (ENOENT, ENODEV, EOPNOTSUPP), else read_error.
UnavailableCode errno_code(int err);

} // namespace hwsig
