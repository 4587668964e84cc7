// The flight recorder's file: what hwsigd kept of the last minutes, with
// the facts needed to read it on another machine later
// (Documentation/dump-format.rst). One zstd frame holding tab-separated
// lines; each snapshot is the local socket's snapshot wire, length-framed.
// The reader refuses anything it cannot vouch for with one message naming
// the file and what is wrong: a dump is read long after, elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwsig/snapshot_wire.h"

struct ZSTD_CCtx_s;

namespace hwsig {

inline constexpr int kDumpVersion = 1;
// A dump larger than this, compressed or not, is refused (a 15-minute
// dump of a 256-CPU host with per-CPU series is a few tens of MiB).
inline constexpr std::size_t kDumpMaxBytes = 512u << 20;

struct DumpContents {
	int version = kDumpVersion;
	// Host facts, in order: kernel, cpu, hwsig version, interval, ...
	std::vector<std::pair<std::string, std::string>> facts;
	std::string trigger;         // "request", "SIGUSR1", a rule's text
	std::uint64_t created_ns = 0; // wall clock when it was written
	std::vector<SharedSnapshot> snapshots; // oldest first
	const std::string *fact(std::string_view key) const;
};

// Writes a dump a snapshot at a time: the text of one snapshot at a time
// is held, not the whole dump's (a 256-CPU host's 15 minutes are hundreds
// of MiB of text, a few tens compressed).
class DumpWriter {
public:
	DumpWriter();
	~DumpWriter();
	DumpWriter(const DumpWriter &) = delete;
	DumpWriter &operator=(const DumpWriter &) = delete;
	// The header: version, created, trigger, facts (head.snapshots unused).
	void begin(const DumpContents &head);
	void add(const Snapshot &snap, const std::vector<Vm> &vms, const std::vector<std::string> &claimed);
	// The file's bytes.
	std::string finish();

private:
	friend std::string compress_dump_text(std::string_view text);
	void feed(std::string_view text, bool last);
	ZSTD_CCtx_s *cctx_;
	std::string out_;
};

// The file's bytes (compressed).
std::string encode_dump(const DumpContents &dump);
// The container alone: text in one checksummed zstd frame (tests build
// damaged dumps with it).
std::string compress_dump_text(std::string_view text);
// name: how errors call the input (its path). Throws hwsig::Error.
DumpContents decode_dump(std::string_view bytes, const std::string &name);
// Reads and decodes a file. Throws hwsig::Error.
DumpContents read_dump_file(const std::string &path);

} // namespace hwsig
