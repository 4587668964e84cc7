#include "hwsig/dump_file.h"

#include <zstd.h>

#include <cerrno>
#include <charconv>
#include <memory>

#include "hwsig/error.h"
#include "hwsig/fs.h"

#include <linux/hwsig.h>

namespace hwsig {

namespace {

constexpr std::string_view kMagicLine = "hwsig-dump\t";
// zstd frames start with this (little-endian 0xFD2FB528).
constexpr unsigned char kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

// Facts, triggers and keys hold no tabs or newlines: replaced, so that a
// hostname or a rule text cannot break the line structure.
std::string flat(std::string_view s)
{
	std::string out(s);
	for (char &c : out)
		if (c == '\t' || c == '\n')
			c = ' ';
	return out;
}

class Reader {
public:
	Reader(std::string_view text, const std::string &name) : text_(text), name_(name) {}

	[[noreturn]] void bad(const std::string &what) const
	{
		throw Error(name_ + ": " + what + " (line " + std::to_string(line_) + " of the dump)");
	}
	bool done() const { return pos_ >= text_.size(); }
	std::string_view line()
	{
		std::size_t nl = text_.find('\n', pos_);
		++line_;
		if (nl == std::string_view::npos)
			bad("truncated: a line has no end");
		std::string_view l = text_.substr(pos_, nl - pos_);
		pos_ = nl + 1;
		return l;
	}
	std::string_view bytes(std::size_t n)
	{
		if (text_.size() - pos_ < n + 1 || text_[pos_ + n] != '\n')
			bad("truncated: a snapshot is shorter than its length says");
		std::string_view b = text_.substr(pos_, n);
		pos_ += n + 1;
		for (char c : b)
			line_ += c == '\n';
		++line_;
		return b;
	}
	std::size_t at_line() const { return line_; }

private:
	std::string_view text_;
	const std::string &name_;
	std::size_t pos_ = 0;
	std::size_t line_ = 0;
};

std::vector<std::string_view> fields(std::string_view l)
{
	std::vector<std::string_view> f;
	std::size_t pos = 0;
	for (;;) {
		std::size_t tab = l.find('\t', pos);
		f.push_back(l.substr(pos, tab == std::string_view::npos ? std::string_view::npos : tab - pos));
		if (tab == std::string_view::npos)
			return f;
		pos = tab + 1;
	}
}

template <typename T> bool number(std::string_view s, T &out)
{
	auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
	return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// Streams the frame out (the content size may be absent: the writer
// streams too), bounded by kDumpMaxBytes.
std::string decompress(std::string_view bytes, const std::string &name)
{
	if (bytes.empty())
		throw Error(name + ": empty file, not an hwsig dump");
	if (bytes.size() < 4 || std::string_view(bytes.data(), 4) != std::string_view(reinterpret_cast<const char *>(kZstdMagic), 4))
		throw Error(name + ": not an hwsig dump (no zstd frame at its start)");
	std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
	if (!dctx)
		throw Error(name + ": out of memory");
	std::string out;
	ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
	std::size_t last = 1;
	while (in.pos < in.size || last != 0) {
		const std::size_t chunk = ZSTD_DStreamOutSize();
		const std::size_t at = out.size();
		out.resize(at + chunk);
		ZSTD_outBuffer o{out.data() + at, chunk, 0};
		const std::size_t before_in = in.pos;
		last = ZSTD_decompressStream(dctx.get(), &o, &in);
		out.resize(at + o.pos);
		if (ZSTD_isError(last))
			throw Error(name + ": corrupted or truncated: zstd says " + ZSTD_getErrorName(last));
		if (out.size() > kDumpMaxBytes)
			throw Error(name + ": holds more than the " + std::to_string(kDumpMaxBytes >> 20) + " MiB a dump may");
		if (in.pos == in.size && last != 0 && o.pos == 0 && in.pos == before_in)
			throw Error(name + ": truncated: its zstd frame ends early");
		if (last == 0 && in.pos < in.size)
			throw Error(name + ": data after its zstd frame");
	}
	return out;
}

std::string u64(std::uint64_t v)
{
	return std::to_string(v);
}

// "V:E:R" of one event of a record.
bool triple(std::string_view f, std::uint64_t &v, std::uint64_t &e, std::uint64_t &r)
{
	const std::size_t a = f.find(':');
	if (a == std::string_view::npos)
		return false;
	const std::size_t b = f.find(':', a + 1);
	if (b == std::string_view::npos)
		return false;
	return number(f.substr(0, a), v) && number(f.substr(a + 1, b - a - 1), e) && number(f.substr(b + 1), r);
}

void ring_lines(std::string &text, const DumpRings &r)
{
	auto opt = [](const std::optional<std::uint64_t> &v) { return v ? u64(*v) : std::string("-"); };
	text += "rings\t" + u64(r.generation) + "\t" + u64(r.interval_ns) + "\t" + u64(r.ring_records) + "\t" +
		(r.running ? "1" : "0") + "\t" + opt(r.status_written) + "\t" + opt(r.status_overwritten) + "\n";
	for (const auto &e : r.events)
		text += "ring_event\t" + flat(e.name) + "\t" + flat(e.pmu) + "\t" + flat(e.state) + "\n";
}

void cpu_lines(std::string &text, const DumpRingCpu &c)
{
	text += "ring_cpu\t" + u64(c.cpu) + "\t" + (c.online ? "1" : "0") + "\t" + u64(c.head) + "\t" + u64(c.lost) +
		"\t" + u64(c.other_generation) + "\t" + u64(c.records.size()) + "\n";
	for (const auto &t : c.records) {
		text += "tick\t" + u64(t.seq) + "\t" + u64(t.time_ns) + "\t" + u64(t.flags) + "\t" + u64(t.valid_mask);
		for (std::size_t i = 0; i < t.values.size(); ++i)
			text += "\t" + u64(t.values[i]) + ":" + u64(t.enabled[i]) + ":" + u64(t.running[i]);
		text += "\n";
	}
}

} // namespace

const DumpRingCpu *DumpRings::cpu(std::uint32_t id) const
{
	for (const auto &c : cpus)
		if (c.cpu == id)
			return &c;
	return nullptr;
}

DumpWriter::DumpWriter() : cctx_(ZSTD_createCCtx())
{
	if (!cctx_)
		throw Error("compressing the dump: out of memory");
	// Level 3 (zstd's default): a 15-minute dump compresses in well under
	// the 2 s a dump may take. The frame's checksum makes a flipped bit a
	// "corrupted" error instead of wrong numbers.
	ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
}

DumpWriter::~DumpWriter()
{
	ZSTD_freeCCtx(cctx_);
}

void DumpWriter::feed(std::string_view text, bool last)
{
	ZSTD_inBuffer in{text.data(), text.size(), 0};
	const ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
	for (;;) {
		const std::size_t chunk = ZSTD_CStreamOutSize();
		const std::size_t at = out_.size();
		out_.resize(at + chunk);
		ZSTD_outBuffer o{out_.data() + at, chunk, 0};
		std::size_t left = ZSTD_compressStream2(cctx_, &o, &in, mode);
		out_.resize(at + o.pos);
		if (ZSTD_isError(left))
			throw Error(std::string("compressing the dump: ") + ZSTD_getErrorName(left));
		if (last ? left == 0 : in.pos == in.size)
			return;
	}
}

void DumpWriter::begin(const DumpContents &head)
{
	std::string text(kMagicLine);
	text += std::to_string(kDumpVersion) + "\n";
	text += "created\t" + std::to_string(head.created_ns) + "\n";
	text += "trigger\t" + flat(head.trigger) + "\n";
	if (head.triggered_mono_ns)
		text += "triggered\t" + u64(*head.triggered_mono_ns) + "\n";
	for (const auto &[k, v] : head.facts)
		text += "fact\t" + flat(k) + "\t" + flat(v) + "\n";
	for (const auto &p : head.pmu_plan)
		text += "pmu_plan\t" + flat(p.series) + "\t" + flat(p.event) + "\t" + flat(p.pmu) + "\t" + flat(p.state) + "\n";
	if (!head.rings_absent.empty())
		text += "rings_absent\t" + flat(head.rings_absent) + "\n";
	if (head.rings) {
		ring_lines(text, *head.rings);
		// A CPU at a time: a large host's rings are tens of MiB of text.
		for (const auto &c : head.rings->cpus) {
			cpu_lines(text, c);
			feed(text, false);
			text.clear();
		}
	}
	feed(text, false);
}

void DumpWriter::add_ring_cpu(const DumpRingCpu &cpu)
{
	std::string text;
	cpu_lines(text, cpu);
	feed(text, false);
}

void DumpWriter::add(const Snapshot &snap, const std::vector<Vm> &vms, const std::vector<std::string> &claimed)
{
	std::string wire = encode_snapshot(snap, vms, claimed);
	std::string head = "snapshot\t" + std::to_string(wire.size()) + "\n";
	wire += '\n';
	feed(head, false);
	feed(wire, false);
}

std::string DumpWriter::finish()
{
	feed("end\n", true);
	return std::move(out_);
}

std::string compress_dump_text(std::string_view text)
{
	DumpWriter w;
	w.feed(text, true);
	return std::move(w.out_);
}

const std::string *DumpContents::fact(std::string_view key) const
{
	for (const auto &[k, v] : facts)
		if (k == key)
			return &v;
	return nullptr;
}

std::string encode_dump(const DumpContents &dump)
{
	DumpWriter w;
	w.begin(dump);
	for (const auto &snap : dump.snapshots)
		w.add(snap.snapshot, snap.vms, snap.claimed_ids);
	return w.finish();
}

namespace {

// The last ring_cpu section must hold all the ticks it announced (each
// section is checked when the next one starts, and at 'end').
void check_last_cpu(Reader &r, const DumpRings &rings, std::uint64_t expected_ticks)
{
	if (rings.cpus.empty())
		return;
	const DumpRingCpu &c = rings.cpus.back();
	if (c.records.size() != expected_ticks)
		r.bad("ring of cpu " + std::to_string(c.cpu) + ": " + std::to_string(c.records.size()) + " ticks, its ring_cpu line says " +
		      std::to_string(expected_ticks) + " (truncated or corrupted ring section)");
	if (c.lost + c.other_generation + c.records.size() != c.head)
		r.bad("ring of cpu " + std::to_string(c.cpu) + ": " + std::to_string(c.records.size()) +
		      " records + " + std::to_string(c.lost) + " lost + " + std::to_string(c.other_generation) +
		      " of an earlier configuration do not add up to its head " + std::to_string(c.head) +
		      " (truncated or corrupted ring section)");
}

// The version 2 lines: true when f was one (and is now in d).
// expected_ticks: the COUNT of the ring_cpu section being read.
bool read_v2_line(Reader &r, const std::vector<std::string_view> &f, DumpContents &d, std::uint64_t &expected_ticks)
{
	if (f[0] == "triggered") {
		std::uint64_t t = 0;
		if (f.size() != 2 || !number(f[1], t) || d.triggered_mono_ns)
			r.bad("'triggered' is not 'triggered <TAB> MONO_NS', or comes twice");
		d.triggered_mono_ns = t;
		return true;
	}
	if (f[0] == "pmu_plan") {
		if (f.size() != 5)
			r.bad("'pmu_plan' needs SERIES, EVENT, PMU and STATE");
		d.pmu_plan.push_back({std::string(f[1]), std::string(f[2]), std::string(f[3]), std::string(f[4])});
		return true;
	}
	if (f[0] == "rings_absent") {
		if (f.size() != 2 || d.rings || !d.rings_absent.empty())
			r.bad("'rings_absent' needs one reason, once, and no rings");
		d.rings_absent = std::string(f[1]);
		if (d.rings_absent.empty())
			r.bad("'rings_absent' with an empty reason");
		return true;
	}
	if (f[0] == "rings") {
		if (f.size() != 7 || d.rings || !d.rings_absent.empty())
			r.bad("'rings' needs GENERATION, INTERVAL_NS, RING_RECORDS, RUNNING, WRITTEN, OVERWRITTEN, once");
		DumpRings g;
		std::uint64_t running = 0;
		if (!number(f[1], g.generation) || !number(f[2], g.interval_ns) || !number(f[3], g.ring_records) ||
		    !number(f[4], running) || running > 1 || g.interval_ns == 0)
			r.bad("'rings' has a field that is not a number in range");
		if (g.ring_records < HWSIG_MIN_RING_RECORDS || g.ring_records > HWSIG_MAX_RING_RECORDS ||
		    (g.ring_records & (g.ring_records - 1)))
			r.bad("'rings': ring size " + std::to_string(g.ring_records) + " is not one the module makes");
		g.running = running == 1;
		for (int i : {5, 6}) {
			if (f[i] == "-")
				continue;
			std::uint64_t v = 0;
			if (!number(f[i], v))
				r.bad("'rings': status totals are numbers or '-'");
			(i == 5 ? g.status_written : g.status_overwritten) = v;
		}
		d.rings = std::move(g);
		return true;
	}
	if (f[0] == "ring_event") {
		if (f.size() != 4 || !d.rings || !d.rings->cpus.empty())
			r.bad("'ring_event' needs NAME, PMU, STATE, after 'rings' and before the first 'ring_cpu'");
		if (d.rings->events.size() == HWSIG_MAX_EVENTS)
			r.bad("more than " + std::to_string(HWSIG_MAX_EVENTS) + " ring events");
		if (f[1].empty())
			r.bad("'ring_event' with an empty name");
		d.rings->events.push_back({std::string(f[1]), std::string(f[2]), std::string(f[3])});
		return true;
	}
	if (f[0] == "ring_cpu") {
		if (!d.rings)
			r.bad("'ring_cpu' before 'rings'");
		check_last_cpu(r, *d.rings, expected_ticks);
		DumpRingCpu c;
		std::uint64_t online = 0, count = 0;
		if (f.size() != 7 || !number(f[1], c.cpu) || !number(f[2], online) || online > 1 ||
		    !number(f[3], c.head) || !number(f[4], c.lost) || !number(f[5], c.other_generation) ||
		    !number(f[6], count))
			r.bad("'ring_cpu' needs CPU, ONLINE (0/1), HEAD, LOST, OTHER_GENERATION, COUNT as numbers");
		if (!d.rings->cpus.empty() && c.cpu <= d.rings->cpus.back().cpu)
			r.bad("ring of cpu " + std::to_string(c.cpu) + " is not after cpu " +
			      std::to_string(d.rings->cpus.back().cpu));
		if (count > d.rings->ring_records)
			r.bad("ring of cpu " + std::to_string(c.cpu) + " says " + std::to_string(count) +
			      " records, its ring holds " + std::to_string(d.rings->ring_records));
		c.online = online == 1;
		// Not reserved: a forged COUNT must not allocate before ticks arrive.
		expected_ticks = count;
		d.rings->cpus.push_back(std::move(c));
		return true;
	}
	if (f[0] == "tick") {
		if (!d.rings || d.rings->cpus.empty())
			r.bad("'tick' outside a ring_cpu section");
		DumpRingCpu &c = d.rings->cpus.back();
		const std::string where = "ring of cpu " + std::to_string(c.cpu) + ": ";
		const std::size_t n = d.rings->events.size();
		if (c.records.size() >= expected_ticks)
			r.bad(where + "more ticks than its ring_cpu line says");
		if (f.size() != 5 + n)
			r.bad(where + "a tick has " + std::to_string(f.size() < 5 ? 0 : f.size() - 5) + " event fields, the ring has " +
			      std::to_string(n) + " events");
		DumpRingRecord t;
		if (!number(f[1], t.seq) || !number(f[2], t.time_ns) || !number(f[3], t.flags) || !number(f[4], t.valid_mask))
			r.bad(where + "a tick's SEQ, TIME_NS, FLAGS or VALID_MASK is not a number");
		if (t.seq == 0 || t.seq > c.head || c.head - t.seq >= d.rings->ring_records)
			r.bad(where + "tick seq " + std::to_string(t.seq) + " cannot be in a ring of " +
			      std::to_string(d.rings->ring_records) + " records with head " + std::to_string(c.head));
		if (!c.records.empty() && (t.seq <= c.records.back().seq || t.time_ns < c.records.back().time_ns))
			r.bad(where + "tick seq " + std::to_string(t.seq) + " is not after the one before it");
		t.values.resize(n);
		t.enabled.resize(n);
		t.running.resize(n);
		for (std::size_t i = 0; i < n; ++i)
			if (!triple(f[5 + i], t.values[i], t.enabled[i], t.running[i]))
				r.bad(where + "tick seq " + std::to_string(t.seq) + ": event field " + std::to_string(i + 1) +
				      " is not VALUE:ENABLED:RUNNING");
		c.records.push_back(std::move(t));
		return true;
	}
	return false;
}

} // namespace

DumpContents decode_dump(std::string_view bytes, const std::string &name)
{
	const std::string text = decompress(bytes, name);
	Reader r(text, name);
	DumpContents d;
	if (text.rfind(kMagicLine, 0) != 0)
		throw Error(name + ": not an hwsig dump (a zstd file, but not hwsig's)");
	auto head = fields(r.line());
	if (head.size() != 2 || !number(head[1], d.version))
		r.bad("its first line is not 'hwsig-dump <TAB> VERSION'");
	if (d.version > kDumpVersion)
		throw Error(name + ": dump format version " + std::to_string(d.version) + " is newer than this hwsigctl reads (" +
			    std::to_string(kDumpVersion) + "): use a newer hwsigctl");
	if (d.version < 1)
		r.bad("dump format version " + std::to_string(d.version) + " does not exist");
	bool ended = false;
	std::uint64_t expected_ticks = 0;
	while (!r.done()) {
		if (ended)
			r.bad("data after 'end'");
		auto f = fields(r.line());
		if (f[0] == "created" && f.size() == 2 && number(f[1], d.created_ns))
			continue;
		if (f[0] == "trigger" && f.size() == 2) {
			d.trigger = std::string(f[1]);
			continue;
		}
		if (f[0] == "fact" && f.size() == 3) {
			d.facts.emplace_back(std::string(f[1]), std::string(f[2]));
			continue;
		}
		if (d.version >= 2 && read_v2_line(r, f, d, expected_ticks))
			continue;
		if (f[0] == "snapshot" && f.size() == 2) {
			std::size_t n = 0;
			if (!number(f[1], n))
				r.bad("a snapshot's length is not a number");
			const std::size_t first = r.at_line() + 1;
			std::string_view wire = r.bytes(n);
			try {
				d.snapshots.push_back(decode_snapshot(wire));
			} catch (const Error &e) {
				throw Error(name + ": snapshot " + std::to_string(d.snapshots.size() + 1) + " (from line " +
					    std::to_string(first) + "): " + e.what());
			}
			if (d.snapshots.size() >= 2 &&
			    d.snapshots.back().snapshot.mono_ns <= d.snapshots[d.snapshots.size() - 2].snapshot.mono_ns)
				r.bad("snapshot " + std::to_string(d.snapshots.size()) + " is not later than the one before");
			continue;
		}
		if (f[0] == "end" && f.size() == 1) {
			ended = true;
			continue;
		}
		r.bad("'" + flat(f[0]).substr(0, 32) + "' is not a dump line, or has the wrong number of fields");
	}
	if (!ended)
		throw Error(name + ": truncated: no 'end' line");
	if (d.rings)
		check_last_cpu(r, *d.rings, expected_ticks);
	return d;
}

DumpContents read_dump_file(const std::string &path)
{
	auto r = read_file(path, kDumpMaxBytes);
	if (!r.data) {
		if (r.err == EFBIG)
			throw Error(path + ": larger than the " + std::to_string(kDumpMaxBytes >> 20) + " MiB a dump may");
		throw Error("reading " + path, r.err);
	}
	return decode_dump(*r.data, path);
}

} // namespace hwsig
