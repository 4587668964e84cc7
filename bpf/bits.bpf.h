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

/* The slot of v, clamped to the last of nr_slots. */
static __always_inline __u32 hwsig_slot(__u64 v, __u32 nr_slots)
{
	__u64 slot = hwsig_log2l(v);

	return slot >= nr_slots ? nr_slots - 1 : (__u32)slot;
}

#endif
