#include "hwsig/dump_file.h"

#include <zstd.h>

#include <cerrno>
#include <charconv>
#include <memory>

#include "hwsig/error.h"
#include "hwsig/fs.h"

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

} // namespace

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
	for (const auto &[k, v] : head.facts)
		text += "fact\t" + flat(k) + "\t" + flat(v) + "\n";
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
