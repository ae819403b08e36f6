/// UTF-8 checked piece by piece, as a file arrives or is read, with its Unicode scalars counted: what a
/// text document needs (its bytes are its text), without holding the file. A scalar cut between two
/// pieces is completed from the next one; one still cut at the end is a fault.
///
/// The check is the standard library's (`UTF8Span(validating:)`); this type only finds where a piece's
/// last scalar is incomplete. A value type with no shared state: one owner feeds it, on one thread.
struct UTF8Scan {
    /// The first bytes of a scalar the last piece cut (at most 3).
    private var carry: [UInt8] = []
    private var valid = true
    /// Scalars so far: every byte that is not a continuation byte (10xxxxxx) starts one.
    private var scalars = 0

    /// Checks and counts the next bytes.
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard valid, !bytes.isEmpty else { return }
        scalars += bytes.count - Self.continuationBytes(bytes)
        var rest = bytes[...]
        if let lead = carry.first {
            let needed = Self.length(of: lead) - carry.count
            guard rest.count >= needed else {
                carry += rest
                return
            }
            let completed = carry + rest.prefix(needed)
            carry = []
            guard completed.withUnsafeBytes(Self.isValid) else { return fail() }
            rest = rest.dropFirst(needed)
        }
        let cut = Self.incompleteTail(rest)
        guard Self.isValid(UnsafeRawBufferPointer(rebasing: rest[..<cut])) else { return fail() }
        carry = Array(rest[cut...])
    }

    /// The scalar count when every byte was UTF-8 and no scalar is left cut; nil otherwise.
    func finish() -> Int? {
        valid && carry.isEmpty ? scalars : nil
    }

    private mutating func fail() {
        valid = false
        carry = []
    }

    // MARK: - Pieces

    /// The index where a last scalar too short for its lead byte starts (its bytes wait for the next
    /// piece), or the end when the piece ends on a whole scalar. Anything else the check decides.
    private static func incompleteTail(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int {
        var index = bytes.endIndex
        while index > bytes.startIndex, bytes.endIndex - index < 4 {
            index -= 1
            let byte = bytes[index]
            guard byte & 0xC0 == 0x80 else {
                return length(of: byte) > bytes.endIndex - index ? index : bytes.endIndex
            }
        }
        return bytes.endIndex
    }

    /// The bytes a scalar with this lead byte takes (1 for a byte the check will refuse anyway).
    private static func length(of lead: UInt8) -> Int {
        switch lead {
        case 0xC0...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF7: 4
        default: 1
        }
    }

    private static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do {
            _ = try UTF8Span(validating: bytes.assumingMemoryBound(to: UInt8.self).span)
            return true
        } catch {
            return false
        }
    }

    /// Continuation bytes (10xxxxxx) in `bytes`, eight at a time.
    private static func continuationBytes(_ bytes: UnsafeRawBufferPointer) -> Int {
        let high: UInt64 = 0x8080_8080_8080_8080
        var count = 0
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            count += (word & high & ~(word << 1)).nonzeroBitCount
            index += 8
        }
        while index < bytes.count {
            if bytes[index] & 0xC0 == 0x80 { count += 1 }
            index += 1
        }
        return count
    }
}
