import CYajl
import Foundation

/// An incremental JSON parser over yajl (Debian's libyajl 2.1): bytes go in as they arrive, events
/// come out, and nothing but the current string is ever held, so an import of 96 MiB is read without
/// being whole in memory. yajl runs strict here (its defaults: no comments, strings checked as UTF-8,
/// nothing after the value).
///
/// `handle` is called for each event, on the caller's thread, during `feed`/`finish`; it throws to
/// stop the parse (the error comes out of `feed`). Nesting deeper than `maxDepth` stops it too, so a
/// hostile document cannot make the consumer recurse.
final class JSONEventParser {
    /// Why a document could not be read.
    enum Failure: Error, Equatable {
        /// Not JSON: yajl's message, with where.
        case syntax(String)
        case tooDeep(Int)
    }

    let maxDepth: Int
    private let handle: (JSONEvent) throws -> Void
    /// yajl's parser.
    private var handleC: yajl_handle?
    private var depth = 0
    private let callbackTable = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    /// What stopped the parse from inside a callback (yajl only sees "cancelled").
    private var stopped: (any Error)?

    init(maxDepth: Int, handle: @escaping (JSONEvent) throws -> Void) {
        self.maxDepth = maxDepth
        self.handle = handle
        // yajl keeps the pointer, not a copy: the table lives as long as the parser.
        callbackTable.initialize(to: Self.callbacks)
        handleC = yajl_alloc(callbackTable, nil, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let handleC { yajl_free(handleC) }
        callbackTable.deinitialize(count: 1)
        callbackTable.deallocate()
    }

    /// Parses the next bytes of the document.
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard let handleC, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let status = yajl_parse(handleC, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        try check(status, bytes)
    }

    /// Ends the document: an unfinished value is an error.
    func finish() throws {
        guard let handleC else { return }
        try check(yajl_complete_parse(handleC), nil)
    }

    private func check(_ status: yajl_status, _ bytes: UnsafeRawBufferPointer?) throws {
        if let stopped { throw stopped }
        guard status != yajl_status_ok, let handleC else { return }
        let base = bytes?.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard let text = yajl_get_error(handleC, 0, base, bytes?.count ?? 0) else {
            throw Failure.syntax("The document is not valid JSON.")
        }
        defer { yajl_free_error(handleC, text) }
        let message = String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
        let offset = yajl_get_bytes_consumed(handleC)
        throw Failure.syntax("The document is not valid JSON (\(message), near byte \(offset) of a piece).")
    }

    /// One event from a callback; false stops yajl.
    fileprivate func deliver(_ event: JSONEvent) -> Int32 {
        switch event {
        case .startObject, .startArray:
            depth += 1
            if depth > maxDepth {
                stopped = Failure.tooDeep(maxDepth)
                return 0
            }
        case .endObject, .endArray:
            depth -= 1
        default:
            break
        }
        do {
            try handle(event)
            return 1
        } catch {
            stopped = error
            return 0
        }
    }

    private static let callbacks = yajl_callbacks(
        yajl_null: { context in parser(context).deliver(.null) },
        yajl_boolean: { context, value in parser(context).deliver(.bool(value != 0)) },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { context, text, length in
            parser(context).deliver(.number(JSONEventParser.text(text, length)))
        },
        yajl_string: { context, text, length in
            parser(context).deliver(.string(JSONEventParser.text(text, length)))
        },
        yajl_start_map: { context in parser(context).deliver(.startObject) },
        yajl_map_key: { context, text, length in
            parser(context).deliver(.key(JSONEventParser.text(text, length)))
        },
        yajl_end_map: { context in parser(context).deliver(.endObject) },
        yajl_start_array: { context in parser(context).deliver(.startArray) },
        yajl_end_array: { context in parser(context).deliver(.endArray) })

    private static func text(_ bytes: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let bytes else { return "" }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    private static func text(_ bytes: UnsafePointer<UInt8>?, _ length: Int) -> String {
        guard let bytes else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }
}

/// The parser a callback is for: yajl hands back the pointer given to yajl_alloc, which is the parser
/// itself (alive while it parses). A callback without one stops the parse.
private struct CallbackTarget {
    let parser: JSONEventParser?

    init(_ context: UnsafeMutableRawPointer?) {
        parser = context.map { Unmanaged<JSONEventParser>.fromOpaque($0).takeUnretainedValue() }
    }

    func deliver(_ event: JSONEvent) -> Int32 {
        parser?.deliver(event) ?? 0
    }
}

private func parser(_ context: UnsafeMutableRawPointer?) -> CallbackTarget {
    CallbackTarget(context)
}
