/// `SQLValue`s as libpq's text-format parameters: one buffer of NUL-terminated texts.
///
/// Integers are decimal, reals the shortest text that reads back to the same `Double` (Swift's
/// `description`, which PostgreSQL's `float8in` parses: `1e-05`, `inf`, `nan`), texts their UTF-8
/// bytes. libpq reads a text-format parameter up to its first NUL (it ignores lengths for them), and
/// PostgreSQL's `text` cannot hold U+0000 at all, so a text containing one is refused here with
/// SQLSTATE 22021, the code PostgreSQL itself gives that character: it would otherwise be cut short.
struct PostgresParameters {
    private var buffer: [UInt8] = []
    /// Where each parameter starts in `buffer`; nil for NULL.
    private var offsets: [Int?] = []

    init(_ values: [SQLValue]) throws(StoreError) {
        offsets.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .null:
                offsets.append(nil)
                continue
            case .integer(let number):
                offsets.append(buffer.count)
                buffer.append(contentsOf: String(number).utf8)
            case .real(let number):
                offsets.append(buffer.count)
                buffer.append(contentsOf: number.description.utf8)
            case .text(let text):
                offsets.append(buffer.count)
                let start = buffer.count
                buffer.append(contentsOf: text.utf8)
                if buffer[start...].contains(0) {
                    throw StoreError.postgres(
                        sqlstate: "22021", message: "text containing U+0000 (NUL) cannot be stored in PostgreSQL")
                }
            }
            buffer.append(0)
        }
    }

    var count: Int32 { Int32(offsets.count) }

    /// Calls `body` with libpq's `paramValues` array (valid only during the call).
    func withValues<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        buffer.withUnsafeBufferPointer { bytes in
            let base = bytes.baseAddress.map { UnsafeRawPointer($0) }
            let pointers = offsets.map { offset in
                offset.flatMap { offset in base.map { ($0 + offset).assumingMemoryBound(to: CChar.self) } }
            }
            return body(pointers)
        }
    }
}
