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

#endif
