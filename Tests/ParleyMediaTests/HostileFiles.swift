import Foundation

/// Hostile and edge-case files written byte by byte by the tests (no file is shipped).
enum HostileFiles {
    /// A PNG whose IHDR says `width` x `height` (valid CRC), with one tiny IDAT and IEND: a
    /// decompression bomb's header without the bomb.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += chunk("IHDR", MediaFixtures.be32(width) + MediaFixtures.be32(height) + [8, 2, 0, 0, 0])
        // zlib stream of a few zero bytes (stored block): valid, far too short for the image.
        bytes += chunk("IDAT", [0x78, 0x01, 0x01, 0x04, 0x00, 0xFB, 0xFF, 0, 0, 0, 0, 0x00, 0x04, 0x00, 0x01])
        bytes += chunk("IEND", [])
        return Data(bytes)
    }

    /// A GIF89a whose logical screen is `width` x `height`, holding `frames` 1 x 1 frames (each the
    /// classic one-pixel image block): thousands of frames in a few hundred KB.
    static func gif(width: UInt16, height: UInt16, frames: Int) -> Data {
        var bytes = Array("GIF89a".utf8)
        bytes += [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
        bytes += [0x80, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00]   // global table: white, black
        for _ in 0..<frames {
            bytes += [0x21, 0xF9, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00]        // graphic control: 10 ms
            bytes += [0x2C, 0, 0, 0, 0, 0x01, 0x00, 0x01, 0x00, 0x00]          // 1 x 1 at 0,0
            bytes += [0x02, 0x02, 0x44, 0x01, 0x00]                           // LZW data of one pixel
        }
        bytes.append(0x3B)
        return Data(bytes)
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return MediaFixtures.be32(UInt32(data.count)) + typed + MediaFixtures.be32(crc32(typed))
    }

    /// CRC-32 (ISO 3309, as PNG uses), bit by bit: small inputs only.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
