// The dump file (Documentation/dump-format.rst): a round trip keeps every
// snapshot bit for bit; every damaged or foreign file is refused with one
// message naming the file and the problem.
#include <catch2/catch.hpp>

#include <linux/hwsig.h>
#include <zstd.h>

#include <string>

#include "hwsig/dump_file.h"
#include "hwsig/dump_ticks.h"
#include "hwsig/error.h"

using namespace hwsig;

namespace {

SharedSnapshot snapshot_at(std::uint64_t mono_ns, double cycles)
{
	SharedSnapshot s;
	s.snapshot.mono_ns = mono_ns;
	s.snapshot.realtime_ns = 1'700'000'000'000'000'000ull + mono_ns;
	s.snapshot.add_counter("pmu.cycles", "system", CounterPoint{cycles, {cycles / 4, 4e9, 1e9, 0.5e9}}, "kmod");
	s.snapshot.add_gauge("thermal.headroom_c", "zone:x86_pkg_temp", 41.5, "sysfs");
	Histogram h;
	h.counts = {0, 3, 0, 7};
	s.snapshot.add_histogram("bpf.runq_wait_us", "vm:web\t01", h, "bpf");
	s.snapshot.add_unavailable("cpu.ipc", "system", UnavailableCode::unsupported, "no hardware PMU: running under a hypervisor");
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
	CHECK(back.version == 2);
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
	CHECK(back.snapshots[1].snapshot.counter("pmu.cycles", "system")->mux.running_ns == 1e9);
	CHECK(back.snapshots[1].snapshot.counter("pmu.cycles", "system")->mux.uncounted_ns == 0.5e9);
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
	refused(compress_dump_text("hwsig-dump\t3\nend\n"), "version 3 is newer than this hwsigctl reads (2)");
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
	auto v = garbled.find("M\tpmu.cycles");
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

namespace {

// Two CPUs of a software-event configuration: cpu-clock (ns) and
// context-switches, 10 ms ticks. CPU 0 holds seq 5..8 (4 lost before, the
// oldest record of the ring was overwritten), CPU 1 seq 1..2 and 5..6 (two
// lost in between: a seq jump) with its event 1 multiplexed at half time.
DumpRings sample_rings()
{
	DumpRings r;
	r.generation = 7;
	r.interval_ns = 10'000'000;
	r.ring_records = 8;
	r.running = true;
	r.status_written = 14;
	r.status_overwritten = 4;
	r.events = {{"cpu-clock", "software", "active 2/2"}, {"context-switches", "software", "active 2/2"}};
	auto rec = [](std::uint64_t seq, std::uint64_t t, std::uint64_t clock, std::uint64_t cs, std::uint64_t run1) {
		DumpRingRecord x;
		x.seq = seq;
		x.time_ns = t;
		x.valid_mask = 3;
		x.values = {clock, cs};
		x.enabled = {clock, clock};
		x.running = {clock, run1};
		return x;
	};
	DumpRingCpu c0;
	c0.cpu = 0;
	c0.online = true;
	c0.head = 8;
	c0.lost = 4;
	for (std::uint64_t s = 5; s <= 8; ++s)
		c0.records.push_back(rec(s, 1'000'000'000 + s * 10'000'000, s * 10'000'000, s * 3, s * 10'000'000));
	DumpRingCpu c1;
	c1.cpu = 1;
	c1.online = true;
	c1.head = 6;
	c1.lost = 2;
	for (std::uint64_t s : {1, 2, 5, 6})
		c1.records.push_back(rec(s, 1'000'000'000 + s * 10'000'000, s * 10'000'000, s * 5, s * 5'000'000));
	c1.records[0].flags = HWSIG_RECORD_F_FIRST;
	r.cpus = {c0, c1};
	return r;
}

DumpContents sample_v2()
{
	DumpContents d = sample();
	d.triggered_mono_ns = 1'070'000'000;
	d.pmu_plan = {{"pmu.cycles", "-", "-", "unavailable: no hardware PMU"},
		      {"pmu.task_clock", "task-clock", "software", "planned"}};
	d.rings = sample_rings();
	return d;
}

std::string text_of(const DumpContents &d)
{
	return decompressed(encode_dump(d));
}

// A copy of text with the first occurrence of `from` replaced by `to`.
std::string edited(std::string text, const std::string &from, const std::string &to)
{
	auto at = text.find(from);
	REQUIRE(at != std::string::npos);
	return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("dump v2: ring records, loss counts, event list, PMU plan and trigger time survive a round trip", "[dump]")
{
	const DumpContents d = sample_v2();
	const DumpContents back = decode_dump(encode_dump(d), "x");
	CHECK(back.version == 2);
	CHECK(back.triggered_mono_ns == std::optional<std::uint64_t>(1'070'000'000));
	REQUIRE(back.pmu_plan.size() == 2);
	CHECK(back.pmu_plan[0].state == "unavailable: no hardware PMU");
	CHECK(back.pmu_plan[1].event == "task-clock");
	CHECK(back.pmu_plan[1].pmu == "software");
	REQUIRE(back.rings);
	const DumpRings &r = *back.rings;
	CHECK(r.generation == 7);
	CHECK(r.interval_ns == 10'000'000);
	CHECK(r.ring_records == 8);
	CHECK(r.running);
	CHECK(r.status_written == std::optional<std::uint64_t>(14));
	CHECK(r.status_overwritten == std::optional<std::uint64_t>(4));
	REQUIRE(r.events.size() == 2);
	CHECK(r.events[1].name == "context-switches");
	CHECK(r.events[1].state == "active 2/2");
	REQUIRE(r.cpus.size() == 2);
	CHECK(r.cpu(1)->lost == 2);
	CHECK(r.cpu(2) == nullptr);
	REQUIRE(r.cpus[1].records.size() == 4);
	CHECK(r.cpus[1].records[0].flags == HWSIG_RECORD_F_FIRST);
	CHECK(r.cpus[1].records[3].seq == 6);
	CHECK(r.cpus[1].records[3].values[1] == 30);
	CHECK(r.cpus[1].records[3].running[1] == 30'000'000);
	CHECK(r.cpus[0].records[0].time_ns == 1'050'000'000);
	// And the same file again, byte for byte.
	CHECK(encode_dump(back) == encode_dump(d));
	CHECK(back.rings_absent.empty());
}

TEST_CASE("dump v2: no rings, with the reason, a version 1 file still reads", "[dump]")
{
	DumpContents d = sample();
	d.rings_absent = "hwsig.ko is not loaded: no ring records";
	auto back = decode_dump(encode_dump(d), "x");
	CHECK(!back.rings);
	CHECK(back.rings_absent == "hwsig.ko is not loaded: no ring records");
	CHECK(!back.triggered_mono_ns);
	// Version 1 as its writer wrote it: read, no rings, no trigger time.
	std::string v1 = edited(text_of(sample()), "hwsig-dump\t2\n", "hwsig-dump\t1\n");
	auto old = decode_dump(compress_dump_text(v1), "old.hwsd");
	CHECK(old.version == 1);
	CHECK(old.snapshots.size() == 3);
	CHECK(!old.rings);
	// ... and a version 1 file does not take version 2 lines.
	std::string v1_ring = edited(v1, "fact\t", "rings_absent\tx\nfact\t");
	const std::string why = refusal(compress_dump_text(v1_ring));
	INFO(why);
	CHECK(why.find("'rings_absent' is not a dump line") != std::string::npos);
}

TEST_CASE("dump v2: truncated or corrupted ring sections are refused, naming the file", "[dump]")
{
	const std::string text = text_of(sample_v2());
	auto refused = [&](const std::string &t, const std::string &says) {
		std::string why = refusal(compress_dump_text(t));
		INFO(why);
		CHECK(why.rfind("/var/tmp/x.hwsd: ", 0) == 0);
		CHECK(why.find(says) != std::string::npos);
	};
	REQUIRE(refusal(compress_dump_text(text)).empty());
	// A tick dropped from CPU 0's section: the counts no longer add up.
	const auto tick = text.find("tick\t6\t");
	refused(std::string(text).erase(tick, text.find('\n', tick) + 1 - tick),
		"ring of cpu 0: 3 ticks, its ring_cpu line says 4 (truncated or corrupted ring section)");
	// ... and with the count edited to match, the head does not.
	refused(edited(std::string(text).erase(tick, text.find('\n', tick) + 1 - tick), "ring_cpu\t0\t1\t8\t4\t0\t4",
		       "ring_cpu\t0\t1\t8\t4\t0\t3"),
		"ring of cpu 0: 3 records + 4 lost + 0 of an earlier configuration do not add up to its head 8");
	// The last section cut short before 'end'.
	const auto last = text.find("tick\t6\t", text.find("ring_cpu\t1\t"));
	refused(std::string(text).erase(last, text.find("snapshot\t") - last),
		"ring of cpu 1: 3 ticks, its ring_cpu line says 4");
	refused(edited(text, "ring_cpu\t0\t1\t8\t4\t0\t4", "ring_cpu\t0\t1\t8\t4\t0\t3"),
		"ring of cpu 0: more ticks than its ring_cpu line says");
	refused(edited(text, "ring_cpu\t0\t1\t8\t4\t0\t4", "ring_cpu\t0\t1\t9\t4\t0\t4"),
		"ring of cpu 0: 4 records + 4 lost + 0 of an earlier configuration do not add up to its head 9");
	refused(edited(text, "ring_cpu\t0\t1\t8\t4\t0\t4", "ring_cpu\t0\t1\t8\t4\t0\t9"), "says 9 records, its ring holds 8");
	refused(edited(text, "tick\t6\t", "tick\t9\t"), "tick seq 9 cannot be in a ring of 8 records with head 8");
	refused(edited(text, "tick\t6\t", "tick\t5\t"), "tick seq 5 is not after the one before it");
	refused(edited(text, "tick\t6\t1060000000", "tick\t6\t1"), "tick seq 6 is not after the one before it");
	refused(edited(text, "\t60000000:60000000:60000000", "\t60000000:60000000"), "tick seq 6: event field 1");
	refused(edited(text, "\t18:60000000:60000000\n", "\n"), "a tick has 1 event fields, the ring has 2 events");
	refused(edited(text, "ring_cpu\t1\t", "ring_cpu\t0\t"), "ring of cpu 0 is not after cpu 0");
	refused(edited(text, "rings\t7\t10000000\t8\t", "rings\t7\t10000000\t12\t"), "ring size 12 is not one the module makes");
	refused(edited(text, "rings\t7\t", "rings_absent\tgone\nrings\t7\t"), "'rings' needs");
	refused(edited(text, "ring_event\tcpu-clock", "ring_cpu\t0\t1\t0\t0\t0\t0\nring_event\tcpu-clock"),
		"'ring_event' needs NAME, PMU, STATE, after 'rings' and before the first 'ring_cpu'");
	refused(edited(text, "triggered\t1070000000", "triggered\tsoon"), "'triggered' is not");
	refused(edited(text, "pmu_plan\tpmu.cycles\t-\t-\t", "pmu_plan\tpmu.cycles\t-\t"), "'pmu_plan' needs");
	refused(edited(text, "ring_cpu\t0\t", "tick\t1\t1\t0\t0\nring_cpu\t0\t"), "'tick' outside a ring_cpu section");
}

TEST_CASE("replay --ticks: per-tick counts from cumulative records, gaps where records were lost", "[dump]")
{
	const DumpRings r = sample_rings();
	TickOptions o;
	o.json = true;
	o.triggered_mono_ns = 1'070'000'000;
	const std::string out = render_ticks(r, o);
	INFO(out);
	// CPU 0: a header, the 4 records before seq 5 as a gap, 4 rows; the
	// first has nothing before it, the others 10 ms of cpu-clock and 3
	// switches each, t_s from the trigger.
	CHECK(out.find("{\"cpu\":0,\"online\":true,\"head\":8,\"records\":4,\"lost\":4,\"earlier_configuration\":0,"
		       "\"events\":[\"cpu-clock\",\"context-switches\"]}\n") != std::string::npos);
	CHECK(out.find("{\"cpu\":0,\"gap\":{\"lost\":4,\"from_seq\":1,\"to_seq\":4}}\n") != std::string::npos);
	CHECK(out.find("{\"cpu\":0,\"seq\":5,\"time_ns\":1050000000,\"t_s\":-0.020000000,\"dt_ns\":null,\"first\":false,"
		       "\"counts\":{\"cpu-clock\":null,\"context-switches\":null}}\n") != std::string::npos);
	CHECK(out.find("{\"cpu\":0,\"seq\":6,\"time_ns\":1060000000,\"t_s\":-0.010000000,\"dt_ns\":10000000,\"first\":false,"
		       "\"counts\":{\"cpu-clock\":10000000,\"context-switches\":3}}\n") != std::string::npos);
	// CPU 1: seq 3..4 lost between 2 and 5: a gap line, then the row over
	// the 30 ms since seq 2; context-switches ran half the time: scaled x2.
	CHECK(out.find("{\"cpu\":1,\"gap\":{\"lost\":2,\"from_seq\":3,\"to_seq\":4}}\n") != std::string::npos);
	CHECK(out.find("{\"cpu\":1,\"seq\":5,\"time_ns\":1050000000,\"t_s\":-0.020000000,\"dt_ns\":30000000,\"first\":false,"
		       "\"counts\":{\"cpu-clock\":30000000,\"context-switches\":30}}\n") != std::string::npos);
	CHECK(out.find("\"seq\":1,\"time_ns\":1010000000,\"t_s\":-0.060000000,\"dt_ns\":null,\"first\":true") !=
	      std::string::npos);
	CHECK(out.find("ipc") == std::string::npos); // no cycles/instructions configured
	// No leading gap on CPU 1: nothing was lost before seq 1.
	CHECK(out.find("{\"cpu\":1,\"gap\":{\"lost\":2,\"from_seq\":1") == std::string::npos);

	o.cpu = 1;
	o.json = false;
	const std::string table = render_ticks(r, o);
	INFO(table);
	CHECK(table.find("cpu 0") == std::string::npos);
	CHECK(table.find("cpu 1: 4 records (seq 1..6), 2 lost of 6 written\n") != std::string::npos);
	CHECK(table.find("  -- gap: seq 3..4: 2 records lost") != std::string::npos);
	CHECK(table.find("       cpu-clock context-switches\n") != std::string::npos);
	CHECK(table.find("           5     -0.020   30.000         30000000               30\n") != std::string::npos);
}

TEST_CASE("replay --ticks: IPC from cycles and instructions, a counter reset or an unread event shows '-'", "[dump]")
{
	DumpRings r = sample_rings();
	r.events = {{"cycles", "cpu", "active 2/2"}, {"instructions", "cpu", "active 2/2"}};
	r.cpus.resize(1);
	auto &recs = r.cpus[0].records;
	for (std::size_t i = 0; i < recs.size(); ++i) {
		recs[i].values = {1000 * i, 2500 * i};
		recs[i].enabled = recs[i].running = {10 * i, 10 * i};
	}
	recs[3].valid_mask = 1; // instructions not read at seq 8
	TickOptions o;
	o.json = true;
	const std::string out = render_ticks(r, o);
	INFO(out);
	CHECK(out.find("\"seq\":6,\"time_ns\":1060000000,\"t_s\":0.010000000,\"dt_ns\":10000000,\"first\":false,"
		       "\"counts\":{\"cycles\":1000,\"instructions\":2500},\"ipc\":2.5}") != std::string::npos);
	CHECK(out.find("\"seq\":8,\"time_ns\":1080000000,\"t_s\":0.030000000,\"dt_ns\":10000000,\"first\":false,"
		       "\"counts\":{\"cycles\":1000,\"instructions\":null},\"ipc\":null}") != std::string::npos);
}

TEST_CASE("dump v2: rings streamed a CPU at a time make the same file as rings held whole", "[dump]")
{
	const DumpContents whole = sample_v2();
	DumpContents head = whole;
	head.rings->cpus.clear();
	head.snapshots.clear();
	DumpWriter w;
	w.begin(head);
	for (const auto &c : whole.rings->cpus)
		w.add_ring_cpu(c);
	for (const auto &s : whole.snapshots)
		w.add(s.snapshot, s.vms, s.claimed_ids);
	CHECK(w.finish() == encode_dump(whole));
}

TEST_CASE("replay --ticks: time without a record (ticks skipped) is a gap of its own, nothing lost", "[dump]")
{
	DumpRings r = sample_rings();
	r.cpus.resize(1);
	// seq 7 came 30 ms after seq 6 (two 10 ms ticks never written), seq 8
	// is a restart (FIRST): no time gap is claimed before a restart, and
	// no tick counted across it.
	auto &recs = r.cpus[0].records;
	recs[2].time_ns += 20'000'000;
	recs[3].time_ns += 500'000'000;
	recs[3].flags = HWSIG_RECORD_F_FIRST;
	TickOptions o;
	o.json = true;
	const std::string out = render_ticks(r, o);
	INFO(out);
	CHECK(out.find("{\"cpu\":0,\"time_gap\":{\"ns\":30000000,\"ticks\":3.0}}\n{\"cpu\":0,\"seq\":7,") != std::string::npos);
	CHECK(out.find("\"time_gap\"") == out.rfind("\"time_gap\""));
	CHECK(out.find("\"seq\":8,\"time_ns\":1580000000,\"t_s\":0.530000000,\"dt_ns\":null,\"first\":true,"
		       "\"counts\":{\"cpu-clock\":null,\"context-switches\":null}}") != std::string::npos);
	o.json = false;
	const std::string table = render_ticks(r, o);
	INFO(table);
	CHECK(table.find("  -- gap: 30.0 ms (3.0 ticks) since the record before, none lost (ticks skipped or overrun by the "
			 "module)\n") !=
	      std::string::npos);
	CHECK(table.find("           8      0.530    first                -                -\n") != std::string::npos);
}
