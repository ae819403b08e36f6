/// `SQLValue`s as libpq's text-format parameters: one buffer of NUL-terminated texts.
///
/// Integers are decimal, reals the shortest text that reads back to the same `Double` (Swift's
/// `description`, which PostgreSQL's `float8in` parses: `1e-05`, `inf`, `nan`), texts their UTF-8
/// bytes. libpq reads a text-format parameter up to its first NUL (it ignores lengths for them), and
/// PostgreSQL's `text` cannot hold U+0000 at all, so texts are written escaped (`PostgresText`).
/// Blobs go in binary format (their bytes as they are, with their length), so a `bytea` chunk is
/// neither hex-encoded nor cut at a zero byte.
struct PostgresParameters {
    private var buffer: [UInt8] = []
    /// Where each parameter starts in `buffer`; nil for NULL.
    private var offsets: [Int?] = []
    /// Each parameter's length in bytes (read by libpq for binary ones only).
    private var lengths: [Int32] = []
    /// 0 for text format, 1 for binary; empty while every parameter is text.
    private var formats: [Int32] = []

    init(_ values: [SQLValue]) throws(StoreError) {
        offsets.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            lengths.append(0)  // libpq reads only a binary parameter's length
            switch value {
            case .null:
                offsets.append(nil)
                continue
            case .blob(let bytes):
                if formats.isEmpty { formats = Array(repeating: 0, count: values.count) }
                formats[index] = 1
                lengths[index] = Int32(clamping: bytes.count)
                offsets.append(buffer.count)
                buffer.append(contentsOf: bytes)  // and a 0 below: an empty blob still has an address
            case .integer(let number):
                offsets.append(buffer.count)
                buffer.append(contentsOf: String(number).utf8)
            case .real(let number):
                offsets.append(buffer.count)
                buffer.append(contentsOf: number.description.utf8)
            case .text(let text):
                offsets.append(buffer.count)
                PostgresText.append(text, to: &buffer)  // U+0000 escaped: PostgreSQL's text cannot hold it
            }
            buffer.append(0)
        }
    }

    var count: Int32 { Int32(offsets.count) }

    /// Calls `body` with libpq's `paramValues`, `paramLengths` and `paramFormats` arrays (nil lengths
    /// and formats when every parameter is text); valid only during the call.
    func withValues<R>(
        _ body: ([UnsafePointer<CChar>?], UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        buffer.withUnsafeBufferPointer { bytes in
            let base = bytes.baseAddress.map { UnsafeRawPointer($0) }
            let pointers = offsets.map { offset in
                offset.flatMap { offset in base.map { ($0 + offset).assumingMemoryBound(to: CChar.self) } }
            }
            guard !formats.isEmpty else { return body(pointers, nil, nil) }
            return lengths.withUnsafeBufferPointer { lengths in
                formats.withUnsafeBufferPointer { formats in body(pointers, lengths.baseAddress, formats.baseAddress) }
            }
        }
    }
}
