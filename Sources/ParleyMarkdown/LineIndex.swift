/// Line starts of a UTF-8 text, counting lines the way cmark does: a line ends at "\n", "\r\n" or a
/// lone "\r". Lines are 1-based like cmark's source positions.
struct LineIndex {
    private let text: ArraySlice<UInt8>
    /// Offset (from the slice start) of each line's first byte, plus the text's end.
    private var starts: [Int] = [0]

    init(_ text: ArraySlice<UInt8>) {
        self.text = text
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            if byte == UInt8(ascii: "\r"), index < text.endIndex, text[index] == UInt8(ascii: "\n") {
                index += 1
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                starts.append(index - text.startIndex)
            }
        }
        if starts.last != text.count { starts.append(text.count) }
    }

    /// The number of lines (a final line without an ending counts).
    var count: Int { starts.count - 1 }

    /// Offset of the first byte of `line` (1-based); `count + 1` gives the end of the text.
    func offset(ofLine line: Int) -> Int {
        starts[min(max(line, 1), starts.count) - 1]
    }

    /// Byte offsets (from the slice start) covering `lines`.
    func byteRange(_ lines: Range<Int>) -> Range<Int> {
        let lower = text.startIndex + offset(ofLine: lines.lowerBound)
        let upper = text.startIndex + offset(ofLine: lines.upperBound)
        return lower..<upper
    }

    private func bytes(ofLine line: Int) -> ArraySlice<UInt8> {
        text[byteRange(line..<(line + 1))]
    }

    /// Whether `line` holds only spaces and tabs.
    func isBlank(line: Int) -> Bool {
        bytes(ofLine: line).allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// Whether `line` is a closing code fence: up to three spaces, at least `length` of `character`,
    /// then only spaces and tabs.
    func isClosingFence(line: Int, character: UInt8, length: Int) -> Bool {
        var rest = bytes(ofLine: line)[...]
        var indent = 0
        while indent < 3, rest.first == 0x20 { rest = rest.dropFirst(); indent += 1 }
        let run = rest.prefix { $0 == character }.count
        guard run >= length else { return false }
        return rest.dropFirst(run).allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// Whether any of `lines` is a closing fence of `length` or more `character`s.
    func containsClosingFence(_ lines: Range<Int>, character: UInt8, length: Int) -> Bool {
        lines.contains { isClosingFence(line: $0, character: character, length: length) }
    }

    /// Whether any line of `text` (which starts at a line start) is a closing fence: the same rule
    /// as `isClosingFence`, scanned in place with no line table, for the bytes of each new piece.
    static func containsClosingFence(_ text: ArraySlice<UInt8>, character: UInt8, length: Int) -> Bool {
        let end = text.endIndex
        var index = text.startIndex
        while index < end {
            var indent = 0
            while indent < 3, index < end, text[index] == 0x20 { index += 1; indent += 1 }
            var run = 0
            while index < end, text[index] == character { index += 1; run += 1 }
            if run >= length {
                while index < end, text[index] == 0x20 || text[index] == 0x09 { index += 1 }
                if index == end || text[index] == 0x0A || text[index] == 0x0D { return true }
            }
            // On to the next line ("\n", "\r\n" or a lone "\r").
            while index < end, text[index] != 0x0A, text[index] != 0x0D { index += 1 }
            if index < end {
                let crlf = text[index] == 0x0D && index + 1 < end && text[index + 1] == 0x0A
                index += crlf ? 2 : 1
            }
        }
        return false
    }

    /// The class of the first character that is not a space, tab or line ending (digits are one
    /// class: `1.` and `2.` open the same list); 0 when there is none.
    func firstCharacterClass() -> UInt8 {
        guard let byte = text.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) else { return 0 }
        return Self.characterClass(byte)
    }

    /// Whether `line` starts at the margin with a character of another class than `opener`: after a
    /// blank line, such a line ends a list, quote or table.
    func startsNewKindOfBlock(line: Int, unlike opener: UInt8) -> Bool {
        guard let byte = bytes(ofLine: line).first, byte != 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D else {
            return false
        }
        return Self.characterClass(byte) != opener
    }

    private static func characterClass(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? UInt8(ascii: "0") : byte
    }

    /// Whether any line in `lines` may hold a link reference or footnote definition: after container
    /// markers ("> ", list bullets, ordered markers) it starts with "[" and has "]:". Loose on purpose:
    /// a false positive only grows the prelude.
    func containsDefinition(_ lines: Range<Int>) -> Bool {
        lines.contains { line in
            var rest = bytes(ofLine: line)[...]
            while let byte = rest.first {
                switch byte {
                case 0x20, 0x09, UInt8(ascii: ">"), UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "+"):
                    rest = rest.dropFirst()
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let digits = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
                    let after = rest.dropFirst(digits).first
                    guard after == UInt8(ascii: ".") || after == UInt8(ascii: ")") else { return false }
                    rest = rest.dropFirst(digits + 1)
                default:
                    return byte == UInt8(ascii: "[") && rest.indices.contains { index in
                        rest[index] == UInt8(ascii: "]") && index + 1 < rest.endIndex && rest[index + 1] == UInt8(ascii: ":")
                    }
                }
            }
            return false
        }
    }
}
