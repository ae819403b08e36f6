/// `%XX` escapes decoded, as URLs carry them (request paths and queries, the user and password of a
/// database or Redis URL): one implementation, so every module refuses the same bad escapes.
public enum PercentDecoding {
    /// `text` with its `%XX` escapes decoded (and `+` read as a space when `plusIsSpace`, as in a query);
    /// nil on a stray or bad escape, or bytes that are not UTF-8.
    public static func decode(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        // Most paths and parameters have nothing to decode; the text is already valid UTF-8.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusIsSpace) }) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
