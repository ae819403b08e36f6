/// One entry of a Redis stream as `XRANGE` and `XREAD` return it: its id and its fields in order.
public struct RedisStreamEntry: Sendable, Equatable {
    /// A field and its value, both bytes (values carry text cut anywhere, or binary).
    public struct Field: Sendable, Equatable {
        public var name: [UInt8]
        public var value: [UInt8]

        public init(name: [UInt8], value: [UInt8]) {
            self.name = name
            self.value = value
        }

        public init(_ name: String, _ value: [UInt8]) { self.init(name: Array(name.utf8), value: value) }
        public init(_ name: String, _ value: String) { self.init(name: Array(name.utf8), value: Array(value.utf8)) }
    }

    public var id: RedisStreamID
    public var fields: [Field]

    public init(id: RedisStreamID, fields: [Field]) {
        self.id = id
        self.fields = fields
    }

    /// The first value of the field called `name`.
    public func value(_ name: String) -> [UInt8]? {
        let wanted = Array(name.utf8)
        return fields.first { $0.name == wanted }?.value
    }

    /// Reads `[id, [name, value, …]]`.
    public init(reply: RedisReply) throws(RedisError) {
        guard let parts = reply.elements, parts.count == 2, let idText = parts[0].text,
              let id = RedisStreamID(idText), let flat = parts[1].elements, flat.count.isMultiple(of: 2) else {
            throw .protocol("a stream entry is not [id, [field, value, …]]")
        }
        var fields: [Field] = []
        fields.reserveCapacity(flat.count / 2)
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].bytes, let value = flat[index + 1].bytes else {
                throw .protocol("a stream field or value is not a bulk string")
            }
            fields.append(Field(name: name, value: value))
        }
        self.init(id: id, fields: fields)
    }
}
