// The BPF-side log2 helpers of bpf/bits.bpf.h, compiled in userspace and
// checked against plain references: exhaustively for small values, at every
// power-of-two boundary, and on fixed-seed random 64-bit values.
#include <catch2/catch.hpp>

#include <linux/types.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

// What the BPF build provides (vmlinux.h and libbpf's bpf_helpers.h).
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#ifndef barrier_var
#define barrier_var(var) asm volatile("" : "+r"(var))
#endif

#include "../../bpf/bits.bpf.h"
#include "../../bpf/hwsig_block.h"

namespace {

constexpr std::uint64_t kUs = 1000;
constexpr std::uint64_t kMs = 1000000;
constexpr std::uint64_t kSlots = 27;

std::uint64_t ref_log2(std::uint64_t v)
{
	return v < 2 ? 0 : 63 - static_cast<std::uint64_t>(__builtin_clzll(v));
}

std::uint64_t ref_slot(std::uint64_t v, std::uint64_t nr_slots)
{
	return std::min(ref_log2(v), nr_slots - 1);
}

std::uint64_t ref_slot_scaled(std::uint64_t ns, std::uint64_t unit, std::uint64_t nr_slots)
{
	return ref_slot(ns / unit, nr_slots);
}

// Counts mismatches and keeps the first one, so that millions of inputs cost
// one assertion each test case instead of one per input.
struct Mismatches {
	std::uint64_t checked = 0;
	std::uint64_t count = 0;
	std::string first;

	void expect(bool ok, const std::string &what)
	{
		++checked;
		if (!ok && count++ == 0)
			first = what;
	}
};

void expect_log2l(Mismatches &m, std::uint64_t v)
{
	std::uint64_t got = hwsig_log2l(v), want = ref_log2(v);
	if (got != want) // build the message only on failure
		m.expect(false, "hwsig_log2l(" + std::to_string(v) + ") = " + std::to_string(got) + ", want " +
					std::to_string(want));
	else
		m.expect(true, {});
}

// Both units (µs: shift 10, ms: shift 20) for one ns, at nr_slots 27 and 5,
// and through hwsig_time_slot().
void expect_scaled(Mismatches &m, std::uint64_t ns)
{
	struct Case {
		std::uint32_t shift;
		std::uint64_t unit;
	};
	static constexpr Case cases[] = {{10, kUs}, {20, kMs}};
	static constexpr std::uint64_t slot_counts[] = {kSlots, 5};
	for (const Case &c : cases) {
		for (std::uint64_t n : slot_counts) {
			std::uint64_t got = hwsig_slot_scaled(ns, c.shift, c.unit, n);
			std::uint64_t want = ref_slot_scaled(ns, c.unit, n);
			if (got != want)
				m.expect(false, "hwsig_slot_scaled(" + std::to_string(ns) + ", " + std::to_string(c.shift) +
							", " + std::to_string(c.unit) + ", " + std::to_string(n) +
							") = " + std::to_string(got) + ", want " + std::to_string(want));
			else
				m.expect(true, {});
		}
		std::uint64_t got = hwsig_time_slot(ns, c.unit == kMs, kSlots);
		std::uint64_t want = ref_slot_scaled(ns, c.unit, kSlots);
		if (got != want)
			m.expect(false, "hwsig_time_slot(" + std::to_string(ns) + ", " + (c.unit == kMs ? "true" : "false") +
						", 27) = " + std::to_string(got) + ", want " + std::to_string(want));
		else
			m.expect(true, {});
	}
}

void report(const Mismatches &m)
{
	INFO("checked " << m.checked << " inputs; first mismatch: " << m.first);
	CHECK(m.count == 0);
}

} // namespace

TEST_CASE("bpf bits: hwsig_log2l is floor(log2(v)), 0 for 0 and 1", "[bpf-bits]")
{
	Mismatches m;
	for (std::uint64_t v = 0; v < (1ULL << 20); ++v)
		expect_log2l(m, v);
	for (unsigned k = 0; k < 64; ++k) {
		std::uint64_t p = 1ULL << k;
		expect_log2l(m, p - 1);
		expect_log2l(m, p);
		expect_log2l(m, p + 1);
	}
	expect_log2l(m, ~0ULL);
	std::mt19937_64 rng(0x6877736967ULL);
	for (int i = 0; i < 1000000; ++i) {
		std::uint64_t r = rng();
		expect_log2l(m, r);
		expect_log2l(m, r >> (r & 63)); // every bit length, not just ~64
	}
	report(m);

	// Spot values, so that a wrong reference cannot hide a wrong helper.
	CHECK(hwsig_log2l(0) == 0);
	CHECK(hwsig_log2l(1) == 0);
	CHECK(hwsig_log2l(2) == 1);
	CHECK(hwsig_log2l(3) == 1);
	CHECK(hwsig_log2l(1023) == 9);
	CHECK(hwsig_log2l(1024) == 10);
	CHECK(hwsig_log2l(0xFFFFFFFFULL) == 31);
	CHECK(hwsig_log2l(0x100000000ULL) == 32);
	CHECK(hwsig_log2l(~0ULL) == 63);
}

TEST_CASE("bpf bits: hwsig_slot clamps log2l to nr_slots - 1", "[bpf-bits]")
{
	Mismatches m;
	static constexpr std::uint64_t slot_counts[] = {1, 2, 5, 27, 64};
	auto expect_slot = [&](std::uint64_t v) {
		for (std::uint64_t n : slot_counts) {
			std::uint64_t got = hwsig_slot(v, n), want = ref_slot(v, n);
			if (got != want)
				m.expect(false, "hwsig_slot(" + std::to_string(v) + ", " + std::to_string(n) +
							") = " + std::to_string(got) + ", want " + std::to_string(want));
			else
				m.expect(true, {});
		}
	};
	for (std::uint64_t v = 0; v < (1ULL << 16); ++v)
		expect_slot(v);
	for (unsigned k = 0; k < 64; ++k) {
		std::uint64_t p = 1ULL << k;
		expect_slot(p - 1);
		expect_slot(p);
		expect_slot(p + 1);
	}
	std::mt19937_64 rng(0x736c6f74ULL);
	for (int i = 0; i < 200000; ++i) {
		std::uint64_t r = rng();
		expect_slot(r >> (r & 63));
	}
	report(m);

	CHECK(hwsig_slot(0, 27) == 0);
	CHECK(hwsig_slot(1ULL << 26, 27) == 26);
	CHECK(hwsig_slot(1ULL << 27, 27) == 26);
	CHECK(hwsig_slot(~0ULL, 27) == 26);
	CHECK(hwsig_slot(15, 5) == 3);
	CHECK(hwsig_slot(16, 5) == 4);
	CHECK(hwsig_slot(1ULL << 40, 5) == 4);
}

TEST_CASE("bpf bits: hwsig_gt is v > c below 2^63", "[bpf-bits]")
{
	Mismatches m;
	auto expect_gt = [&](std::uint64_t v, std::uint64_t c) {
		std::uint64_t got = hwsig_gt(v, c), want = v > c ? 1 : 0;
		if (got != want)
			m.expect(false, "hwsig_gt(" + std::to_string(v) + ", " + std::to_string(c) + ") = " +
						std::to_string(got) + ", want " + std::to_string(want));
		else
			m.expect(true, {});
	};
	for (std::uint64_t v = 0; v < 512; ++v)
		for (std::uint64_t c = 0; c < 512; ++c)
			expect_gt(v, c);

	constexpr std::uint64_t top = (1ULL << 63) - 1;
	std::vector<std::uint64_t> edges = {0, 1, 2, 0xFF, 0x100, 0xFFFF, 0x10000, 0xFFFFFFFFULL, 0x100000000ULL,
					    top - 1, top};
	for (unsigned k = 0; k < 63; ++k) {
		std::uint64_t p = 1ULL << k;
		edges.push_back(p - 1);
		edges.push_back(p);
		edges.push_back(p + 1);
	}
	for (std::uint64_t v : edges)
		for (std::uint64_t c : edges)
			expect_gt(v, c);

	std::mt19937_64 rng(0x6774ULL);
	for (int i = 0; i < 300000; ++i) {
		std::uint64_t c = rng() >> 1, v = rng() >> 1;
		expect_gt(v, c);
		expect_gt(c, c);
		if (c > 0)
			expect_gt(c - 1, c);
		if (c < top)
			expect_gt(c + 1, c);
	}
	report(m);

	CHECK(hwsig_gt(1, 0) == 1);
	CHECK(hwsig_gt(0, 0) == 0);
	CHECK(hwsig_gt(0, 1) == 0);
	CHECK(hwsig_gt(top, top - 1) == 1);
	CHECK(hwsig_gt(top, 0) == 1);
	CHECK(hwsig_gt(0, top) == 0);
	CHECK(hwsig_gt(top, top) == 0);
}

TEST_CASE("bpf bits: hwsig_log2_byte is floor(log2(b)) for every byte", "[bpf-bits]")
{
	STATIC_REQUIRE(sizeof(hwsig_log2_byte) == 256);
	for (unsigned b = 0; b < 256; ++b) {
		INFO("b = " << b);
		CHECK(hwsig_log2_byte[b] == ref_log2(b));
	}
}

TEST_CASE("bpf bits: hwsig_slot_scaled is the clamped log2 of ns / unit (us, ms)", "[bpf-bits]")
{
	Mismatches m;

	// Every ns below 2^22 (4.2 ms: µs slots 0..11, the table path), and the
	// ms case with a stride up to 2^36 (68.7 s: both paths, every clamp).
	for (std::uint64_t ns = 0; ns < (1ULL << 22); ++ns)
		expect_scaled(m, ns);
	for (std::uint64_t ns = 1ULL << 22; ns < (1ULL << 36); ns += 65521)
		expect_scaled(m, ns);

	// unit * 2^k - 1, unit * 2^k, unit * 2^k + 1: where the true slot changes.
	for (std::uint64_t unit : {kUs, kMs})
		for (unsigned k = 0; k <= 40; ++k) {
			std::uint64_t b = unit << k;
			expect_scaled(m, b - 1);
			expect_scaled(m, b);
			expect_scaled(m, b + 1);
		}

	// Around v = ns >> shift = 2^16, where the table gives way to log2l(),
	// and around v = 2^8, where the table's high byte takes over.
	for (std::uint32_t shift : {10u, 20u})
		for (std::uint64_t v : {1ULL << 8, 1ULL << 16}) {
			std::uint64_t mid = v << shift;
			std::uint64_t span = 4ULL << shift;
			for (std::uint64_t ns = mid - span; ns < mid + span; ++ns)
				expect_scaled(m, ns);
		}

	// Powers of two of ns (the shift's boundaries) and their neighbours.
	for (unsigned k = 1; k < 62; ++k) {
		std::uint64_t p = 1ULL << k;
		expect_scaled(m, p - 1);
		expect_scaled(m, p);
		expect_scaled(m, p + 1);
	}
	expect_scaled(m, (1ULL << 62) - 1);

	std::mt19937_64 rng(0x7363616c6564ULL);
	for (int i = 0; i < 1000000; ++i) {
		std::uint64_t r = rng() >> 2; // below 2^62
		// Half uniform (mostly huge, clamped), half of every bit length.
		expect_scaled(m, (i & 1) ? r >> (rng() % 62) : r);
	}
	report(m);

	CHECK(hwsig_slot_scaled(0, 10, kUs, kSlots) == 0);
	CHECK(hwsig_slot_scaled(1999, 10, kUs, kSlots) == 0);
	CHECK(hwsig_slot_scaled(2000, 10, kUs, kSlots) == 1);
	CHECK(hwsig_slot_scaled(1023999, 10, kUs, kSlots) == 9);
	CHECK(hwsig_slot_scaled(1024000, 10, kUs, kSlots) == 10);
	CHECK(hwsig_slot_scaled(kUs << 26, 10, kUs, kSlots) == 26);
	CHECK(hwsig_slot_scaled((kUs << 26) - 1, 10, kUs, kSlots) == 25);
	CHECK(hwsig_slot_scaled(kMs * 3, 20, kMs, kSlots) == 1);
	CHECK(hwsig_slot_scaled(kMs * 4 - 1, 20, kMs, kSlots) == 1);
	CHECK(hwsig_slot_scaled(kMs * 4, 20, kMs, kSlots) == 2);
	CHECK(hwsig_slot_scaled(kMs * 16, 10, kUs, 5) == 4);
	CHECK(hwsig_slot_scaled(kMs * 16, 20, kMs, 5) == 4);
	CHECK(hwsig_slot_scaled(kMs * 15, 20, kMs, 5) == 3);
	CHECK(hwsig_time_slot(kMs * 4, true, kSlots) == 2);
	CHECK(hwsig_time_slot(kMs * 4, false, kSlots) == 11);
}

TEST_CASE("bpf bits: hwsig_slot_scaled is exact unclamped below 2^62", "[bpf-bits]")
{
	// nr_slots 64 never clamps, so every log2 up to 51 (µs) or 41 (ms)
	// goes through the unit << (slot + 1) comparison.
	Mismatches m;
	auto expect64 = [&](std::uint64_t ns) {
		for (auto [shift, unit] : {std::pair<std::uint32_t, std::uint64_t>{10, kUs}, {20, kMs}}) {
			std::uint64_t got = hwsig_slot_scaled(ns, shift, unit, 64);
			std::uint64_t want = ref_slot_scaled(ns, unit, 64);
			if (got != want)
				m.expect(false, "hwsig_slot_scaled(" + std::to_string(ns) + ", " + std::to_string(shift) +
							", " + std::to_string(unit) + ", 64) = " + std::to_string(got) +
							", want " + std::to_string(want));
			else
				m.expect(true, {});
		}
	};
	for (std::uint64_t unit : {kUs, kMs})
		for (unsigned k = 0; unit << k < (1ULL << 62); ++k) {
			std::uint64_t b = unit << k;
			expect64(b - 1);
			expect64(b);
			expect64(b + 1);
		}
	expect64((1ULL << 62) - 1);
	std::mt19937_64 rng(0x3634ULL);
	for (int i = 0; i < 200000; ++i) {
		std::uint64_t r = rng() >> 2;
		expect64((i & 1) ? r >> (rng() % 62) : r);
	}
	report(m);
}

// Issue 34, item 7: the table of disks (block.bpf.c's slot_of()) with the
// program's hash and probe rule: search from the hash slot for the tag,
// else claim the first free slot from there, within `probes` slots. Disks
// of a host's usual kinds (NVMe, virtio, SCSI, device-mapper, loop), each
// with a diskseq, arrive one by one. With 16 probes some disk found no free
// slot well before the 256 the note promised; searching the whole table,
// every one of 256 finds a slot.
TEST_CASE("block table: a new disk finds a free slot until the table is full", "[bpf][bits]")
{
	constexpr unsigned kSlots = HWSIG_BLOCK_MAX_DEVS, kMask = kSlots - 1;
	auto first_refused = [&](unsigned probes, std::uint32_t seed) -> unsigned {
		std::vector<std::uint64_t> table(kSlots, 0);
		std::mt19937 rng(seed);
		const unsigned majors[] = {259, 253, 252, 8, 254, 7};
		std::vector<unsigned> minors(std::size(majors), 0);
		std::uint64_t diskseq = 1 + rng() % 100;
		for (unsigned n = 0; n < kSlots; ++n) {
			const unsigned k = rng() % std::size(majors);
			const std::uint32_t dev = (majors[k] << 20) | minors[k]++;
			diskseq += 1 + rng() % 8;
			const std::uint64_t tag = HWSIG_BLOCK_TAG(dev, diskseq);
			const std::uint32_t h = hwsig_block_hash(tag);
			bool placed = false;
			for (unsigned i = 0; i < probes && i <= kMask && !placed; ++i) {
				std::uint64_t &slot = table[(h + i) & kMask];
				if (!slot) {
					slot = tag;
					placed = true;
				}
			}
			if (!placed)
				return n + 1; // the disk that found none
		}
		return 0; // every disk placed
	};
	unsigned earliest = kSlots;
	for (std::uint32_t seed = 1; seed <= 20; ++seed) {
		INFO("seed " << seed);
		CHECK(first_refused(HWSIG_BLOCK_PROBES, seed) == 0);
		const unsigned refused = first_refused(16, seed);
		if (refused)
			earliest = std::min(earliest, refused);
	}
	INFO("with 16 probes the first disk refused came at " << earliest << " of " << kSlots);
	CHECK(earliest < kSlots); // the old rule fails the capacity it states
}
