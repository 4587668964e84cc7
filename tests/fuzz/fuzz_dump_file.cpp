// libFuzzer target: decode_dump (a file read long after, elsewhere) never
// crashes on any bytes, compressed or not; what it accepts survives a
// second trip exactly.
#include <cstdlib>
#include <string>
#include <string_view>

#include "hwsig/dump_file.h"
#include "hwsig/dump_ticks.h"
#include "hwsig/error.h"

namespace {

void check(std::string_view bytes)
{
	hwsig::DumpContents d;
	try {
		d = hwsig::decode_dump(bytes, "fuzz");
	} catch (const hwsig::Error &) {
		return;
	}
	std::string once = hwsig::encode_dump(d);
	auto again = hwsig::decode_dump(once, "again");
	if (again.snapshots.size() != d.snapshots.size() || again.facts != d.facts || again.trigger != d.trigger)
		std::abort();
	// Version 2's lines (rings, ticks, plan, trigger time) come back as
	// they went: the same text, so the same bytes.
	if (hwsig::encode_dump(again) != once)
		std::abort();
	if (d.rings) {
		// What --ticks renders from it must not crash either.
		hwsig::TickOptions o;
		o.triggered_mono_ns = d.triggered_mono_ns;
		(void)hwsig::render_ticks(*d.rings, o);
		o.json = true;
		(void)hwsig::render_ticks(*d.rings, o);
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view raw(reinterpret_cast<const char *>(data), size);
	check(raw);
	// Most random bytes fail at the zstd magic: the content parser sees
	// them too, framed as a valid zstd file.
	if (size < (1u << 20))
		check(hwsig::compress_dump_text(raw));
	return 0;
}
