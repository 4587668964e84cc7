// ring-check: the library's RingReader (userspace/lib/pmu/kmod_ring.cpp) on the
// guest's real /dev/hwsig, driven by a list of steps so that a shell case
// can interleave its reads with the module being started, stopped and
// asked for its own accounting (tests/vm/case-ring-reader):
//
//   read         RingReader::read_cpu on every CPU id: prints
//                "read N cpu C accepted A lost L" (this read only)
//   sleep:MS     sleeps MS milliseconds
//   sh:CMD       runs CMD with /bin/sh (its output goes to stdout)
//
// The reader is opened once, at the newest record (Start::Newest), and
// lives across all steps. Exit status 0 unless a step fails.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hwsig/error.h"
#include "hwsig/kmod.h"

int main(int argc, char **argv)
{
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	try {
		auto reader = hwsig::RingReader::open_device("/dev/" HWSIG_DEVICE_NAME,
							     hwsig::RingReader::Start::Newest);
		const auto &g = reader.geometry();
		if (!g.configured) {
			std::printf("ring-check: /dev/hwsig is not configured\n");
			return 1;
		}
		std::printf("ring-check: %u CPU ids, %u records per ring\n", g.nr_cpu_ids, g.ring_records);
		std::vector<hwsig_record> recs;
		unsigned nread = 0;
		for (int i = 1; i < argc; i++) {
			const std::string step = argv[i];
			if (step == "read") {
				for (unsigned cpu = 0; cpu < g.nr_cpu_ids; cpu++) {
					recs.clear();
					auto st = reader.read_cpu(cpu, recs);
					// What was accepted is in order and this CPU's. A gap is
					// a record the producer overwrote while it was being
					// copied (the oldest ones, when the reader came late):
					// the gaps are part of this read's lost count.
					std::uint64_t gaps = 0;
					for (std::size_t k = 1; k < recs.size(); k++) {
						if (recs[k].seq <= recs[k - 1].seq || recs[k].cpu != cpu) {
							std::printf("ring-check: cpu %u record seq %llu after %llu\n", cpu,
								    static_cast<unsigned long long>(recs[k].seq),
								    static_cast<unsigned long long>(recs[k - 1].seq));
							return 1;
						}
						gaps += recs[k].seq - recs[k - 1].seq - 1;
					}
					if (gaps > st.lost) {
						std::printf("ring-check: cpu %u: %llu records missing between accepted ones, "
							    "only %llu counted lost\n",
							    cpu, static_cast<unsigned long long>(gaps),
							    static_cast<unsigned long long>(st.lost));
						return 1;
					}
					std::printf("read %u cpu %u accepted %llu lost %llu last_seq %llu\n", nread, cpu,
						    static_cast<unsigned long long>(st.accepted),
						    static_cast<unsigned long long>(st.lost),
						    static_cast<unsigned long long>(recs.empty() ? 0 : recs.back().seq));
				}
				nread++;
			} else if (step.rfind("sleep:", 0) == 0) {
				std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(step.c_str() + 6)));
			} else if (step.rfind("sh:", 0) == 0) {
				std::fflush(stdout);
				if (std::system(step.c_str() + 3) != 0) {
					std::printf("ring-check: '%s' failed\n", step.c_str() + 3);
					return 1;
				}
			} else {
				std::printf("ring-check: unknown step '%s'\n", step.c_str());
				return 2;
			}
		}
		std::printf("ring-check: total accepted %llu lost %llu\n",
			    static_cast<unsigned long long>(reader.total_accepted()),
			    static_cast<unsigned long long>(reader.total_lost()));
	} catch (const hwsig::Error &e) {
		std::printf("ring-check: %s\n", e.what());
		return 1;
	}
	return 0;
}
