import CYajl
import ParleyPrimitives

/// Pulls the A2UI messages out of `parley/render_ui`'s arguments (`{"messages":[ … ]}`) while they
/// stream: fed the fragments as the model writes them, it yields each element of `messages` as soon as
/// that element closes, so a surface is drawn before the call ends. Parsing is yajl's (Debian's
/// libyajl, strict), never Parley's own: a fragment may end anywhere, even inside a string or a number.
///
/// Bounds: an element nested deeper than `limits.maxDepth`, or holding a string or key longer than
/// `limits.maxStringBytes`, is yielded as a fault (what is wrong with it) instead of a value; the parse goes
/// on, so one hostile element does not hide the ones after it. Keys beside `messages` are ignored.
///
/// Concurrency: a class over a C handle, used from one task at a time (a reply's generation).
public final class MessageExtractor {
    /// One element of `messages`, in order.
    public enum Element: Equatable, Sendable {
        case message(JSON)
        /// The element at `index` broke a bound; `reason` says which.
        case fault(index: Int, reason: String)
    }

    let limits: SurfaceLimits
    private var handle: yajl_handle?
    private let table = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    private var builder: ValueBuilder
    /// The elements completed by the last `feed`.
    private var completed: [Element] = []
    /// Set once the text is not JSON (yajl's message): nothing more is read.
    public private(set) var syntaxError: String?

    public init(limits: SurfaceLimits) {
        self.limits = limits
        builder = ValueBuilder(limits: limits)
        table.initialize(to: Self.callbacks)
        handle = yajl_alloc(table, nil, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let handle { yajl_free(handle) }
        table.deinitialize(count: 1)
        table.deallocate()
    }

    /// Reads the next fragment; returns the elements it completed (often none).
    public func feed(_ fragment: String) -> [Element] {
        feed(utf8: Array(fragment.utf8))
    }

    /// Reads the next bytes (which may end inside a UTF-8 character: yajl joins them).
    public func feed(utf8 fragment: [UInt8]) -> [Element] {
        guard syntaxError == nil, let handle, !fragment.isEmpty else { return [] }
        var bytes = fragment
        let status = bytes.withUnsafeMutableBufferPointer { buffer in
            yajl_parse(handle, buffer.baseAddress, buffer.count)
        }
        record(status)
        return take()
    }

    /// The arguments are complete: an unfinished document is a syntax error.
    public func finish() -> [Element] {
        guard syntaxError == nil, let handle else { return take() }
        record(yajl_complete_parse(handle))
        return take()
    }

    private func take() -> [Element] {
        defer { completed = [] }
        return completed
    }

    private func record(_ status: yajl_status) {
        guard status != yajl_status_ok, let handle else { return }
        var message = "the arguments are not valid JSON"
        if let text = yajl_get_error(handle, 0, nil, 0) {
            message += " (" + String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines) + ")"
            yajl_free_error(handle, text)
        }
        syntaxError = message
    }

    fileprivate func deliver(_ event: ValueBuilder.Event) -> Int32 {
        if let element = builder.take(event) { completed.append(element) }
        return 1
    }

    private static let callbacks = yajl_callbacks(
        yajl_null: { context in target(context)?.deliver(.scalar(.null)) ?? 0 },
        yajl_boolean: { context, value in target(context)?.deliver(.scalar(.bool(value != 0))) ?? 0 },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { context, text, length in
            let literal = string(text.map { UnsafeRawPointer($0) }, length)
            return target(context)?.deliver(.scalar(number(literal))) ?? 0
        },
        yajl_string: { context, text, length in
            target(context)?.deliver(.string(string(text.map { UnsafeRawPointer($0) }, length), length)) ?? 0
        },
        yajl_start_map: { context in target(context)?.deliver(.startObject) ?? 0 },
        yajl_map_key: { context, text, length in
            target(context)?.deliver(.key(string(text.map { UnsafeRawPointer($0) }, length), length)) ?? 0
        },
        yajl_end_map: { context in target(context)?.deliver(.end) ?? 0 },
        yajl_start_array: { context in target(context)?.deliver(.startArray) ?? 0 },
        yajl_end_array: { context in target(context)?.deliver(.end) ?? 0 })
}

/// The extractor a yajl callback is for (the pointer given to `yajl_alloc`).
private func target(_ context: UnsafeMutableRawPointer?) -> MessageExtractor? {
    context.map { Unmanaged<MessageExtractor>.fromOpaque($0).takeUnretainedValue() }
}

/// A JSON number as Parley's `JSON` reads one (`JSON(parsing:)`): an integral value that fits `Int64` is an
/// integer (`-1.5e3` is -1500), any other a Double.
private func number(_ literal: String) -> JSON {
    if let integer = Int64(literal) { return .integer(integer) }
    guard let double = Double(literal) else { return .null }
    if double == double.rounded(), abs(double) < 9.2e18 { return .integer(Int64(double)) }
    return .number(double)
}

/// yajl's bytes (already checked as UTF-8) as a String.
private func string(_ bytes: UnsafeRawPointer?, _ length: Int) -> String {
    guard let bytes else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
}
