/* log2 slots as libbpf-tools computes them (bits.bpf.h there): log2l(0) and
 * log2l(1) are 0, log2l(v) = floor(log2(v)) otherwise. */
#ifndef HWSIG_BITS_BPF_H
#define HWSIG_BITS_BPF_H

static __always_inline __u64 hwsig_log2(__u32 v)
{
	__u32 shift, r;

	r = (v > 0xFFFF) << 4; v >>= r;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u64 hwsig_log2l(__u64 v)
{
	__u32 hi = v >> 32;

	if (hi)
		return hwsig_log2(hi) + 32;
	return hwsig_log2(v);
}

/*
 * The slot of v, clamped to the last of nr_slots: an array index the
 * verifier accepts. 64-bit on purpose, and kept in one register by
 * barrier_var(): a 32-bit index is zero-extended by clang (without alu32)
 * on a fresh copy, and the 6.1 verifier does not carry the bound checked on
 * one copy over to another ("unbounded memory access").
 */
static __always_inline __u64 hwsig_slot(__u64 v, __u64 nr_slots)
{
	__u64 slot = hwsig_log2l(v);

	if (slot >= nr_slots)
		slot = nr_slots - 1;
	barrier_var(slot);
	return slot;
}

/*
 * 1 if v > c, else 0, for v and c below 2^63, without a branch (c - v wraps
 * past 2^63 exactly when v > c). barrier_var() hides v's range from the
 * compiler, which would otherwise turn this back into a compare and a
 * conditional jump (BPF has no setcc or cmov). Used so that the slot of a
 * hot path is three loads and a few ALU ops whatever the value; a fully
 * branch-free log2 measured no faster than the table (Documentation/bpf.rst).
 */
static __always_inline __u64 hwsig_gt(__u64 v, __u64 c)
{
	barrier_var(v);
	return (c - v) >> 63;
}

/* floor(log2(b)) of a byte; 0 for 0 and 1. */
static const __u8 hwsig_log2_byte[256] = {
#define HWSIG_R4(x) x, x, x, x
#define HWSIG_R16(x) HWSIG_R4(x), HWSIG_R4(x), HWSIG_R4(x), HWSIG_R4(x)
	0, 0, 1, 1, HWSIG_R4(2), HWSIG_R4(3), HWSIG_R4(3),
	HWSIG_R16(4), HWSIG_R16(5), HWSIG_R16(5),
	HWSIG_R16(6), HWSIG_R16(6), HWSIG_R16(6), HWSIG_R16(6),
	HWSIG_R16(7), HWSIG_R16(7), HWSIG_R16(7), HWSIG_R16(7),
	HWSIG_R16(7), HWSIG_R16(7), HWSIG_R16(7), HWSIG_R16(7),
#undef HWSIG_R16
#undef HWSIG_R4
};

/*
 * hwsig_slot(ns / unit, nr_slots) for the scheduler's hot path: no divide
 * (BPF has no multiply-high, so clang keeps a 64-bit div for a division by
 * a constant) and, below 2^16 units, a table lookup instead of the five
 * dependent steps of hwsig_log2l(). 2^shift is the power of two just above
 * unit (1024 for 1000, 2^20 for 10^6), so v = ns >> shift is at most
 * q = ns / unit and more than half of it: log2(q) is log2(v) or one more,
 * and it is one more exactly when ns reaches unit << (log2(v) + 1).
 * Exact for ns below 2^62 (tests/unit/test_bpf_bits.cpp).
 */
static __always_inline __u64 hwsig_slot_scaled(__u64 ns, __u32 shift, __u64 unit, __u64 nr_slots)
{
	__u64 v = ns >> shift, hi, slot;

	if (v >> 16) {		/* 65 ms (or s) and longer: rare */
		slot = hwsig_log2l(v);
	} else {
		hi = hwsig_gt(v, 0xFF) << 3;
		slot = hwsig_log2_byte[(v >> hi) & 0xFF] + hi;
	}
	if (slot >= nr_slots - 1)
		slot = nr_slots - 1;
	else
		slot += hwsig_gt(ns + 1, unit << (slot + 1));
	barrier_var(slot);
	return slot;
}

/* The log2 slot of a duration in ns, in microseconds or milliseconds. */
static __always_inline __u64 hwsig_time_slot(__u64 ns, bool in_ms, __u64 nr_slots)
{
	return in_ms ? hwsig_slot_scaled(ns, 20, 1000000, nr_slots)
		     : hwsig_slot_scaled(ns, 10, 1000, nr_slots);
}

/* The slot a block disk generation's search starts at (block.bpf.c's
 * slot_of()), before the table's mask: Fibonacci hashing of its tag. */
static __always_inline __u32 hwsig_block_hash(__u64 tag)
{
	return (__u32)((tag * 0x9E3779B97F4A7C15ull) >> 40);
}

#endif
