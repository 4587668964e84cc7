// Reads the first slots of a BPF per-CPU array in as few system calls as
// the kernel allows (BPF_MAP_LOOKUP_BATCH), for collectors that read one
// slot per VM every interval: beside 200 VMs, one call instead of 200.
#pragma once

#include <bpf/bpf.h>
#include <linux/types.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <vector>

namespace hwsig::bpf_detail {

// BPF_MAP_LOOKUP_BATCH refused, not failed: a kernel before 5.6 does not
// know the command (EINVAL), one whose map type has no batch operations
// says ENOTSUPP (the kernel's own 524, which libc does not name).
inline bool batch_unsupported(int err)
{
	constexpr int kENOTSUPP = 524;
	return err == EINVAL || err == EOPNOTSUPP || err == kENOTSUPP || err == ENOSYS;
}

// Value: the map's value type. The kernel hands out a per-CPU value as ncpu
// copies of round_up(value size, 8) bytes: a vector of ncpu Values is that
// layout only if no rounding pads it.
template <typename Value> class PercpuBatchReader {
	static_assert(sizeof(Value) % 8 == 0, "per-CPU copies are 8-byte aligned");

public:
	explicit PercpuBatchReader(int ncpu) : ncpu_(static_cast<std::size_t>(ncpu)) {}

	// Slots [0, n) of the array behind fd, per_call slots per call (0:
	// all). False when the batch lookup failed: the caller reads slot by
	// slot, which either works or says why it does not. Once the kernel
	// refused the command, always false without asking again.
	bool read(int fd, __u32 n, std::size_t per_call = 0)
	{
		at_.clear();
		if (!supported_)
			return false;
		keys_.resize(n);
		values_.resize(n * ncpu_);
		at_.assign(n, -1);
		const __u32 step = per_call ? static_cast<__u32>(std::min<std::size_t>(per_call, n)) : n;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		__u32 token = 0, done = 0;
		for (bool first = true; done < n; first = false) {
			__u32 count = std::min(step, n - done);
			const int err = bpf_map_lookup_batch(fd, first ? nullptr : &token, &token, keys_.data() + done,
							     values_.data() + done * ncpu_, &count, &opts)
						? errno
						: 0;
			if (err && err != ENOENT) {
				if (batch_unsupported(err))
					supported_ = false;
				at_.clear();
				return false;
			}
			done += count;
			if (err == ENOENT || count == 0)
				break;
		}
		for (__u32 i = 0; i < done; ++i)
			if (keys_[i] < n)
				at_[keys_[i]] = static_cast<int>(i);
		return true;
	}

	// The ncpu copies of slot `slot` the last read() got, or null.
	const Value *slot(__u32 slot) const
	{
		if (slot >= at_.size() || at_[slot] < 0)
			return nullptr;
		return values_.data() + static_cast<std::size_t>(at_[slot]) * ncpu_;
	}
	// False once the kernel refused the batch command.
	bool supported() const { return supported_; }

private:
	std::size_t ncpu_;
	bool supported_ = true;
	std::vector<__u32> keys_;
	std::vector<Value> values_; // ncpu per key
	std::vector<int> at_;       // slot -> its position in keys_, -1 if not read
};

} // namespace hwsig::bpf_detail
