/// The pixel size an image's header declares (PNG, JPEG, GIF, WebP), read from its first bytes without
/// decoding anything: enough for the demo model to describe an image deterministically. nil when the
/// bytes are none of these formats or the header is cut short; never reads past the end.
struct ImageSize: Sendable, Equatable {
    let width: Int
    let height: Int

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    init?(reading bytes: [UInt8]) {
        guard let size = Self.png(bytes) ?? Self.gif(bytes) ?? Self.webP(bytes) ?? Self.jpeg(bytes) else { return nil }
        self = size
    }

    private static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at >= 0, at + count <= bytes.count else { return nil }
        return bytes[at..<(at + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at >= 0, at + count <= bytes.count else { return nil }
        return bytes[at..<(at + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    private static func starts(_ bytes: [UInt8], with prefix: [UInt8], at offset: Int = 0) -> Bool {
        offset + prefix.count <= bytes.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
    }

    /// PNG: the signature, then the IHDR chunk's width and height (big-endian, bytes 16–23).
    private static func png(_ bytes: [UInt8]) -> ImageSize? {
        guard starts(bytes, with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              let width = bigEndian(bytes, 16, 4), let height = bigEndian(bytes, 20, 4) else { return nil }
        return ImageSize(width: width, height: height)
    }

    /// GIF: `GIF8`, then the logical screen's width and height (little-endian, bytes 6–9).
    private static func gif(_ bytes: [UInt8]) -> ImageSize? {
        guard starts(bytes, with: Array("GIF8".utf8)),
              let width = littleEndian(bytes, 6, 2), let height = littleEndian(bytes, 8, 2) else { return nil }
        return ImageSize(width: width, height: height)
    }

    /// WebP: a RIFF `WEBP` file whose first chunk is lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`).
    private static func webP(_ bytes: [UInt8]) -> ImageSize? {
        guard starts(bytes, with: Array("RIFF".utf8)), starts(bytes, with: Array("WEBP".utf8), at: 8) else { return nil }
        if starts(bytes, with: Array("VP8 ".utf8), at: 12),
           let width = littleEndian(bytes, 26, 2), let height = littleEndian(bytes, 28, 2) {
            return ImageSize(width: width & 0x3FFF, height: height & 0x3FFF)
        }
        if starts(bytes, with: Array("VP8L".utf8), at: 12), let bits = littleEndian(bytes, 21, 4) {
            return ImageSize(width: 1 + (bits & 0x3FFF), height: 1 + ((bits >> 14) & 0x3FFF))
        }
        if starts(bytes, with: Array("VP8X".utf8), at: 12),
           let width = littleEndian(bytes, 24, 3), let height = littleEndian(bytes, 27, 3) {
            return ImageSize(width: width + 1, height: height + 1)
        }
        return nil
    }

    /// JPEG: the segments after SOI are walked by their lengths to the first start-of-frame marker
    /// (SOF0–SOF15 but DHT, JPG and DAC), which holds the height then the width (big-endian).
    private static func jpeg(_ bytes: [UInt8]) -> ImageSize? {
        guard starts(bytes, with: [0xFF, 0xD8]) else { return nil }
        var index = 2
        while index + 1 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {
                index += 1
                continue
            }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index += 2
                continue
            }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard let height = bigEndian(bytes, index + 5, 2), let width = bigEndian(bytes, index + 7, 2) else {
                    return nil
                }
                return ImageSize(width: width, height: height)
            }
            guard let length = bigEndian(bytes, index + 2, 2), length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }
}
