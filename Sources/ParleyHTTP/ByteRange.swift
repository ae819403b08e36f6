/// One `Range: bytes=…` request (RFC 9110 §14) read against a body of known size: what a client
/// resuming a download or a media element seeking asks for.
///
/// Only a single range is served as 206. A list of ranges (`bytes=0-1,5-6`) would need a
/// `multipart/byteranges` answer; RFC 9110 lets a server ignore the header instead, and the whole
/// body (200) is what is sent. A header that is not a byte range at all is ignored the same way; a
/// range wholly past the end is 416 with `Content-Range: bytes */size`.
public enum ByteRange: Equatable, Sendable {
    /// Send the whole body (no range asked, or one Parley does not serve).
    case whole
    /// Send these bytes, as 206 with `Content-Range`.
    case partial(Range<Int>)
    /// 416: nothing of the body is in the range.
    case unsatisfiable

    /// The range `header` asks of a body of `size` bytes.
    public init(header: String?, size: Int) {
        guard let header else {
            self = .whole
            return
        }
        let trimmed = header.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes="), size >= 0 else {
            self = .whole
            return
        }
        let spec = trimmed.dropFirst("bytes=".count).trimmingWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash].trimmingWhitespace()
        let last = spec[spec.index(after: dash)...].trimmingWhitespace()
        if first.isEmpty {
            // A suffix: the last N bytes.
            guard let count = Self.number(last) else {
                self = .whole
                return
            }
            guard count > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(max(0, size - count)..<size)
            return
        }
        guard let start = Self.number(first) else {
            self = .whole
            return
        }
        var end = size - 1
        if !last.isEmpty {
            guard let asked = Self.number(last), asked >= start else {
                self = .whole
                return
            }
            end = min(asked, size - 1)
        }
        guard start < size else {
            self = .unsatisfiable
            return
        }
        self = .partial(start..<(end + 1))
    }

    /// The `Content-Range` header's value for this range of a body of `size` bytes (nil for `.whole`).
    public func contentRange(size: Int) -> String? {
        switch self {
        case .whole: nil
        case .partial(let range): "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
        case .unsatisfiable: "bytes */\(size)"
        }
    }

    /// A non-negative decimal with at most 18 digits (no sign, no spaces inside): anything else is not a range.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(text)
    }
}

private extension StringProtocol {
    func trimmingWhitespace() -> Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
