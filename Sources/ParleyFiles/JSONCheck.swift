import CYajl
import Foundation

/// Whether a `.json` document parses, fed piece by piece to yajl (Debian's libyajl 2.1, strict: no
/// comments, nothing after the value). In the server's own process, because yajl keeps its nesting
/// on a byte stack of its own instead of recursing, so no document can crash it; the depth is still
/// held to `maxDepth` (what the worker's Foundation parser allowed), so a file of brackets cannot make
/// that stack as big as the file. Only the nesting is followed: values are not turned into strings.
///
/// Not thread-safe: one owner feeds it, on one thread.
final class JSONCheck {
    /// Nesting levels allowed (arrays and objects).
    static let maxDepth = 512

    private var handle: yajl_handle?
    private let callbackTable = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    fileprivate var depth = 0
    fileprivate var tooDeep = false
    /// Why the document does not parse, once known.
    private(set) var failure: String?

    init() {
        // yajl keeps the pointer, not a copy: the table lives as long as the check.
        callbackTable.initialize(to: Self.callbacks)
        handle = yajl_alloc(callbackTable, nil, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let handle { yajl_free(handle) }
        callbackTable.deinitialize(count: 1)
        callbackTable.deallocate()
    }

    /// Parses the next bytes; after a failure the rest is ignored.
    func add(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, let handle, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let pointer = base.assumingMemoryBound(to: UInt8.self)
        record(yajl_parse(handle, pointer, bytes.count), pointer, bytes.count)
    }

    /// Ends the document: nil when it parsed, else why not.
    func finish() -> String? {
        if failure == nil, let handle { record(yajl_complete_parse(handle), nil, 0) }
        return failure
    }

    private func record(_ status: yajl_status, _ bytes: UnsafePointer<UInt8>?, _ count: Int) {
        guard status != yajl_status_ok, let handle else { return }
        if tooDeep {
            failure = "it nests deeper than \(Self.maxDepth) levels"
            return
        }
        guard let text = yajl_get_error(handle, 0, bytes, count) else {
            failure = "not valid JSON"
            return
        }
        defer { yajl_free_error(handle, text) }
        failure = String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    private static let callbacks = yajl_callbacks(
        yajl_null: nil, yajl_boolean: nil, yajl_integer: nil, yajl_double: nil, yajl_number: nil,
        yajl_string: nil,
        yajl_start_map: { context in JSONCheck.nest(context, 1) },
        yajl_map_key: nil,
        yajl_end_map: { context in JSONCheck.nest(context, -1) },
        yajl_start_array: { context in JSONCheck.nest(context, 1) },
        yajl_end_array: { context in JSONCheck.nest(context, -1) })

    /// A callback: one level in or out; 0 stops yajl past `maxDepth`.
    private static func nest(_ context: UnsafeMutableRawPointer?, _ step: Int) -> Int32 {
        guard let context else { return 0 }
        let check = Unmanaged<JSONCheck>.fromOpaque(context).takeUnretainedValue()
        check.depth += step
        if check.depth > maxDepth {
            check.tooDeep = true
            return 0
        }
        return 1
    }
}
