/// One argument of a command, as the bytes sent (with their length, so `\0` and cut UTF-8 pass).
public struct RedisArgument: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ text: String) { bytes = Array(text.utf8) }
    public init<Integer: BinaryInteger>(_ number: Integer) { bytes = Array(String(number).utf8) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(integerLiteral value: Int) { self.init(value) }
}
