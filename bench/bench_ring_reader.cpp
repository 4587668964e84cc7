// Cost of RingReader per 1000 records, next to a plain memcpy of the same
// 1000 records (the floor: what copying the bytes costs with no protocol).
// A userspace producer (tests/unit/ring_writer.h: the module's layout and
// store/barrier sequence) fills the ring before each timed read, so both
// sides start from the same cache state. Rounds alternate reader/memcpy and
// the medians are compared, which keeps machine noise out of the ratio.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "../tests/unit/ring_writer.h"
#include "hwsig/kmod.h"

using hwsig::RingReader;
using hwsig::testing::RingWriter;

namespace {

std::uint64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

} // namespace

int main()
{
	constexpr unsigned kRecords = 1000;
	constexpr int kRounds = 400;
	RingWriter w(1, 1024);
	RingReader reader(w.base(), w.length(), RingReader::Start::Oldest);
	std::vector<hwsig_record> out;
	out.reserve(kRecords);
	std::vector<hwsig_record> copy(kRecords);
	const auto *first_slot = reinterpret_cast<const unsigned char *>(w.slot_words(0, 0));

	std::vector<double> reader_ns, memcpy_ns, bulk_ns, latest_ns;
	std::uint64_t accepted = 0, lost = 0;
	for (int round = 0; round < kRounds; round++) {
		// Reader: the records of this round, in ring order, fully checked.
		for (unsigned i = 0; i < kRecords; i++)
			w.write(0);
		out.clear();
		std::uint64_t t0 = now_ns();
		auto st = reader.read_cpu(0, out);
		std::uint64_t t1 = now_ns();
		reader_ns.push_back(double(t1 - t0));
		accepted += st.accepted;
		lost += st.lost;

		// Baseline: the same number of bytes copied out of the ring.
		for (unsigned i = 0; i < kRecords; i++)
			w.write(0);
		reader.read_cpu(0, out); // keep the reader's tail current (untimed)
		const std::uint64_t start_slot = (w.head(0) - kRecords) & 1023;
		// Record by record, as the reader delivers them: one 512-byte memcpy
		// each (a single 512 KB memcpy takes glibc's non-temporal path, which
		// writes around the cache and is no fair floor).
		t0 = now_ns();
		for (unsigned i = 0; i < kRecords; i++)
			std::memcpy(&copy[i], first_slot + ((start_slot + i) & 1023) * sizeof(hwsig_record),
				    sizeof(hwsig_record));
		t1 = now_ns();
		memcpy_ns.push_back(double(t1 - t0));
		asm volatile("" : : "r"(copy.data()) : "memory");

		// For reference: the same bytes as one or two bulk memcpys.
		for (unsigned i = 0; i < kRecords; i++)
			w.write(0);
		reader.read_cpu(0, out);
		const std::uint64_t bulk_start = (w.head(0) - kRecords) & 1023;
		const std::size_t first = std::min<std::size_t>(kRecords, 1024 - bulk_start);
		t0 = now_ns();
		std::memcpy(copy.data(), first_slot + bulk_start * sizeof(hwsig_record), first * sizeof(hwsig_record));
		std::memcpy(copy.data() + first, first_slot, (kRecords - first) * sizeof(hwsig_record));
		t1 = now_ns();
		bulk_ns.push_back(double(t1 - t0));
		asm volatile("" : : "r"(copy.data()) : "memory");

		// latest(): what the PMU source does per CPU per snapshot.
		t0 = now_ns();
		for (int i = 0; i < 100; i++) {
			auto r = reader.latest(0);
			asm volatile("" : : "r"(&r) : "memory");
		}
		t1 = now_ns();
		latest_ns.push_back(double(t1 - t0) / 100);
	}
	if (lost != 0 || accepted != std::uint64_t(kRounds) * kRecords) {
		std::printf("bench_ring_reader: reader lost %llu / accepted %llu: the bench is broken\n",
			    static_cast<unsigned long long>(lost), static_cast<unsigned long long>(accepted));
		return 1;
	}
	const double r = median(reader_ns), m = median(memcpy_ns);
	std::printf("ring reader, 1000 records of %zu B (median of %d rounds):\n", sizeof(hwsig_record), kRounds);
	std::printf("  RingReader::read_cpu   %10.0f ns per 1000 records (%.1f ns/record)\n", r, r / kRecords);
	std::printf("  memcpy per record      %10.0f ns per 1000 records (%.1f ns/record)  <- baseline\n", m,
		    m / kRecords);
	std::printf("  ratio reader/memcpy    %10.2f\n", r / m);
	std::printf("  (one bulk memcpy       %10.0f ns per 1000 records: glibc's non-temporal path)\n",
		    median(bulk_ns));
	std::printf("  RingReader::latest     %10.1f ns per call\n", median(latest_ns));
	return 0;
}
