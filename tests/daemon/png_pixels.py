"""A PNG's pixels as RGB tuples, with zlib alone (no imaging library: the
daemon tier's python may not be Debian's). Handles what browsers write:
8-bit greyscale, RGB, RGBA (colour types 0, 2, 6), not interlaced."""
import struct
import zlib


class Png:
    def __init__(self, path):
        data = open(path, "rb").read()
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise ValueError(f"{path}: not a PNG")
        pos, idat = 8, b""
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                self.width, self.height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
                if depth != 8 or colour not in (0, 2, 6) or interlace:
                    raise ValueError(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}: unsupported")
                self.channels = {0: 1, 2: 3, 6: 4}[colour]
            elif kind == b"IDAT":
                idat += body
            pos += 12 + length
        raw = zlib.decompress(idat)
        stride = self.width * self.channels
        rows, prev = [], bytearray(stride)
        bpp = self.channels
        for y in range(self.height):
            f = raw[y * (stride + 1)]
            line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                if f == 1:
                    line[i] = (line[i] + a) & 0xFF
                elif f == 2:
                    line[i] = (line[i] + b) & 0xFF
                elif f == 3:
                    line[i] = (line[i] + (a + b) // 2) & 0xFF
                elif f == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
            rows.append(bytes(line))
            prev = line
        self.rows = rows

    def pixel(self, x, y):
        """(r, g, b) at column x, row y."""
        i = x * self.channels
        px = self.rows[y][i:i + self.channels]
        return (px[0], px[0], px[0]) if self.channels == 1 else tuple(px[:3])
