// Reader of the per-CPU rings in the mmap of /dev/hwsig. The protocol and its
// barrier pairs are those of struct hwsig_ring_header in <linux/hwsig.h>; the
// letters (C), (D), (F) below name the reader's half of each pair.
//
// Nothing read from the mapping is trusted: the control page is copied and
// every offset/size checked against the mapping length before use, and a
// record only counts when its two sequence numbers agree with its index.

#include "hwsig/kmod.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwsig/error.h"

namespace hwsig {

namespace {

constexpr std::size_t kWordsPerRecord = sizeof(hwsig_record) / sizeof(std::uint64_t);
static_assert(sizeof(hwsig_record) % sizeof(std::uint64_t) == 0);
static_assert(offsetof(hwsig_record, seq) == 0);
static_assert(offsetof(hwsig_record, seq_end) == sizeof(hwsig_record) - sizeof(std::uint64_t));
static_assert(sizeof(hwsig_control_page) % sizeof(std::uint64_t) == 0);

// Upper bounds far above any real machine that keep the arithmetic below
// away from overflow even before the checked multiplications.
constexpr std::uint32_t kMaxCpuIds = 1u << 16;
constexpr std::uint64_t kMaxMappingBytes = 1ull << 40;

std::uint64_t load_relaxed(const std::uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

std::uint64_t load_acquire(const std::uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

// (F): pairs with the producer's store-release of head (E).
std::uint64_t load_head(const hwsig_ring_header *h)
{
	return __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
}

bool is_pow2(std::uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

[[noreturn]] void bad_layout(const std::string &what)
{
	throw Error("reading the hwsig control page: " + what, EPROTO);
}

// The module publishes the control page under a sequence count (odd while
// it writes; <linux/hwsig.h>): load seq with acquire (J), copy the page, a
// read barrier (H), load seq again; the copy is consistent iff both loads
// saw the same even count. A writer holds the count odd only inside one
// spinlocked section, so a few thousand tries are plenty; a page that
// never settles is refused rather than half read.
hwsig_control_page snapshot_control(const void *mapping)
{
	auto src = static_cast<const std::uint64_t *>(mapping);
	constexpr std::size_t kSeqWord = offsetof(hwsig_control_page, seq) / sizeof(std::uint64_t);
	std::uint64_t words[sizeof(hwsig_control_page) / sizeof(std::uint64_t)];
	for (int attempt = 0; attempt < 100000; attempt++) {
		const std::uint64_t seq = load_acquire(src + kSeqWord); // (J) pairs with the module's (I)
		if (seq & 1)
			continue;
		for (std::size_t i = 0; i < std::size(words); i++)
			words[i] = load_relaxed(src + i);
		std::atomic_thread_fence(std::memory_order_acquire); // (H) pairs with the module's (G)
		if (load_relaxed(src + kSeqWord) == seq) {
			hwsig_control_page cp;
			std::memcpy(&cp, words, sizeof(cp));
			return cp;
		}
	}
	throw Error("reading the hwsig control page: it kept changing (sequence count never settled)", EAGAIN);
}

const hwsig_ring_header *first_header(const void *mapping, const hwsig_control_page &cp)
{
	return reinterpret_cast<const hwsig_ring_header *>(static_cast<const unsigned char *>(mapping) +
							   cp.ring_offset);
}

} // namespace

std::string abi_mismatch(std::uint32_t module_abi, std::uint32_t module_compat)
{
	if (hwsig_abi_compatible(module_abi, module_compat))
		return {};
	return "hwsig.ko speaks ABI " + std::to_string(module_abi) + " (readable by ABI >= " +
	       std::to_string(module_compat) + ") but this reader is ABI " +
	       std::to_string(HWSIG_ABI_VERSION) + " (reads modules of ABI >= " +
	       std::to_string(HWSIG_ABI_COMPAT_VERSION) + ")";
}

RingGeometry validate_control_page(const void *mapping, std::size_t length)
{
	if (!mapping || length < sizeof(hwsig_control_page))
		bad_layout("mapping of " + std::to_string(length) + " bytes is smaller than the " +
			   std::to_string(sizeof(hwsig_control_page)) + "-byte control page");
	if (reinterpret_cast<std::uintptr_t>(mapping) % alignof(std::uint64_t))
		bad_layout("mapping is not 8-byte aligned");
	const hwsig_control_page cp = snapshot_control(mapping);

	// The version check comes first: a newer layout may legitimately fail
	// every check below, and the versions are what the user needs to see.
	if (std::string why = abi_mismatch(cp.abi_version, cp.compat_version); !why.empty())
		throw Error("refusing hwsig.ko: " + why, EPROTO);

	auto field = [](const char *name, std::uint64_t v) {
		return std::string(name) + " = " + std::to_string(v);
	};
	if (cp.nr_cpu_ids == 0 || cp.nr_cpu_ids > kMaxCpuIds)
		bad_layout(field("nr_cpu_ids", cp.nr_cpu_ids) + " is out of range");
	RingGeometry g;
	g.abi_version = cp.abi_version;
	g.compat_version = cp.compat_version;
	g.nr_cpu_ids = cp.nr_cpu_ids;
	g.running = cp.running != 0;
	g.sample_interval_ns = cp.sample_interval_ns;
	g.config_generation = cp.config_generation;
	g.ring_set = cp.ring_set;
	if (cp.ring_records == 0) {
		// Loaded but never configured: a control page and no rings yet.
		g.configured = false;
		return g;
	}
	if (cp.record_size != sizeof(hwsig_record))
		bad_layout(field("record_size", cp.record_size) + ", expected " +
			   std::to_string(sizeof(hwsig_record)));
	if (!is_pow2(cp.ring_records) || cp.ring_records < HWSIG_MIN_RING_RECORDS ||
	    cp.ring_records > HWSIG_MAX_RING_RECORDS)
		bad_layout(field("ring_records", cp.ring_records) +
			   " is not a power of two within the ABI limits");
	if (cp.nr_events > HWSIG_MAX_EVENTS)
		bad_layout(field("nr_events", cp.nr_events) + " exceeds HWSIG_MAX_EVENTS");
	if (cp.ring_offset < sizeof(hwsig_control_page) || cp.ring_offset % 8)
		bad_layout(field("ring_offset", cp.ring_offset) + " overlaps the control page or is misaligned");
	if (cp.data_offset < sizeof(hwsig_ring_header) || cp.data_offset % 8)
		bad_layout(field("data_offset", cp.data_offset) + " overlaps the ring header or is misaligned");
	if (cp.ring_stride % 8)
		bad_layout(field("ring_stride", cp.ring_stride) + " is misaligned");

	std::uint64_t ring_bytes, ring_extent, rings_bytes, end;
	if (__builtin_mul_overflow(static_cast<std::uint64_t>(cp.ring_records), cp.record_size, &ring_bytes) ||
	    __builtin_add_overflow(cp.data_offset, ring_bytes, &ring_extent) || ring_extent > cp.ring_stride)
		bad_layout(field("ring_stride", cp.ring_stride) + " cannot hold data_offset + " +
			   std::to_string(cp.ring_records) + " records");
	if (__builtin_mul_overflow(static_cast<std::uint64_t>(cp.nr_cpu_ids), cp.ring_stride, &rings_bytes) ||
	    __builtin_add_overflow(cp.ring_offset, rings_bytes, &end) || end > length ||
	    end > kMaxMappingBytes)
		bad_layout("rings of " + std::to_string(cp.nr_cpu_ids) + " CPUs end past the " +
			   std::to_string(length) + "-byte mapping");

	g.configured = true;
	g.ring_offset = cp.ring_offset;
	g.ring_stride = cp.ring_stride;
	g.data_offset = cp.data_offset;
	g.ring_records = cp.ring_records;
	g.record_size = cp.record_size;
	g.nr_events = cp.nr_events;
	return g;
}

RingReader::RingReader(const void *mapping, std::size_t length, Start start)
    : base_(static_cast<const unsigned char *>(mapping)), length_(length)
{
	geometry_ = validate_control_page(mapping, length);
	reset_tails(start);
}

Mapping RingReader::map_validated(int fd, const std::string &path, hwsig_control_page &copy)
{
	long page = ::sysconf(_SC_PAGESIZE);
	const std::size_t first = static_cast<std::size_t>(page > 0 ? page : 4096);
	// The control page alone first: it says how long the mapping is.
	Mapping head = Mapping::map_fd(fd, first, PROT_READ, MAP_SHARED, 0, path + " (control page)");
	constexpr int kAttempts = 100;
	for (int attempt = 1;; attempt++) {
		const hwsig_control_page cp = snapshot_control(head.data());
		if (std::string why = abi_mismatch(cp.abi_version, cp.compat_version); !why.empty())
			throw Error("refusing " + path + ": " + why, EPROTO);
		if (cp.mmap_size < first || cp.mmap_size > kMaxMappingBytes)
			throw Error("reading " + path + ": mmap_size " + std::to_string(cp.mmap_size) +
					    " is out of range",
				    EPROTO);
		Mapping m;
		try {
			m = Mapping::map_fd(fd, static_cast<std::size_t>(cp.mmap_size), PROT_READ, MAP_SHARED, 0,
					    path);
		} catch (const Error &e) {
			// The rings shrank between the copy and mmap(): copy again.
			if (e.err() != EINVAL || attempt == kAttempts)
				throw;
			continue;
		}
		// The module picks the ring set mmap() maps under the lock it
		// publishes the control page under: CPU 0's header says whether
		// this mapping got the rings the copy describes.
		if (cp.ring_set == 0 ||
		    (cp.ring_offset + sizeof(hwsig_ring_header) <= m.size() &&
		     __atomic_load_n(&first_header(m.data(), cp)->ring_set, __ATOMIC_ACQUIRE) == cp.ring_set &&
		     first_header(m.data(), cp)->ring_records == cp.ring_records)) {
			copy = cp;
			return m;
		}
		if (attempt == kAttempts)
			throw Error("mapping " + path + ": the rings kept changing under " +
					    std::to_string(kAttempts) + " attempts",
				    EAGAIN);
	}
}

RingReader RingReader::open_device(const std::string &path, Start start)
{
	RingReader r;
	r.fd_ = Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!r.fd_)
		throw_errno("opening " + path);
	hwsig_control_page cp;
	r.owned_ = map_validated(r.fd_.get(), path, cp);
	r.base_ = static_cast<const unsigned char *>(r.owned_.data());
	r.length_ = r.owned_.size();
	r.geometry_ = validate_control_page(r.base_, r.length_);
	r.reset_tails(start);
	return r;
}

const hwsig_ring_header *RingReader::header(unsigned cpu) const
{
	return reinterpret_cast<const hwsig_ring_header *>(base_ + geometry_.ring_offset +
							   std::uint64_t(cpu) * geometry_.ring_stride);
}

const hwsig_record *RingReader::record(unsigned cpu, std::uint64_t idx) const
{
	const std::uint64_t slot = idx & (geometry_.ring_records - 1);
	return reinterpret_cast<const hwsig_record *>(
		reinterpret_cast<const unsigned char *>(header(cpu)) + geometry_.data_offset +
		slot * geometry_.record_size);
}

void RingReader::reset_tails(Start start)
{
	tail_.assign(geometry_.nr_cpu_ids, 0);
	lost_.assign(geometry_.nr_cpu_ids, 0);
	if (!geometry_.configured)
		return;
	for (unsigned cpu = 0; cpu < geometry_.nr_cpu_ids; cpu++) {
		const std::uint64_t head = load_head(header(cpu)); // (F)
		if (start == Start::Newest)
			tail_[cpu] = head;
		else
			tail_[cpu] = head > geometry_.ring_records ? head - geometry_.ring_records : 0;
	}
}

bool RingReader::copy_record(const hwsig_record *rec, std::uint64_t idx, hwsig_record &out) const
{
	const auto *words = reinterpret_cast<const std::uint64_t *>(rec);
	const std::uint64_t want = idx + 1;
	// (C): pairs with the producer's smp_wmb (B) before seq_end: the payload
	// of record idx is visible once its seq_end is.
	const std::uint64_t seq_end = load_acquire(&words[kWordsPerRecord - 1]);
	if (seq_end != want)
		return false;
	// Straight into the caller's record: one copy, word by word (8-byte
	// memcpys compile to plain stores and keep the aliasing rules).
	auto *dst = reinterpret_cast<unsigned char *>(&out);
	for (std::size_t i = 1; i + 1 < kWordsPerRecord; i++) {
		const std::uint64_t v = load_relaxed(&words[i]);
		std::memcpy(dst + i * sizeof(v), &v, sizeof(v));
	}
	// (D): pairs with the producer's smp_wmb (A) after seq: if any word
	// copied above came from an overwriting record, seq shows that record's
	// number below.
	std::atomic_thread_fence(std::memory_order_acquire);
	const std::uint64_t seq = load_relaxed(&words[0]);
	if (seq != want)
		return false;
	out.seq = seq;
	out.seq_end = seq_end;
	return true;
}

RingReader::ReadStats RingReader::read_cpu(unsigned cpu, std::vector<hwsig_record> &out)
{
	if (cpu >= geometry_.nr_cpu_ids)
		throw Error("reading hwsig ring of cpu " + std::to_string(cpu) + " (nr_cpu_ids " +
				    std::to_string(geometry_.nr_cpu_ids) + ")",
			    EINVAL);
	ReadStats st;
	if (!geometry_.configured)
		return st;
	const std::uint64_t head = load_head(header(cpu)); // (F)
	std::uint64_t tail = tail_[cpu];
	if (head < tail) {
		// The ring restarted (a new configuration): nothing between the old
		// tail and the new head exists, so nothing is counted.
		tail_[cpu] = head;
		return st;
	}
	const std::uint64_t size = geometry_.ring_records;
	if (head - tail > size) {
		// Overwritten before we got here: exactly head - size - tail records.
		st.lost += head - size - tail;
		tail = head - size;
	}
	for (std::uint64_t idx = tail; idx < head; idx++) {
		// Copied in place; a record that fails the check is taken back.
		out.emplace_back();
		if (copy_record(record(cpu, idx), idx, out.back())) {
			st.accepted++;
		} else {
			out.pop_back();
			st.lost++;
		}
	}
	tail_[cpu] = head;
	lost_[cpu] += st.lost;
	total_lost_ += st.lost;
	total_accepted_ += st.accepted;
	return st;
}

RingReader::ReadStats RingReader::read_all(std::vector<hwsig_record> &out)
{
	ReadStats all;
	for (unsigned cpu = 0; cpu < geometry_.nr_cpu_ids; cpu++) {
		ReadStats s = read_cpu(cpu, out);
		all.accepted += s.accepted;
		all.lost += s.lost;
	}
	return all;
}

std::optional<hwsig_record> RingReader::latest(unsigned cpu) const
{
	if (cpu >= geometry_.nr_cpu_ids || !geometry_.configured)
		return std::nullopt;
	const std::uint64_t head = load_head(header(cpu)); // (F)
	// A few tries: the newest slots are the ones the producer may be
	// overwriting only if it lapped the whole ring meanwhile.
	hwsig_record rec;
	for (std::uint64_t n = 1; n <= 4 && n <= head && n <= geometry_.ring_records; n++)
		if (copy_record(record(cpu, head - n), head - n, rec))
			return rec;
	return std::nullopt;
}

bool RingReader::refresh()
{
	const hwsig_control_page cp = snapshot_control(base_);
	const bool same_rings = cp.ring_set == geometry_.ring_set && cp.nr_cpu_ids == geometry_.nr_cpu_ids &&
				cp.ring_offset == geometry_.ring_offset && cp.ring_stride == geometry_.ring_stride &&
				cp.data_offset == geometry_.data_offset && cp.ring_records == geometry_.ring_records;
	if (same_rings) {
		// The same rings (a reconfiguration that kept the geometry reuses
		// them, heads and all): the tails stay, so nothing already read
		// comes again; records of the new generation follow in order.
		const bool reconfigured = cp.config_generation != geometry_.config_generation;
		geometry_.running = cp.running != 0;
		geometry_.config_generation = cp.config_generation;
		geometry_.nr_events = cp.nr_events;
		geometry_.sample_interval_ns = cp.sample_interval_ns;
		return reconfigured;
	}
	// Other rings: a device reader maps them; a caller's mapping can only
	// be revalidated (its rings are whatever the caller mapped).
	if (fd_) {
		hwsig_control_page copy;
		owned_ = map_validated(fd_.get(), "/dev/hwsig (remap after reconfiguration)", copy);
		base_ = static_cast<const unsigned char *>(owned_.data());
		length_ = owned_.size();
	}
	geometry_ = validate_control_page(base_, length_);
	// New rings: nothing of them was read yet.
	reset_tails(Start::Oldest);
	return true;
}

bool RingReader::cpu_online(unsigned cpu) const
{
	if (cpu >= geometry_.nr_cpu_ids || !geometry_.configured)
		return false;
	return __atomic_load_n(&header(cpu)->online, __ATOMIC_RELAXED) != 0;
}

std::uint64_t RingReader::lost(unsigned cpu) const
{
	return cpu < lost_.size() ? lost_[cpu] : 0;
}

std::uint64_t RingReader::total_lost() const noexcept
{
	return total_lost_;
}

std::uint64_t RingReader::total_accepted() const noexcept
{
	return total_accepted_;
}

} // namespace hwsig
