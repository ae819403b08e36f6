/// The component tree of a surface, from its flat adjacency list: whether it is complete (a `root`, no
/// child id that names nothing), whether it has a cycle, and how deep it goes. Iterative, so a hostile
/// chain of components cannot exhaust the stack.
struct SurfaceTree {
    enum Verdict: Equatable {
        case complete
        /// No `root`, or children that name nothing yet (a surface still arriving waits for them).
        case incomplete(String)
        /// Never valid, whatever comes later in this message's form.
        case invalid(String)
    }

    static func judge(_ references: [String: [String]], maxDepth: Int) -> Verdict {
        // Cycles, over every component (reachable or not): white 0, grey 1, black 2.
        var color: [String: Int] = [:]
        var depthOf: [String: Int] = [:]
        for start in references.keys.sorted() where color[start] == nil {
            var stack: [(id: String, next: Int)] = [(start, 0)]
            color[start] = 1
            while let top = stack.last {
                let children = references[top.id] ?? []
                if top.next < children.count {
                    stack[stack.count - 1].next += 1
                    let child = children[top.next]
                    guard references[child] != nil else { continue }
                    switch color[child] ?? 0 {
                    case 1: return .invalid("the children of '\(child.prefix(60))' form a cycle")
                    case 0:
                        color[child] = 1
                        stack.append((child, 0))
                    default: break
                    }
                } else {
                    color[top.id] = 2
                    depthOf[top.id] = 1 + (children.compactMap { depthOf[$0] }.max() ?? 0)
                    stack.removeLast()
                }
            }
        }
        guard references["root"] != nil else { return .incomplete("it has no component with id 'root'") }
        let dangling = Set(references.values.joined().filter { references[$0] == nil })
        if !dangling.isEmpty {
            return .incomplete("children name components that do not exist: \(dangling.sorted().prefix(5).joined(separator: ", "))")
        }
        if let depth = depthOf["root"], depth > maxDepth {
            return .invalid("its tree is \(depth) levels deep (at most \(maxDepth))")
        }
        return .complete
    }
}
