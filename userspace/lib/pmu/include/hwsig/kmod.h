// Userspace side of hwsig.ko: control over generic netlink (KmodClient) and
// the reader of the per-CPU rings in the mmap of /dev/hwsig (RingReader).
// The ABI is <linux/hwsig.h>; Documentation/abi.rst describes the protocol.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <linux/hwsig.h>

#include "hwsig/error.h"
#include "hwsig/fd.h"
#include "hwsig/mmap.h"

namespace hwsig {

// One counter for the module: what perf_event_attr needs plus where.
struct KmodEvent {
	std::string name; // < HWSIG_EVENT_NAME_MAX bytes
	std::uint32_t pmu_type = 0;
	std::uint64_t config = 0;
	std::uint64_t config1 = 0;
	std::uint64_t config2 = 0;
	std::int32_t cpu = HWSIG_EVENT_ALL_CPUS;
};

struct KmodInfo {
	std::uint32_t abi_version = 0;
	std::uint32_t compat_version = 0;
	std::uint32_t nr_cpu_ids = 0;
	std::uint32_t nr_online_cpus = 0;
	std::uint32_t ring_records = 0;
	std::uint32_t record_size = 0;
	std::uint64_t mmap_size = 0;
	std::uint64_t sample_interval_ns = 0;
	std::uint32_t max_events = 0;
	std::uint64_t min_interval_ns = 0;
	std::uint64_t max_interval_ns = 0;
	std::uint32_t max_ring_records = 0;
	bool running = false;
	std::uint64_t config_generation = 0;
	std::uint32_t config_flags = 0;   // HWSIG_CONFIG_F_* of the configuration
	std::uint64_t ring_bytes_max = 0; // cap on all ring sets alive together
	std::uint64_t ring_bytes = 0;     // bytes of ring sets alive now
	std::vector<KmodEvent> events; // as configured (when the module reports them)
};

struct KmodConfig {
	std::uint64_t sample_interval_ns = HWSIG_DEFAULT_INTERVAL_NS;
	std::optional<std::uint32_t> ring_records; // module default when unset
	std::uint32_t flags = 0;                   // HWSIG_CONFIG_F_*
	std::vector<KmodEvent> events;
};

struct KmodStatusEntry {
	std::uint32_t event_index = 0;
	std::uint32_t cpu = 0;
	std::int32_t error = 0; // 0 active, else -errno
	std::uint64_t time_enabled = 0;
	std::uint64_t time_running = 0;
	std::uint64_t value = 0;
};

struct KmodStatus {
	bool running = false;
	std::uint64_t config_generation = 0;
	std::uint64_t sample_interval_ns = 0;
	std::uint64_t sample_cost_avg_ns = 0; // counter reads + record write, per CPU per tick
	std::uint64_t sample_cost_max_ns = 0;
	std::uint64_t sample_latency_avg_ns = 0; // timer fire -> record published, per CPU per tick
	std::uint64_t sample_latency_max_ns = 0;
	std::uint64_t ticks_overrun = 0; // timer periods that passed without the timer firing, all CPUs
	std::uint64_t ticks_skipped = 0; // ticks that wrote no record: the previous work had not run yet
	std::uint64_t records_written = 0;
	std::uint64_t records_overwritten = 0;
	std::vector<KmodStatusEntry> entries;
};

// hwsig.ko is not loaded: its generic-netlink family does not resolve
// (err() is ENOENT).
class KmodNotLoaded : public Error {
public:
	KmodNotLoaded(const std::string &doing, int err);
};

// The attribute spaces of <linux/hwsig.h>: the top level, inside
// HWSIG_ATTR_EVENT, inside HWSIG_ATTR_STATUS_ENTRY.
enum class KmodAttrSet { Top, Event, StatusEntry };
// True when KmodClient has a policy entry (a type it checks) for attr.
bool kmod_attr_known(KmodAttrSet set, int attr);

// A generic-netlink conversation with the "hwsig" family. Every failure
// throws Error carrying errno and, when the kernel sent one, its extack
// message ("configuring hwsig: Invalid argument (kernel: unknown PMU type 99)").
class KmodClient {
public:
	// Connects and resolves the family; KmodNotLoaded when hwsig.ko is not loaded.
	KmodClient();
	~KmodClient();
	KmodClient(const KmodClient &) = delete;
	KmodClient &operator=(const KmodClient &) = delete;
	KmodClient(KmodClient &&) noexcept;
	KmodClient &operator=(KmodClient &&) noexcept;

	int family_id() const noexcept;
	// Refuses (Error, EPROTO) a module whose ABI this reader cannot read.
	KmodInfo get_info();
	void configure(const KmodConfig &config);
	void start();
	void stop();
	KmodStatus get_status();

	struct Impl;

private:
	std::unique_ptr<Impl> impl_;
};

// The extack text (NLMSGERR_ATTR_MSG) of a netlink NLMSG_ERROR message of
// `length` bytes starting at its nlmsghdr; empty when there is none or when
// the message is malformed.
std::string netlink_extack_message(const void *message, std::size_t length);

// "module ABI 3 (compatible back to 2) but this reader is ABI 1": empty when
// compatible. The one wording for the version check, shared by both paths.
std::string abi_mismatch(std::uint32_t module_abi, std::uint32_t module_compat);

// The validated geometry of a mapping (copied out of the control page once
// every bound has been checked against the mapping's length).
struct RingGeometry {
	std::uint32_t abi_version = 0;
	std::uint32_t compat_version = 0;
	std::uint32_t nr_cpu_ids = 0;
	bool configured = false; // false: loaded, never configured, no rings yet
	std::uint64_t ring_offset = 0;
	std::uint64_t ring_stride = 0;
	std::uint64_t data_offset = 0;
	std::uint32_t ring_records = 0;
	std::uint32_t record_size = 0;
	std::uint32_t nr_events = 0;
	bool running = false;
	std::uint64_t sample_interval_ns = 0;
	std::uint64_t config_generation = 0;
	std::uint64_t ring_set = 0; // the ring set the control page names (ABI 2)
};

// Checks a control page against the length of the mapping that holds it.
// Returns the geometry, or throws Error(EPROTO) saying which field is wrong.
RingGeometry validate_control_page(const void *mapping, std::size_t mapping_length);

// Reads the per-CPU rings of a mapping laid out per <linux/hwsig.h>.
// Single-threaded: one reader per mapping; producers may run concurrently.
class RingReader {
public:
	enum class Start {
		Oldest, // everything still in the rings (flight recorder)
		Newest, // only records written from now on
	};

	// Maps /dev/hwsig (or another device node) read-only.
	static RingReader open_device(const std::string &path, Start start = Start::Newest);
	// Reads an existing mapping (tests, benchmarks); must outlive the reader.
	RingReader(const void *mapping, std::size_t length, Start start = Start::Newest);

	RingReader(RingReader &&) noexcept = default;
	RingReader &operator=(RingReader &&) noexcept = default;

	const RingGeometry &geometry() const noexcept { return geometry_; }

	struct ReadStats {
		std::uint64_t accepted = 0;
		std::uint64_t lost = 0; // overwritten before or while being read
	};
	// Appends the complete records of `cpu` written since the last call,
	// in ring order. Invalid cpu: Error(EINVAL).
	ReadStats read_cpu(unsigned cpu, std::vector<hwsig_record> &out);
	// The same for every CPU id.
	ReadStats read_all(std::vector<hwsig_record> &out);
	// The newest complete record of `cpu` (without moving the tail); nullopt
	// when none is complete.
	std::optional<hwsig_record> latest(unsigned cpu) const;

	// Maps `fd` (/dev/hwsig) whole: copies the control page under its
	// sequence count, maps mmap_size bytes and checks that the rings mapped
	// are the ring set the copy names (CPU 0's header); maps again while
	// they are not (a reconfiguration in between). Throws Error.
	static Mapping map_validated(int fd, const std::string &path, hwsig_control_page &copy);

	// Rereads the control page. When the module runs another ring set,
	// maps it again (a device reader) and starts at the oldest record of
	// the new rings; when only config_generation changed, the rings are the
	// same and nothing already read is delivered again. Returns true when
	// config_generation or the rings changed (records' event slots may
	// mean other events now).
	bool refresh();

	// Whether the module samples cpu now (false for an invalid cpu or no
	// rings).
	bool cpu_online(unsigned cpu) const;
	// Where the next read_cpu(cpu) starts: with Start::Oldest, before the
	// first read, every record before it was overwritten before the mapping.
	std::uint64_t tail(unsigned cpu) const { return cpu < tail_.size() ? tail_[cpu] : 0; }

	std::uint64_t lost(unsigned cpu) const;
	std::uint64_t total_lost() const noexcept;
	std::uint64_t total_accepted() const noexcept;

private:
	RingReader() = default;
	void reset_tails(Start start);
	const hwsig_ring_header *header(unsigned cpu) const;
	const hwsig_record *record(unsigned cpu, std::uint64_t idx) const;
	// Copies record idx when it is complete and was not overwritten during
	// the copy.
	bool copy_record(const hwsig_record *rec, std::uint64_t idx, hwsig_record &out) const;

	Fd fd_;
	Mapping owned_; // empty when reading a caller's mapping
	const unsigned char *base_ = nullptr;
	std::size_t length_ = 0;
	RingGeometry geometry_;
	std::vector<std::uint64_t> tail_;
	std::vector<std::uint64_t> lost_;
	std::uint64_t total_lost_ = 0;
	std::uint64_t total_accepted_ = 0;
};

} // namespace hwsig
