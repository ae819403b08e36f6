import ParleyPrimitives

/// Turns the parse events of `{"messages":[ … ]}` into one JSON value per element of `messages`
/// (`MessageExtractor` feeds it). Depth 1 is the arguments object, depth 2 the `messages` array; an
/// element is built from depth 3 down and handed out when it closes. Values past the bounds are not
/// built (nothing deeper than `maxDepth` is ever held), only counted, and the element is a fault; so is
/// an element holding a number JSON text cannot carry back (`1e999` reads as infinity).
struct ValueBuilder {
    enum Event {
        case startObject
        case startArray
        case end
        case key(String, Int)
        case string(String, Int)
        case scalar(JSON)
    }

    /// A container being built: a class, so adding to it never copies what it holds (a value in an
    /// array of values would be copied on every write while the array still refers to it).
    private final class Frame {
        let isArray: Bool
        var fields: [String: JSON] = [:]
        var items: [JSON] = []
        var key: String?

        init(isArray: Bool) {
            self.isArray = isArray
        }

        var value: JSON { isArray ? .array(items) : .object(fields) }
    }

    let limits: SurfaceLimits
    /// How deep the parse is (1 inside the arguments object).
    private var depth = 0
    /// Whether the current key at depth 1 is `messages` (and its value is being read).
    private var inMessages = false
    private var rootKey: String?
    private var stack: [Frame] = []
    private var index = 0
    private var fault: String?

    init(limits: SurfaceLimits) {
        self.limits = limits
    }

    /// Takes one event; returns an element when one was completed.
    mutating func take(_ event: Event) -> MessageExtractor.Element? {
        switch event {
        case .startObject, .startArray:
            depth += 1
            if depth == 2 {
                inMessages = rootKey == "messages" && isArray(event)
                return nil
            }
            guard depth >= 3, inMessages else { return nil }
            guard fault == nil else { return nil }
            if depth - 2 > limits.maxDepth {
                fault = "it is nested deeper than \(limits.maxDepth) levels"
                stack = []
                return nil
            }
            stack.append(Frame(isArray: isArray(event)))
            return nil
        case .end:
            defer { depth -= 1 }
            if depth == 2 { inMessages = false }
            guard depth >= 3, inMessages else { return nil }
            if fault != nil { return depth == 3 ? finishElement(nil) : nil }
            guard let frame = stack.popLast() else { return nil }
            return place(frame.value)
        case .key(let key, let length):
            if depth == 1 { rootKey = key; return nil }
            guard depth >= 3, inMessages, fault == nil else { return nil }
            if length > limits.maxStringBytes {
                fault = "it holds a key longer than \(limits.maxStringBytes) bytes"
                stack = []
                return nil
            }
            stack.last?.key = key
            return nil
        case .string(let text, let length):
            guard inMessages, depth >= 2 else { return nil }
            if fault == nil, length > limits.maxStringBytes {
                fault = "it holds a string longer than \(limits.maxStringBytes) bytes"
                stack = []
            }
            if fault != nil { return depth == 2 ? finishElement(nil) : nil }
            return place(.string(text))
        case .scalar(let value):
            guard inMessages, depth >= 2 else { return nil }
            if fault == nil, case .number(let number) = value, !number.isFinite {
                fault = "it holds a number out of range"
                stack = []
            }
            if fault != nil { return depth == 2 ? finishElement(nil) : nil }
            return place(value)
        }
    }

    private func isArray(_ event: Event) -> Bool {
        if case .startArray = event { return true }
        return false
    }

    /// Puts a finished value into its parent, or hands it out when it is an element of `messages`.
    private mutating func place(_ value: JSON) -> MessageExtractor.Element? {
        guard let parent = stack.last else { return finishElement(value) }
        if parent.isArray {
            parent.items.append(value)
        } else if let key = parent.key {
            parent.fields[key] = value
            parent.key = nil
        }
        return nil
    }

    private mutating func finishElement(_ value: JSON?) -> MessageExtractor.Element {
        defer {
            index += 1
            fault = nil
            stack = []
        }
        if let value { return .message(value) }
        return .fault(index: index, reason: fault ?? "it could not be read")
    }
}
