import Foundation

/// Counts a GIF's frames by walking its blocks (no decoding). libvips stops counting at 4097
/// frames (with a warning), so a GIF of 10,000 frames would pass the frames x pixels limit on
/// libvips' count alone; this walk sees them all. Bounded by the file's length.
enum GIFFrameCount {
    /// The number of image descriptors, or nil when the block structure is broken before the end.
    static func count(_ bytes: Data) -> Int? {
        var reader = Reader(bytes: bytes, offset: 13)
        guard bytes.count >= 13 else { return nil }
        let flags = bytes[bytes.startIndex + 10]
        if flags & 0x80 != 0 { reader.offset += 3 << (Int(flags & 0x07) + 1) }
        var frames = 0
        while let introducer = reader.byte() {
            switch introducer {
            case 0x3B:
                return frames
            case 0x21:
                guard reader.byte() != nil, reader.skipSubBlocks() else { return nil }
            case 0x2C:
                guard reader.offset + 9 <= bytes.count else { return nil }
                let local = bytes[bytes.startIndex + reader.offset + 8]
                reader.offset += 9
                if local & 0x80 != 0 { reader.offset += 3 << (Int(local & 0x07) + 1) }
                guard reader.byte() != nil, reader.skipSubBlocks() else { return nil }
                frames += 1
            default:
                return nil
            }
        }
        return frames
    }

    private struct Reader {
        let bytes: Data
        var offset: Int

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[bytes.startIndex + offset]
        }

        /// Skips data sub-blocks up to and including the zero-length terminator.
        mutating func skipSubBlocks() -> Bool {
            while let size = byte() {
                if size == 0 { return true }
                offset += Int(size)
            }
            return false
        }
    }
}
