/// Incremental decoder for `text/event-stream` bytes, following the WHATWG EventSource parsing rules.
///
/// Feed bytes as they arrive, in pieces of any size: the decoded events do not depend on where the
/// pieces were cut (a CRLF or a UTF-8 character may be split across reads). Only complete lines are
/// decoded as UTF-8; invalid UTF-8 is a protocol error (`SSEError.invalidUTF8`), never replaced.
/// A value type with no shared state: use one decoder per stream, from one task at a time.
///
/// The ParleySSE module is this decoder: bytes of an event stream in, `SSEEvent`s out. It must never
/// know where the bytes come from (HTTP, libcurl, sockets) or what an event's data means (JSON,
/// providers, replies).
public struct SSEDecoder: Sendable {
    /// Default cap on one line (1 MiB): protects memory against a peer that never ends a line.
    public static let defaultMaxLineBytes = 1 << 20
    /// Default cap on the data of one event (8 MiB).
    public static let defaultMaxEventBytes = 8 << 20

    /// A line longer than this (without its terminator) throws `SSEError.lineTooLong`.
    public let maxLineBytes: Int
    /// An event whose data grows past this throws `SSEError.eventTooLarge`.
    public let maxEventBytes: Int
    /// Number of comment lines (starting with `:`) seen so far; comments are otherwise ignored.
    public private(set) var comments = 0
    /// The last event ID buffer (persists across events).
    public private(set) var lastEventID = ""
    /// The reconnection time in milliseconds from the latest valid `retry` field.
    public private(set) var retry: Int?

    // MARK: - Buffers

    /// Undecoded bytes; `buffer[lineStart...]` is the start of the current incomplete line.
    private var buffer: [UInt8] = []
    /// Bytes before this index in `buffer` were already searched for a line terminator.
    private var scanned = 0
    private var bomChecked = false
    /// The previous piece ended in CR: an LF at the start of the next piece belongs to it.
    private var pendingCR = false
    private var eventType = ""
    /// The data buffer without its final LF: lines are joined with LF as they come, so the usual
    /// one-line event keeps the decoded line as it is, with no copy to drop a trailing LF.
    private var data = ""
    /// True once a `data` field was seen: the buffer is then non-empty in the specification's
    /// terms (it holds at least the LF), even when `data` is "".
    private var hasData = false
    private var dataBytes = 0

    public init(maxLineBytes: Int = SSEDecoder.defaultMaxLineBytes,
                maxEventBytes: Int = SSEDecoder.defaultMaxEventBytes) {
        self.maxLineBytes = maxLineBytes
        self.maxEventBytes = maxEventBytes
    }

    // MARK: - Decoding

    /// Decodes the next piece of the stream and returns the events it completed.
    public mutating func decode(_ bytes: some Sequence<UInt8>) throws(SSEError) -> [SSEEvent] {
        var events: [SSEEvent] = []
        try decode(bytes, into: &events)
        return events
    }

    /// Decodes the next piece, appending the events it completed to `events`. When the piece holds
    /// a protocol error, the events completed before it are in `events` when this throws, so a
    /// caller keeps every well-formed event that preceded the fault.
    public mutating func decode(_ bytes: some Sequence<UInt8>, into events: inout [SSEEvent]) throws(SSEError) {
        buffer.append(contentsOf: bytes)
        if !bomChecked {
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let n = min(buffer.count, 3)
            if buffer[0..<n].elementsEqual(bom[0..<n]) {
                if n < 3 { return }  // might still be a BOM: wait for more bytes
                buffer.removeFirst(3)
            }
            bomChecked = true
        }
        if pendingCR, let first = buffer.first {
            pendingCR = false
            if first == 0x0A { buffer.removeFirst() }
        }
        var lineStart = 0
        var index = scanned
        let count = buffer.count
        while true {
            let end: Int? = buffer.withUnsafeBufferPointer { raw in
                var i = index
                while i < count {
                    let byte = raw[i]
                    if byte == 0x0A || byte == 0x0D { return i }
                    i += 1
                }
                return nil
            }
            guard let end else { break }
            if end - lineStart > maxLineBytes { throw .lineTooLong(limit: maxLineBytes) }
            var next = end + 1
            if buffer[end] == 0x0D {
                if next < count {
                    if buffer[next] == 0x0A { next += 1 }
                } else {
                    pendingCR = true
                }
            }
            if let event = try processLine(buffer[lineStart..<end]) { events.append(event) }
            lineStart = next
            index = next
        }
        if count - lineStart > maxLineBytes { throw .lineTooLong(limit: maxLineBytes) }
        if lineStart > 0 { buffer.removeFirst(lineStart) }
        scanned = buffer.count
    }

    /// Ends the stream. Per the specification an incomplete event (no empty line after it) is discarded,
    /// so this returns no events; it resets the decoder for reuse while keeping the last event ID.
    public mutating func finish() -> [SSEEvent] {
        buffer.removeAll()
        scanned = 0
        pendingCR = false
        eventType = ""
        data = ""
        hasData = false
        dataBytes = 0
        return []
    }

    // MARK: - Lines

    private mutating func processLine(_ line: ArraySlice<UInt8>) throws(SSEError) -> SSEEvent? {
        if line.isEmpty { return dispatch() }
        if line.first == 0x3A {  // ':' comment
            comments += 1
            return nil
        }
        let colon = line.firstIndex(of: 0x3A)
        let nameBytes = line[line.startIndex..<(colon ?? line.endIndex)]
        var valueStart = colon.map { $0 + 1 } ?? line.endIndex
        if valueStart < line.endIndex, line[valueStart] == 0x20 { valueStart += 1 }
        let valueBytes = line[valueStart..<line.endIndex]
        guard let name = String(validating: nameBytes, as: UTF8.self),
              let value = String(validating: valueBytes, as: UTF8.self) else {
            throw .invalidUTF8
        }
        switch name {
        case "event":
            eventType = value
        case "data":
            dataBytes += valueBytes.count + 1
            if dataBytes > maxEventBytes { throw .eventTooLarge(limit: maxEventBytes) }
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id":
            if !valueBytes.contains(0) { lastEventID = value }
        case "retry":
            if !valueBytes.isEmpty, valueBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let ms = Int(value) {
                retry = ms
            }
        default:
            break  // unknown fields are ignored
        }
        return nil
    }

    private mutating func dispatch() -> SSEEvent? {
        defer {
            data = ""
            hasData = false
            dataBytes = 0
            eventType = ""
        }
        guard hasData else { return nil }
        return SSEEvent(type: eventType.isEmpty ? "message" : eventType, data: data, id: lastEventID, retry: retry)
    }
}
