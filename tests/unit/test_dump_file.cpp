// The dump file (Documentation/dump-format.rst): a round trip keeps every
// snapshot bit for bit; every damaged or foreign file is refused with one
// message naming the file and the problem.
#include <catch2/catch.hpp>

#include <zstd.h>

#include <string>

#include "hwsig/dump_file.h"
#include "hwsig/error.h"

using namespace hwsig;

namespace {

SharedSnapshot snapshot_at(std::uint64_t mono_ns, double cycles)
{
	SharedSnapshot s;
	s.snapshot.mono_ns = mono_ns;
	s.snapshot.realtime_ns = 1'700'000'000'000'000'000ull + mono_ns;
	s.snapshot.add_counter("pmu.cycles", "system", cycles, "kmod", 0.25);
	s.snapshot.add_gauge("thermal.headroom_c", "zone:x86_pkg_temp", 41.5, "sysfs");
	Histogram h;
	h.counts = {0, 3, 0, 7};
	s.snapshot.add_histogram("bpf.runq_wait_us", "vm:web\t01", h, "bpf");
	s.snapshot.add_unavailable("cpu.ipc", "system", "no hardware PMU: running under a hypervisor");
	s.snapshot.set_counts_from_zero("bpf.runq_wait_us");
	Vm vm;
	vm.pid = 4242;
	vm.name = "web\t01";
	vm.vcpu_tids = {4243, 4244};
	vm.taps = {"vnet0"};
	s.vms.push_back(vm);
	s.claimed_ids = {"cpu.ipc", "sched.runq_wait_p99_us"};
	return s;
}

DumpContents sample()
{
	DumpContents d;
	d.trigger = "request";
	d.created_ns = 1'700'000'000'123'456'789ull;
	d.facts = {{"kernel", "6.1.0-27-amd64 #1 SMP\tDebian"}, {"cpu_vendor", "intel"}};
	for (int i = 0; i < 3; ++i)
		d.snapshots.push_back(snapshot_at(1'000'000'000ull * (i + 1), 1e9 * i + 0.1));
	return d;
}

std::string wire(const SharedSnapshot &s)
{
	return encode_snapshot(s.snapshot, s.vms, s.claimed_ids);
}

// decode_dump's message for bytes, or "" when it accepted them.
std::string refusal(const std::string &bytes)
{
	try {
		decode_dump(bytes, "/var/tmp/x.hwsd");
	} catch (const Error &e) {
		return e.what();
	}
	return "";
}

// The writer streams: its frame does not state the content size.
std::string decompressed(const std::string &bytes)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	std::string out;
	ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
	std::size_t left = 1;
	while (left != 0) {
		char buf[4096];
		ZSTD_outBuffer o{buf, sizeof(buf), 0};
		left = ZSTD_decompressStream(dctx, &o, &in);
		REQUIRE(!ZSTD_isError(left));
		out.append(buf, o.pos);
	}
	ZSTD_freeDCtx(dctx);
	return out;
}

} // namespace

TEST_CASE("dump: a round trip keeps facts, trigger and every snapshot exactly", "[dump]")
{
	auto d = sample();
	auto back = decode_dump(encode_dump(d), "x");
	CHECK(back.version == 1);
	CHECK(back.trigger == "request");
	CHECK(back.created_ns == d.created_ns);
	REQUIRE(back.facts.size() == 2);
	CHECK(*back.fact("kernel") == "6.1.0-27-amd64 #1 SMP Debian"); // tab flattened
	CHECK(*back.fact("cpu_vendor") == "intel");
	CHECK(back.fact("nope") == nullptr);
	REQUIRE(back.snapshots.size() == 3);
	for (std::size_t i = 0; i < 3; ++i)
		CHECK(wire(back.snapshots[i]) == wire(d.snapshots[i]));
	CHECK(back.snapshots[1].snapshot.counter("pmu.cycles", "system")->value == 1e9 + 0.1);
	CHECK(back.snapshots[1].snapshot.counter("pmu.cycles", "system")->running_fraction == 0.25);
	CHECK(back.snapshots[2].vms.at(0).name == "web\t01");
}

TEST_CASE("dump: foreign, empty and damaged files are refused, naming the file", "[dump]")
{
	const std::string good = encode_dump(sample());
	const std::string text = decompressed(good);
	auto refused = [&](const std::string &bytes, const std::string &says) {
		std::string why = refusal(bytes);
		INFO(why);
		CHECK(why.rfind("/var/tmp/x.hwsd: ", 0) == 0);
		CHECK(why.find(says) != std::string::npos);
	};
	CHECK(refusal(good).empty());
	refused("", "empty file");
	refused("hwsig-dump\t1\nend\n", "no zstd frame");
	refused(compress_dump_text("{\"metrics\":[]}\n"), "a zstd file, but not hwsig's");
	refused(good.substr(0, good.size() - 7), "truncated");
	std::string flipped = good;
	flipped[flipped.size() / 2] ^= 0x20;
	CHECK(!refusal(flipped).empty()); // the frame checksum, or zstd itself
	refused(compress_dump_text("hwsig-dump\t2\nend\n"), "version 2 is newer than this hwsigctl reads (1)");
	refused(compress_dump_text("hwsig-dump\t0\nend\n"), "version 0 does not exist");
	refused(compress_dump_text("hwsig-dump\tone\nend\n"), "first line");
	refused(compress_dump_text(text.substr(0, text.size() - 4)), "no 'end' line");
	refused(compress_dump_text(text + "fact\tx\ty\n"), "data after 'end'");
	refused(compress_dump_text(text.substr(0, text.size() - 1)), "a line has no end");
	std::string unknown = text;
	unknown.insert(unknown.find("fact\t"), "flux\tcapacitor\n");
	refused(compress_dump_text(unknown), "'flux' is not a dump line");
	// A snapshot whose length runs past the content.
	std::string longer = text;
	auto at = longer.find("snapshot\t") + 9;
	longer.replace(at, longer.find('\n', at) - at, "999999");
	refused(compress_dump_text(longer), "shorter than its length says");
	// A snapshot the wire refuses: named with its number.
	std::string garbled = text;
	auto v = garbled.find("C\tpmu.cycles");
	garbled[v] = 'Q';
	refused(compress_dump_text(garbled), "snapshot 1 (from line");
}

TEST_CASE("dump: snapshots must move forward in time", "[dump]")
{
	auto d = sample();
	std::swap(d.snapshots[1], d.snapshots[2]);
	std::string why = refusal(encode_dump(d));
	CHECK(why.find("snapshot 3 is not later than the one before") != std::string::npos);
}

TEST_CASE("dump: a file on disk, and a missing one", "[dump]")
{
	std::string why;
	try {
		read_dump_file("/nonexistent/hwsig.hwsd");
	} catch (const Error &e) {
		why = e.what();
	}
	CHECK(why == "reading /nonexistent/hwsig.hwsd: No such file or directory");
}
