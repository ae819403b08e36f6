extension Int {
    /// The number with its thousands grouped by commas (`12345` → `12,345`), the same on every machine
    /// (no locale): for sizes in text a model reads, which tests compare whole.
    public var groupedDigits: String {
        let digits = Array(String(magnitude))
        var text = self < 0 ? "-" : ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}
