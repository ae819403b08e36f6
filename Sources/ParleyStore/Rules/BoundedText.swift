/// Text cut for display with two bounds: its characters (grapheme clusters) and its UTF-8 bytes.
///
/// A count of characters alone bounds nothing: one grapheme cluster can be a letter followed by
/// 450,000 combining marks (900 KB), and a "64-character" snippet of it was that big (issue 17). So
/// a character keeps at most `maxScalarsPerCharacter` of its scalars, and a cut stops where the next
/// character would pass the byte budget.
public enum BoundedText {
    /// Scalars kept of one character: enough for any real emoji sequence or stacked accents.
    public static let maxScalarsPerCharacter = 16

    /// The longest prefix of `text` of at most `characters` characters and `bytes` bytes of UTF-8
    /// (each character capped first), and whether anything of `text` was left out or capped.
    public static func prefix(_ text: Substring, characters: Int, bytes: Int) -> (text: String, cut: Bool) {
        var out = String.UnicodeScalarView()
        var used = 0
        var kept = 0
        var cut = false
        for character in text {
            guard kept < characters else { return (String(out), true) }
            let scalars = character.unicodeScalars.prefix(maxScalarsPerCharacter)
            let size = self.size(of: character)
            guard used + size <= bytes else { return (String(out), true) }
            if scalars.count < character.unicodeScalars.count { cut = true }
            out.append(contentsOf: scalars)
            used += size
            kept += 1
        }
        return (String(out), cut)
    }

    /// The UTF-8 bytes `character` takes once capped.
    public static func size(of character: Character) -> Int {
        character.unicodeScalars.prefix(maxScalarsPerCharacter).reduce(0) { $0 + UTF8.width($1) }
    }

    /// `prefix` for a whole string.
    public static func prefix(_ text: String, characters: Int, bytes: Int) -> (text: String, cut: Bool) {
        prefix(text[...], characters: characters, bytes: bytes)
    }
}
