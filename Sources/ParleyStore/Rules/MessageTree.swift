/// The checks an imported conversation passes before anything is written, and the order it is
/// written in: ids unique, every parent present, no cycle, nothing `streaming` (no generation could
/// ever finish it), the current leaf one of the messages. Each failure names the message.
struct MessageTree {
    /// Parents before children, siblings in the archive's order.
    let ordered: [Message]

    init(_ messages: [Message], currentLeafID: String?) throws(StoreError) {
        var byID: [String: Message] = [:]
        var children: [String: [Message]] = [:]
        var roots: [Message] = []
        for message in messages {
            guard !message.id.isEmpty else { throw StoreError.invalidImport("a message has an empty 'id'") }
            guard byID.updateValue(message, forKey: message.id) == nil else {
                throw StoreError.invalidImport("two messages have the id '\(message.id)'")
            }
            guard message.status != .streaming else {
                throw StoreError.invalidImport("message '\(message.id)' is 'streaming': only finished messages can be imported")
            }
            if let parent = message.parentID {
                children[parent, default: []].append(message)
            } else {
                roots.append(message)
            }
        }
        for message in messages {
            if let parent = message.parentID, byID[parent] == nil {
                throw StoreError.invalidImport("message '\(message.id)' has the parent '\(parent)', which is not in the file")
            }
        }
        if let leaf = currentLeafID, byID[leaf] == nil {
            throw StoreError.invalidImport("'current_leaf_id' '\(leaf)' is not one of the messages")
        }
        // Every message has one parent, so whatever the walk from the roots does not reach hangs
        // from a cycle.
        var ordered: [Message] = []
        ordered.reserveCapacity(messages.count)
        var queue = roots
        var next = 0
        while next < queue.count {
            let message = queue[next]
            next += 1
            ordered.append(message)
            queue += children[message.id] ?? []
        }
        if ordered.count < messages.count {
            let reached = Set(ordered.map(\.id))
            let stuck = messages.first { !reached.contains($0.id) }?.id ?? ""
            throw StoreError.invalidImport("the parent ids of message '\(stuck)' form a cycle")
        }
        self.ordered = ordered
    }
}
