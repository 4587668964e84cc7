// RingReader against a userspace producer that follows the header's protocol.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "hwsig/error.h"
#include "hwsig/kmod.h"
#include "ring_writer.h"

using hwsig::RingReader;
using hwsig::testing::RingWriter;

namespace {

bool same_as_expected(const hwsig_record &r, unsigned cpu)
{
	if (r.seq == 0)
		return false;
	const hwsig_record want = RingWriter::expected(cpu, r.seq - 1);
	return std::memcmp(&r, &want, sizeof(r)) == 0;
}

} // namespace

TEST_CASE("ring reader reads records in order and loses none when it keeps up", "[ring]")
{
	RingWriter w(2, 16);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	for (int i = 0; i < 10; i++)
		w.write(1);
	for (int i = 0; i < 3; i++)
		w.write(0);

	std::vector<hwsig_record> out;
	auto st = reader.read_cpu(1, out);
	CHECK(st.accepted == 10);
	CHECK(st.lost == 0);
	REQUIRE(out.size() == 10);
	for (std::size_t i = 0; i < out.size(); i++) {
		CHECK(out[i].seq == i + 1);
		CHECK(same_as_expected(out[i], 1));
	}
	CHECK((out[0].flags & HWSIG_RECORD_F_FIRST) != 0);

	out.clear();
	st = reader.read_all(out);
	CHECK(st.accepted == 3); // cpu 0's three; cpu 1 has nothing new
	CHECK(st.lost == 0);
	CHECK(reader.total_accepted() == 13);
	CHECK(reader.total_lost() == 0);
}

TEST_CASE("ring reader counts exactly the records a slow reader lost", "[ring]")
{
	RingWriter w(1, 8);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	for (int i = 0; i < 100; i++)
		w.write(0);
	std::vector<hwsig_record> out;
	auto st = reader.read_cpu(0, out);
	CHECK(st.accepted == 8);
	CHECK(st.lost == 92);
	REQUIRE(out.size() == 8);
	CHECK(out.front().seq == 93);
	CHECK(out.back().seq == 100);
	for (auto &r : out)
		CHECK(same_as_expected(r, 0));

	CHECK(reader.lost(0) == 92);

	// Then each round writes, reads, and counts: exactly one ring's worth
	// late loses nothing; one more loses one.
	struct Round {
		int written;
		std::uint64_t accepted, lost;
	};
	for (const Round r : {Round{5, 5, 0}, Round{8, 8, 0}, Round{9, 8, 1}}) {
		INFO(r.written << " written since the last read");
		for (int i = 0; i < r.written; i++)
			w.write(0);
		out.clear();
		st = reader.read_cpu(0, out);
		CHECK(st.accepted == r.accepted);
		CHECK(st.lost == r.lost);
	}
	CHECK(reader.lost(0) == 93);
}

TEST_CASE("Start::Newest skips what was written before the reader opened", "[ring]")
{
	RingWriter w(1, 8);
	for (int i = 0; i < 5; i++)
		w.write(0);
	RingReader reader(w.base(), w.length(), RingReader::Start::Newest);
	std::vector<hwsig_record> out;
	CHECK(reader.read_cpu(0, out).accepted == 0);
	w.write(0);
	CHECK(reader.read_cpu(0, out).accepted == 1);
	REQUIRE(out.size() == 1);
	CHECK(out[0].seq == 6);
}

TEST_CASE("a record being overwritten while read counts as lost, never as data", "[ring]")
{
	RingWriter w(1, 8);
	for (int i = 0; i < 8; i++)
		w.write(0);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);

	// The producer laps the reader: record 8 reuses record 0's slot and
	// stops half way through its payload.
	w.begin(0);
	w.payload(0, 1, 20);
	std::vector<hwsig_record> out;
	auto st = reader.read_cpu(0, out);
	CHECK(st.accepted == 7);
	CHECK(st.lost == 1); // record 0: seq says 9, seq_end says 1
	REQUIRE(out.size() == 7);
	CHECK(out.front().seq == 2);
	for (auto &r : out)
		CHECK(same_as_expected(r, 0));

	// The torn record is not published yet: nothing to read.
	out.clear();
	st = reader.read_cpu(0, out);
	CHECK(st.accepted == 0);
	CHECK(st.lost == 0);

	w.payload(0, 20, RingWriter::kWords - 1);
	w.finish(0);
	st = reader.read_cpu(0, out);
	CHECK(st.accepted == 1);
	REQUIRE(out.size() == 1);
	CHECK(out[0].seq == 9);
	CHECK(same_as_expected(out[0], 0));
}

TEST_CASE("a completed overwrite of an unread slot is lost, not misattributed", "[ring]")
{
	RingWriter w(1, 8);
	for (int i = 0; i < 4; i++)
		w.write(0);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	// Simulate a stale view: the reader believes it is at record 0 while
	// slot 0 already holds record 8 (both sequence numbers agree on 9).
	for (int i = 0; i < 5; i++)
		w.write(0);
	std::vector<hwsig_record> out;
	auto st = reader.read_cpu(0, out);
	CHECK(st.lost == 1);
	CHECK(st.accepted == 8);
	CHECK(out.front().seq == 2);
}

TEST_CASE("latest() returns the newest complete record without consuming", "[ring]")
{
	RingWriter w(2, 8);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	CHECK_FALSE(reader.latest(0).has_value());
	for (int i = 0; i < 11; i++)
		w.write(0);
	auto r = reader.latest(0);
	REQUIRE(r.has_value());
	CHECK(r->seq == 11);
	CHECK(same_as_expected(*r, 0));
	// Half-written next record does not hide the complete one.
	w.begin(0);
	r = reader.latest(0);
	REQUIRE(r.has_value());
	CHECK(r->seq == 11);
	CHECK_FALSE(reader.latest(5).has_value());
	// Records 3..10 are in the ring, but record 3's slot is being reused.
	std::vector<hwsig_record> out;
	auto st = reader.read_cpu(0, out);
	CHECK(st.accepted == 7);
	CHECK(st.lost == 4);
}

TEST_CASE("head moving backwards (ring restarted) counts nothing and resumes", "[ring]")
{
	RingWriter w(1, 8);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	for (int i = 0; i < 6; i++)
		w.write(0);
	std::vector<hwsig_record> out;
	CHECK(reader.read_cpu(0, out).accepted == 6);
	__atomic_store_n(&w.header(0)->head, 2, __ATOMIC_RELEASE);
	auto st = reader.read_cpu(0, out);
	CHECK(st.accepted == 0);
	CHECK(st.lost == 0);
	w.write(0); // record 2
	out.clear();
	st = reader.read_cpu(0, out);
	CHECK(st.accepted == 1);
	REQUIRE(out.size() == 1);
	CHECK(out[0].seq == 3);
}

TEST_CASE("an absurd head from a corrupt mapping is clamped, not trusted", "[ring]")
{
	RingWriter w(1, 8);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	const std::uint64_t huge = ~0ull - 3;
	__atomic_store_n(&w.header(0)->head, huge, __ATOMIC_RELEASE);
	std::vector<hwsig_record> out;
	auto st = reader.read_cpu(0, out);
	CHECK(st.accepted == 0); // no slot holds those sequence numbers
	CHECK(st.accepted + st.lost == huge);
	CHECK_THROWS_AS(reader.read_cpu(1, out), hwsig::Error);
}

TEST_CASE("refresh() notices a new configuration generation", "[ring]")
{
	RingWriter w(1, 8);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	CHECK_FALSE(reader.refresh());
	w.control()->config_generation = 2;
	CHECK(reader.refresh());
	CHECK(reader.geometry().config_generation == 2);
	CHECK_FALSE(reader.refresh());
	// A refresh that finds a broken layout refuses it.
	w.control()->config_generation = 3;
	w.control()->ring_records = 12;
	CHECK_THROWS_AS(reader.refresh(), hwsig::Error);
}

TEST_CASE("refresh() on reused rings delivers nothing already read again", "[ring]")
{
	RingWriter w(2, 8);
	for (int i = 0; i < 5; i++) {
		w.write(0);
		w.write(1);
	}
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	std::vector<hwsig_record> out;
	CHECK(reader.read_all(out).accepted == 10);
	// A CONFIGURE with the same geometry: same ring set, new generation.
	w.control()->config_generation = 2;
	w.control()->seq += 2;
	CHECK(reader.refresh());
	CHECK(reader.geometry().config_generation == 2);
	out.clear();
	auto st = reader.read_all(out);
	CHECK(st.accepted == 0);
	CHECK(st.lost == 0);
	w.write(0);
	w.write(0);
	st = reader.read_all(out);
	REQUIRE(st.accepted == 2);
	CHECK(out[0].seq == 6);
	CHECK(out[1].seq == 7);
	CHECK(reader.total_lost() == 0);
}

TEST_CASE("refresh() onto another ring set starts at its oldest record", "[ring]")
{
	RingWriter w(1, 8);
	for (int i = 0; i < 3; i++)
		w.write(0);
	RingReader reader(w.base(), w.length(), RingReader::Start::Newest);
	std::vector<hwsig_record> out;
	CHECK(reader.read_all(out).accepted == 0);
	w.control()->ring_set = 2;
	w.control()->config_generation = 2;
	CHECK(reader.refresh());
	CHECK(reader.geometry().ring_set == 2);
	CHECK(reader.read_all(out).accepted == 3);
}

TEST_CASE("a control page being written (odd sequence count) is never read half way", "[ring]")
{
	RingWriter w(1, 8);
	w.control()->seq = 3;
	try {
		RingReader r(w.base(), w.length());
		FAIL("read a control page whose write never finished");
	} catch (const hwsig::Error &e) {
		CHECK(e.err() == EAGAIN);
	}
	w.control()->seq = 4;
	RingReader ok(w.base(), w.length());
	CHECK(ok.geometry().ring_set == 1);
}

namespace {

std::string refusal(RingWriter &w, std::size_t length)
{
	try {
		RingReader r(w.base(), length);
	} catch (const hwsig::Error &e) {
		CHECK(e.err() == EPROTO);
		return e.what();
	}
	return {};
}

} // namespace

TEST_CASE("control page validation refuses every out-of-bounds field", "[ring]")
{
	// Each row changes a valid control page (its CPUs, 8 records each) and
	// maps `cut` bytes less (or only `length` bytes); the reader must
	// refuse it with every phrase of `says`, or accept it when there is none.
	const std::vector<std::string> any_reason = {""};
	struct Row {
		const char *what;
		unsigned cpus;
		void (*change)(hwsig_control_page *);
		std::vector<std::string> says;
		std::size_t cut = 0, length = 0;
	};
	const std::string reader_abi = "this reader is ABI " + std::to_string(HWSIG_ABI_VERSION);
	const Row rows[] = {
		{"incompatible module: both versions in the message", 1,
		 [](hwsig_control_page *c) {
			 c->abi_version = 7;
			 c->compat_version = 5;
		 },
		 {"ABI 7", ">= 5", reader_abi}},
		{"module older than the reader supports", 1,
		 [](hwsig_control_page *c) {
			 c->abi_version = 0;
			 c->compat_version = 0;
		 },
		 {"ABI 0"}},
		{"a newer but compatible module is accepted", 1,
		 [](hwsig_control_page *c) {
			 c->abi_version = HWSIG_ABI_VERSION + 1;
			 c->compat_version = HWSIG_ABI_VERSION;
		 },
		 {}},
		{"mapping shorter than the rings", 2, [](hwsig_control_page *) {}, {"past the"}, 8},
		{"mapping shorter than the control page", 2, [](hwsig_control_page *) {}, {"smaller than"}, 0, 100},
		{"ring_records not a power of two", 1, [](hwsig_control_page *c) { c->ring_records = 6; }, {"ring_records = 6"}},
		{"ring larger than its stride", 1, [](hwsig_control_page *c) { c->ring_records = 16; }, {"ring_stride"}},
		{"record size from another ABI", 1, [](hwsig_control_page *c) { c->record_size = 256; }, {"record_size = 256"}},
		{"overflowing geometry", 1,
		 [](hwsig_control_page *c) {
			 c->nr_cpu_ids = 60000;
			 c->ring_stride = ~0ull & ~7ull;
		 },
		 any_reason},
		{"overflowing geometry without CPUs", 1,
		 [](hwsig_control_page *c) {
			 c->nr_cpu_ids = 0;
			 c->ring_stride = ~0ull & ~7ull;
		 },
		 {"nr_cpu_ids = 0"}},
		{"data offset overlapping the headers", 1, [](hwsig_control_page *c) { c->data_offset = 64; }, {"data_offset"}},
		{"ring offset overlapping the headers", 1,
		 [](hwsig_control_page *c) {
			 c->data_offset = 4096;
			 c->ring_offset = 0;
		 },
		 {"ring_offset"}},
		{"too many events", 1, [](hwsig_control_page *c) { c->nr_events = HWSIG_MAX_EVENTS + 1; }, {"nr_events"}},
	};
	for (const Row &row : rows) {
		INFO(row.what);
		RingWriter w(row.cpus, 8);
		row.change(w.control());
		const std::string msg = refusal(w, row.length ? row.length : w.length() - row.cut);
		CHECK(msg.empty() == row.says.empty());
		for (const auto &phrase : row.says)
			CHECK_THAT(msg, Catch::Contains(phrase));
	}
}

TEST_CASE("concurrent writer: every accepted record is consistent and accepted + lost == written",
	  "[ring][concurrency]")
{
	constexpr unsigned kCpus = 2;
	constexpr std::uint64_t kPerCpu = 300000;
	RingWriter w(kCpus, 8); // tiny ring: the reader is lapped constantly
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	std::atomic<bool> done{false};
	std::thread writer([&] {
		for (std::uint64_t i = 0; i < kPerCpu; i++)
			for (unsigned c = 0; c < kCpus; c++)
				w.write(c);
		done.store(true, std::memory_order_release);
	});

	std::vector<hwsig_record> out;
	std::uint64_t accepted[kCpus] = {}, lost[kCpus] = {}, last_seq[kCpus] = {};
	std::uint64_t inconsistent = 0, out_of_order = 0;
	auto drain = [&] {
		for (unsigned c = 0; c < kCpus; c++) {
			out.clear();
			auto st = reader.read_cpu(c, out);
			accepted[c] += st.accepted;
			lost[c] += st.lost;
			for (auto &r : out) {
				if (!same_as_expected(r, c))
					inconsistent++;
				if (r.seq <= last_seq[c])
					out_of_order++;
				last_seq[c] = r.seq;
			}
		}
	};
	while (!done.load(std::memory_order_acquire))
		drain();
	writer.join();
	drain();

	CHECK(inconsistent == 0);
	CHECK(out_of_order == 0);
	for (unsigned c = 0; c < kCpus; c++) {
		CHECK(accepted[c] + lost[c] == kPerCpu);
		CHECK(accepted[c] >= 8); // at least the final ring's worth
		CHECK(last_seq[c] == kPerCpu);
		CHECK(reader.lost(c) == lost[c]);
	}
	INFO("accepted " << accepted[0] + accepted[1] << ", lost " << lost[0] + lost[1]);
	CHECK(reader.total_accepted() + reader.total_lost() == kCpus * kPerCpu);
}

TEST_CASE("a loaded but unconfigured module (no rings yet) reads as empty until configured", "[ring]")
{
	RingWriter w(2, 8);
	w.control()->ring_records = 0;
	w.control()->config_generation = 0;
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	CHECK_FALSE(reader.geometry().configured);
	std::vector<hwsig_record> out;
	CHECK(reader.read_all(out).accepted == 0);
	CHECK_FALSE(reader.latest(0));
	w.write(1);
	w.control()->ring_records = 8;
	w.control()->config_generation = 1;
	CHECK(reader.refresh());
	CHECK(reader.geometry().configured);
	CHECK(reader.read_all(out).accepted == 1);
}
