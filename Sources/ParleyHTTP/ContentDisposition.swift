import Foundation

/// A `Content-Disposition` header (RFC 6266) for a name that came from a user: an uploaded file's.
///
/// The name is only ever a label for the browser's save dialog, never a path, so whatever could make
/// it one is taken out: everything up to the last `/` or `\` (`../../etc/passwd` is `passwd`),
/// control characters (CR and LF would end the header), quotes, and leading dots (a hidden file).
/// Browsers read the UTF-8 `filename*` (RFC 5987); `filename` is an ASCII fallback with every other
/// character as `_`. A name with nothing left is `fallback`.
public struct ContentDisposition: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// Shown in the page (images).
        case inline
        /// Downloaded (documents).
        case attachment
    }

    public let kind: Kind
    /// The cleaned name (UTF-8), at most `maxCharacters`.
    public let filename: String

    /// Characters of a name that are kept; longer names are cut, keeping the extension.
    public static let maxCharacters = 150

    public init(_ kind: Kind, filename raw: String, fallback: String = "file") {
        self.kind = kind
        let cleaned = Self.clean(raw)
        self.filename = cleaned.isEmpty ? fallback : cleaned
    }

    /// The name as a label: the last path component, no controls, no quotes, no leading dots, cut.
    public static func clean(_ raw: String) -> String {
        let lastComponent = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var kept = String(String.UnicodeScalarView(lastComponent.unicodeScalars.filter { scalar in
            !(scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format
              || scalar == "\"" || scalar == "\u{2028}" || scalar == "\u{2029}")
        }))
        kept = kept.trimmingCharacters(in: .whitespaces)
        while kept.hasPrefix(".") { kept.removeFirst() }
        guard kept.count > maxCharacters else { return kept }
        let dot = kept.lastIndex(of: ".")
        let ext = dot.map { String(kept[$0...]) } ?? ""
        guard ext.count < 16 else { return String(kept.prefix(maxCharacters)) }
        return String(kept.prefix(maxCharacters - ext.count)) + ext
    }

    /// The header's value: `inline; filename="…"; filename*=UTF-8''…`.
    public var value: String {
        let ascii = String(filename.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && scalar.value >= 0x20 && scalar != "\\" ? Character(scalar) : "_"
        })
        var value = "\(kind.rawValue); filename=\"\(ascii)\""
        if ascii != filename { value += "; filename*=UTF-8''\(Self.percentEncoded(filename))" }
        return value
    }

    /// RFC 5987 `value-chars`: `attr-char` as is, every other UTF-8 byte as `%XX` (a `filename*` value).
    public static func percentEncoded(_ text: String) -> String {
        let attrChars = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~".utf8)
        var result = ""
        for byte in text.utf8 {
            if attrChars.contains(byte) {
                result.append(Character(UnicodeScalar(byte)))
            } else {
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }
}
