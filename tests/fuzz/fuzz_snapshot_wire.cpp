// libFuzzer target: decode_snapshot (what hwsigctl reads from hwsigd's
// socket) never crashes; what it accepts survives a second trip exactly.
#include <cstdlib>
#include <string_view>

#include "hwsig/error.h"
#include "hwsig/snapshot_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	hwsig::SharedSnapshot s;
	try {
		s = hwsig::decode_snapshot(text);
	} catch (const hwsig::Error &) {
		return 0;
	}
	// Accepted: encoding it and decoding again gives the same encoding.
	std::string once = hwsig::encode_snapshot(s.snapshot, s.vms, s.claimed_ids);
	auto again = hwsig::decode_snapshot(once);
	if (hwsig::encode_snapshot(again.snapshot, again.vms, again.claimed_ids) != once)
		std::abort();
	return 0;
}
