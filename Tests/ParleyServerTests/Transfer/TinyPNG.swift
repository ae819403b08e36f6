import Foundation

/// A valid PNG made here, byte by byte, so the tests ship no binary: RGB pixels, one zlib stream of
/// stored (uncompressed) deflate blocks, and the CRC-32 and Adler-32 the format requires.
enum TinyPNG {
    /// A `width` × `height` image, every pixel `rgb`.
    static func make(width: Int = 2, height: Int = 2, rgb: (UInt8, UInt8, UInt8) = (200, 40, 90)) -> [UInt8] {
        var raw: [UInt8] = []
        for _ in 0..<height {
            raw.append(0) // filter: none
            for _ in 0..<width { raw += [rgb.0, rgb.1, rgb.2] }
        }
        var header = be32(UInt32(width)) + be32(UInt32(height))
        header += [8, 2, 0, 0, 0] // 8-bit RGB, deflate, no filter method extras, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            let last: UInt8 = offset + count == data.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        return out + be32(adler32(data))
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    private static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
