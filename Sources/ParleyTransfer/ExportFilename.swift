import Foundation
import ParleyHTTP

/// The file name of a conversation's export, made from its title: `parley-How-do-I-reverse-a-list.md`.
/// Sent as RFC 6266 `Content-Disposition`: an ASCII `filename` every client reads, and a UTF-8
/// `filename*` (RFC 5987) that keeps a title in any script. Each run of characters that is not a
/// letter, a digit or `_` becomes one `-` (dots, path separators, quotes and controls never reach the
/// name, so it cannot be hidden or climb a folder), and the name is cut at `maxTitleCharacters`. A title with nothing left (all punctuation,
/// or no ASCII letters for the fallback) uses the conversation id.
struct ExportFilename: Equatable {
    /// The ASCII name (`filename="…"`).
    let ascii: String
    /// The full name (`filename*=UTF-8''…`), equal to `ascii` for an ASCII title.
    let unicode: String

    /// Characters of the title kept in a name; longer titles are cut.
    static let maxTitleCharacters = 80

    init(title: String, id: String, fileExtension: String) {
        let asciiStem = Self.stem(title) { $0.isASCII && ($0.isLetter || $0.isNumber) }
        let unicodeStem = Self.stem(title) { $0.isLetter || $0.isNumber }
        // The id is a record id (base64url letters): safe in both.
        ascii = "parley-\(asciiStem.isEmpty ? id : asciiStem).\(fileExtension)"
        unicode = "parley-\(unicodeStem.isEmpty ? id : unicodeStem).\(fileExtension)"
    }

    /// The header's value: `attachment; filename="…"`, plus `filename*` when the names differ.
    var contentDisposition: String {
        var value = "attachment; filename=\"\(ascii)\""
        if unicode != ascii { value += "; filename*=UTF-8''\(ContentDisposition.percentEncoded(unicode))" }
        return value
    }

    /// The title's kept characters, each run of others as one `-`, none at either end.
    private static func stem(_ title: String, keeps: (Character) -> Bool) -> String {
        var result = ""
        var pendingDash = false
        for character in title {
            if keeps(character) || character == "_" {
                if pendingDash && !result.isEmpty { result.append("-") }
                pendingDash = false
                result.append(character)
                if result.count >= maxTitleCharacters { break }
            } else {
                pendingDash = true
            }
        }
        return result
    }
}
